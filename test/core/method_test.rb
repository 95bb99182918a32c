require_relative "../assert"

class MethodTestBase
  def plain(a, b = 1, *rest, k:, o: 2, **opts, &blk); end
  def original; :original; end
  def anon_rest(*); end
  def anon_kwrest(**); end
  def anon_block(&); end
  def forward(...); end
end

class MethodTestSub < MethodTestBase
  alias_method :renamed, :original
end

test "Method#inspect shows receiver, owner, original name, parameters and location (Ruby 3.4)" do
  m = MethodTestBase.new.method(:plain)
  line = MethodTestBase.instance_method(:plain).source_location[1]
  assert_equal "#<Method: MethodTestBase#plain(a, b=..., *rest, k:, o: ..., **opts, &blk) #{__FILE__}:#{line}>", m.inspect
  assert_equal "#<Method: Integer#+(_)>", 1.method(:+).inspect
  assert_match(/\A#<Method: MethodTestSub\(MethodTestBase\)#renamed\(original\)\(\) /, MethodTestSub.new.method(:renamed).inspect)
  assert_match(/\A#<UnboundMethod: MethodTestBase#renamed\(original\)\(\) /, MethodTestSub.new.method(:renamed).unbind.inspect)
  assert_match(/\A#<Method: #<Class:String>\(Module\)#include\(/, String.method(:include).inspect)
  o = Object.new
  def o.single; end
  assert_match(/\A#<Method: #<Object:0x\h+>\.single\(\) /, o.method(:single).inspect)
  assert_match(/#forward\(\.\.\.\) /, MethodTestBase.new.method(:forward).inspect)
  assert_match(/#anon_rest\(\*\) /, MethodTestBase.new.method(:anon_rest).inspect)
end

test "parameters name anonymous *, ** and &; a proc's destructured parameter is [:opt, nil]" do
  b = MethodTestBase.new
  assert_equal [[:rest, :*]], b.method(:anon_rest).parameters
  assert_equal [[:keyrest, :**]], b.method(:anon_kwrest).parameters
  assert_equal [[:block, :&]], b.method(:anon_block).parameters
  assert_equal [[:rest, :*], [:keyrest, :**], [:block, :&]], b.method(:forward).parameters
  assert_equal [[:opt, nil]], proc { |(a)| }.parameters
  assert_equal [[:req]], ->((a)) {}.parameters
  assert_equal [[:opt, :x]], proc { |x, | }.parameters
  rtm = Object.new
  def rtm.respond_to_missing?(name, priv) = name == :ghost
  assert_equal [[:rest]], rtm.method(:ghost).parameters
end

test "Method and UnboundMethod dup and clone" do
  m = Object.new.method(:to_s)
  m.instance_variable_set(:@tag, 1)
  d = m.dup
  assert_equal m, d
  assert_false m.equal?(d)
  assert_equal [:@tag], d.instance_variables
  m.freeze
  assert_true m.clone.frozen?
  assert_false m.dup.frozen?
  u = Kernel.instance_method(:is_a?)
  assert_equal u, u.clone
end

module MethodTestInherited
  module A
    private def derp(x) = "A"
  end
  module B
    private def derp = "B" + super("x")
  end
  class C
    include A
    include B
    public :derp
    alias_method :meow, :derp
  end
end

test "owner and super_method after a visibility change and an alias of an inherited method" do
  c = MethodTestInherited::C.new
  assert_equal "BA", c.derp
  assert_equal MethodTestInherited::C, c.method(:derp).owner
  assert_equal MethodTestInherited::A, c.method(:derp).super_method.owner
  assert_equal MethodTestInherited::A, c.method(:meow).super_method.owner
  assert_equal MethodTestInherited::C, MethodTestInherited::C.instance_method(:derp).owner
end

test "Method#== sees through an alias of a builtin in a singleton class" do
  c = Class.new { class << self; alias_method :n, :new; end }
  assert_equal c.method(:new), c.method(:n)
  assert_equal c.method(:n).hash, c.method(:new).hash
end

module MethodTestMod
  def greet = super
end

class MethodTestPlain
  def greet = :plain
end

test "bind: a singleton method only to its object; a module method's super from the object's class" do
  a = Object.new
  def a.only = :only
  um = a.method(:only).unbind
  assert_equal :only, um.bind_call(a)
  assert_raise(TypeError, "singleton method called for a different object") { um.bind(Object.new) }
  assert_equal :plain, MethodTestMod.instance_method(:greet).bind_call(MethodTestPlain.new)
  probe = Module.new { def greet = defined?(super) ? super : :none }
  assert_equal :plain, probe.instance_method(:greet).bind_call(MethodTestPlain.new)
  assert_equal :none, probe.instance_method(:greet).bind_call(Object.new)
end

test "curry checks a lambda's or method's arity against its minimum and maximum" do
  assert_raise(ArgumentError) { ->(a, b = nil) {}.curry(3) }
  assert_raise(ArgumentError) { ->(a, &b) {}.curry(2) }
  assert_raise(ArgumentError) { 1.method(:+).curry(2) }
  assert_kind_of Proc, ->(a, b, *c) {}.curry(5)
  assert_equal 3, 1.method(:+).curry[2]
  assert_equal [[:rest]], ->(a, b) {}.curry.parameters
end

def method_test_for_proc = :m

test "a Method's proc: source_location and binding of the method" do
  m = method(:method_test_for_proc)
  assert_equal m.source_location, m.to_proc.source_location
  assert_nil [].method(:<<).to_proc.source_location
  assert_same self, m.to_proc.binding.receiver
end
