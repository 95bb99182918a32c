require_relative "../assert"
require_relative "../support/process"

test "Integer() tries to_str after to_int, and names a nil to_i result" do
  o = Object.new
  def o.to_str = "12"
  assert_equal 12, Integer(o)
  n = Object.new
  def n.to_i = nil
  e = assert_raise(TypeError) { Integer(n) }
  assert_equal "can't convert Object into Integer (Object#to_i gives nil)", e.message
end

test "String() finds to_s as rb_check_funcall does" do
  o = Object.new
  def o.respond_to?(m, priv = false) = m == :to_s ? false : super
  assert_raise(TypeError) { String(o) }
  mm = BasicObject.new
  def mm.method_missing(m, *a) = m == :to_s ? "via mm" : super
  def mm.respond_to_missing?(m, priv = false) = m == :to_s
  assert_equal "via mm", String(mm)
end

test "Rational() with Complex arguments and odd converters" do
  e = assert_raise(RangeError) { Rational(Complex(1, 2)) }
  assert_equal "can't convert 1+2i into Rational", e.message
  assert_equal Complex(2r/5, -1r/5), Rational(1, Complex(2, 1))
  o = Object.new
  def o.to_int = raise(NoMethodError)
  assert_raise(TypeError) { Rational(o) }
  r = Object.new
  def r.to_r = []
  e = assert_raise(TypeError) { Rational(r) }
  assert_equal "can't convert Object into Rational (Object#to_r gives Array)", e.message
end

test "caller with a nil length; clone(freeze:) names the class" do
  assert_equal caller(0).size, caller(0, nil).size
  e = assert_raise(ArgumentError) { Object.new.clone(freeze: 1) }
  assert_equal "unexpected value for freeze: Integer", e.message
end

test "chomp and chop exist in -n programs only" do
  assert !Kernel.private_instance_methods.include?(:chomp)
  out = IO.popen([Support.carmine_path, "-n", "-e", "chomp; p $_; chop; p $_"], "r+") do |io|
    io.write "abc\r\n"
    io.close_write
    io.read
  end
  assert_equal "\"abc\"\n\"ab\"\n", out
end

test "respond_to? leaves protected methods to include_all and respond_to_missing?" do
  c = Class.new do
    def pub; end
    protected def pro; end
    def respond_to_missing?(m, priv) = m == :pro && !priv ? :yes : false
  end
  o = c.new
  assert_equal true, o.respond_to?(:pub)
  assert_equal true, o.respond_to?(:pro)
  b = Class.new(BasicObject) do
    define_method(:respond_to?, ::Kernel.instance_method(:respond_to?))
    protected def pro; end
  end
  assert_equal false, b.new.respond_to?(:pro)
  assert_equal true, b.new.respond_to?(:pro, true)
  assert_equal false, b.new.respond_to?(:nothing)
end

test "singleton_methods includes extended modules and superclasses' singleton methods" do
  a = Class.new { def self.a_pub; end }
  b = Class.new(a) { def self.b_pub; end }
  m = Module.new { def m_pub; end }
  b.extend(m)
  assert_equal %i[a_pub b_pub m_pub], b.singleton_methods.sort
  assert_equal %i[b_pub], b.singleton_methods(false)
end

test "Kernel#select is IO.select" do
  assert Kernel.private_instance_methods(false).include?(:select)
  IO.pipe do |r, w|
    assert_nil select([r], [], [], 0)
    w.write "x"
    assert_equal [[r], [], []], select([r], [], [], 0)
  end
end

test "private_methods(false) and friends list the singleton class and the class, not the ancestors" do
  c = Class.new { private def own_pri; end }
  d = Class.new(c) { private def d_pri; end; protected def d_pro; end; def d_pub; end }
  o = d.new
  def o.single; end
  assert_equal %i[d_pri], o.private_methods(false)
  assert_equal %i[d_pro], o.protected_methods(false)
  assert_equal %i[d_pub single], o.public_methods(false).sort
  assert o.private_methods.include?(:own_pri)
end

test "singleton_method finds methods of modules the singleton class includes" do
  m = Module.new { def foo = :foo }
  o = Object.new
  o.extend(m)
  assert_equal :foo, o.singleton_method(:foo).call
end

test "lambda needs a literal block or a lambda; trace_var needs a command" do
  e = assert_raise(ArgumentError) { lambda(&proc {}) }
  assert_equal "the lambda method requires a literal block", e.message
  l = lambda { 1 }
  assert_same l, lambda(&l)
  assert_raise(ArgumentError) { trace_var(:$kernel_leftovers_gv) }
end

test "syscall calls the system" do
  assert_equal Process.pid, syscall(39) if RUBY_PLATFORM.start_with?("x86_64")
  assert Kernel.private_instance_methods(false).include?(:syscall)
end

