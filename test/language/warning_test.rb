require_relative "../assert"

# The Warning module, and warnings going through Warning.warn.

def warning_test_capture
  old = $stderr
  out = Object.new
  def out.write(*a) = (@s ||= +"") << a.join
  def out.s = @s.to_s
  $stderr = out
  yield
  out.s
ensure
  $stderr = old
end

test "categories" do
  assert_equal false, Warning[:deprecated]
  assert_equal true, Warning[:experimental]
  assert_raise(ArgumentError, "unknown category: nope") { Warning[:nope] }
  assert_equal [:deprecated, :experimental, :performance, :strict_unused_block], Warning.categories
end

test "Kernel#warn goes through Warning.warn" do
  assert_equal "hello\n", warning_test_capture { warn "hello" }
  assert_equal "", warning_test_capture { warn "dep", category: :deprecated }
  Warning[:deprecated] = true
  assert_equal "dep\n", warning_test_capture { warn "dep", category: :deprecated }
ensure
  Warning[:deprecated] = false
end

test "deprecated separator globals warn and check their type" do
  Warning[:deprecated] = true
  old = $,
  out = warning_test_capture { $, = "-" }
  assert_match(/warning: '\$,' is deprecated/, out)
  assert_raise(TypeError, "value of $, must be String") { $, = 1 }
  assert_raise(TypeError, "value of $-0 must be String") { $-0 = 1 }
  assert_match(/variable \$= is no longer effective/, warning_test_capture { $= })
ensure
  $, = old
  Warning[:deprecated] = false
end

test "$. converts with to_int" do
  $. = 123.5
  assert_equal 123, $.
end

test "default-level parser warnings appear without -w" do
  out = warning_test_capture { eval("{a: 1, a: 2}") }
  assert_match(/key :a is duplicated and overwritten on line 1/, out)
  assert_equal "", warning_test_capture { eval("x = 1") }
end

test "read-only globals" do
  assert_raise(NameError, "$? is a read-only variable") { eval("$? = nil") }
  assert_raise(NameError, "$: is a read-only variable") { eval("$: = []") }
  assert_raise(NameError, "$-p is a read-only variable") { eval("$-p = true") }
  eval("alias $global_test_amp $&")
  assert_raise(NameError, "$global_test_amp is a read-only variable") { eval("$global_test_amp = ''") }
  assert_false $-d
end

test "warnings for uninitialized globals (verbose) and a top-level return's argument" do
  _out, err, = run_carmine("p $carmine_never_set", "-w")
  assert_match(/warning: global variable '\$carmine_never_set' not initialized/, err)
  _out, err, = run_carmine("p $carmine_never_set")
  assert_equal "", err
  _out, err, status = run_carmine("return 10")
  assert_equal 0, status.exitstatus
  assert_match(/warning: argument of top-level return is ignored/, err)
end

test "a block passed to a method that never uses it may be ignored (verbose or strict_unused_block)" do
  src = <<~RUBY
    def no_block
      1
    end
    def yields = yield
    def takes(&b) = b
    no_block { }
    no_block { }
    yields { }
    takes { }
    class K; def initialize; end; end
    K.new { }
  RUBY
  _out, err, = run_carmine(src, "-w")
  assert_equal ["warning: the block passed to 'Object#no_block' defined at", "may be ignored"], [err[/warning: .* defined at/], err[/may be ignored/]]
  assert_equal 1, err.scan("may be ignored").size
  _out, err, = run_carmine(src)
  assert_equal "", err
  _out, err, = run_carmine("Warning[:strict_unused_block] = true\n" + src)
  assert_equal 2, err.scan("may be ignored").size
end

test "methods and blocks report the line they start on" do
  def source_line_probe
    42
  end
  assert_equal __LINE__ - 3, method(:source_line_probe).source_location[1]
  pr = proc {
    1 }
  assert_equal __LINE__ - 2, pr.source_location[1]
end

test "Kernel#warn: categories, Warning.warn keywords, and Warning#warn calling super" do
  out, err, = run_carmine(<<~RUBY)
    def Warning.warn(msg, **kw) = $stdout.print("W:\#{kw.inspect}:\#{msg}")
    warn "plain"
    warn "cat", category: "experimental"
    o = Object.new
    def o.to_sym = :experimental
    warn "conv", category: o
    Warning[:deprecated] = false
    warn "off", category: :deprecated
  RUBY
  assert_equal "W:{category: nil}:plain\nW:{category: :experimental}:cat\nW:{category: :experimental}:conv\n", out
  assert_equal "", err
  _out, err, status = run_carmine("module Warning; def warn(*a, **k) = super; end; warn 'once'")
  assert_equal ["once\n", true], [err, status.success?]
  out, = run_carmine("p Warning[:deprecated]", "-w")
  assert_equal "true\n", out
end