module KernelLeftoversAutoload
  autoload :Later, "/nonexistent/kernel_leftovers_later.rb"
  def self.pending = autoload?(:Later)
end

test "Kernel#autoload? looks in the caller's lexical scope; Module#autoload? in ancestors" do
  assert_equal "/nonexistent/kernel_leftovers_later.rb", KernelLeftoversAutoload.pending
  c = Class.new { include KernelLeftoversAutoload }
  assert_equal "/nonexistent/kernel_leftovers_later.rb", c.autoload?(:Later)
  assert_nil c.autoload?(:Later, false)
end

test "Complex() with non-real Numerics and exception: false" do
  unreal = Class.new(Numeric) { def real? = false; def +(o) = :sum; def *(o) = self }.new
  assert_same unreal, Complex(unreal)
  assert_equal :sum, Complex(unreal, 1)
  assert_nil Complex(:sym, exception: false)
  e = assert_raise(TypeError) { Complex(:sym, 0, exception: false) }
  assert_equal "not a real", e.message
  assert_raise(Encoding::CompatibilityError) { Complex("1".encode("UTF-16LE"), exception: false) }
end

test "Float(obj) is obj.to_f itself" do
  nan = 0.0 / 0.0
  o = Object.new
  o.define_singleton_method(:to_f) { nan }
  assert_same nan, Float(o)
  bad = Object.new
  def bad.to_f = "1"
  assert_raise(TypeError) { Float(bad) }
end

test "Object#=~ answers nil (kept for the 3.1 standard library, which undefines it by name)" do
  assert_nil(Object.new =~ 1)
  assert_nil(nil =~ /a/)
  assert_true(Object.new !~ 1)
  require "delegate"
  assert_equal 3, SimpleDelegator.new([1, 2, 3]).size
end

test "puts goes through $stdout.puts when that is not IO's own; p flushes a File $stdout" do
  got = []
  out = Object.new
  out.define_singleton_method(:puts) { |*a| got << a }
  out.define_singleton_method(:write) { |*a| }
  old = $stdout
  begin
    $stdout = out
    puts :arg
  ensure
    $stdout = old
  end
  assert_equal [[:arg]], got
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/kernel_leftovers_p_#{Process.pid}"
  File.open(path, "w") do |f|
    begin
      $stdout = f
      p "abc"
    ensure
      $stdout = old
    end
    assert_equal "\"abc\"\n", File.read(path)
  end
ensure
  File.delete(path) if path && File.exist?(path)
end

test "define_singleton_method refuses another object's singleton method; backtick converts once" do
  a = Object.new
  def a.only_mine = :a
  um = a.method(:only_mine).unbind
  e = assert_raise(TypeError) { Object.new.define_singleton_method(:x, um) }
  assert_equal "can't bind singleton method to a different class", e.message
  cmd = Object.new
  calls = 0
  cmd.define_singleton_method(:to_str) { calls += 1; "echo hi" }
  assert_equal "hi\n", Kernel.send(:`, cmd)
  assert_equal 1, calls
end

test "__dir__ in eval with a file name is that name's directory" do
  assert_equal ".", eval("__dir__", nil, "foo.rb")
  assert_equal "foo", eval("__dir__", nil, "foo/bar.rb")
  assert_equal File.dirname(File.realpath(__FILE__)), __dir__
end

test "a Method of an alias in a subclass equals the original's, with equal hashes" do
  a = Class.new { def pub = :a }
  b = Class.new(a) { alias_method :al, :pub }
  o = b.new
  assert_equal o.method(:pub), o.method(:al)
  assert_equal o.method(:pub).hash, o.method(:al).hash
  assert_not_equal b.new.method(:pub), o.method(:al)
end

test "raise: extra keywords go to exception, no cycles of causes, an empty message without $!" do
  data_error = Class.new(StandardError) { attr_reader :data; def initialize(data) = @data = data }
  e = assert_raise(data_error) { raise data_error, data: 42 }
  assert_equal({ data: 42 }, e.data)
  c = StandardError.new("c")
  e = assert_raise(StandardError) { raise c, cause: c }
  assert_nil e.cause
  e1 = nil
  begin
    begin
      raise "one"
    rescue => e1
      begin
        raise "two"
      rescue
        raise e1
      end
    end
  rescue => got
    assert_same e1, got
    assert_nil got.cause
  end
  e = assert_raise(RuntimeError) { raise }
  assert_equal "", e.message
end

test "method takes what respond_to_missing?(name, true) answers; public_method only public ones" do
  c = Class.new do
    def respond_to_missing?(m, priv) = m == :ghost && priv
    def method_missing(m, *a) = m == :ghost ? :boo : super
  end
  o = c.new
  assert_equal :boo, o.method(:ghost).call
  assert_raise(NameError) { o.public_method(:ghost) }
end
