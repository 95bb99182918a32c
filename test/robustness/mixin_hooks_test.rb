require_relative "../assert"

# Module#append_features, #prepend_features and #extend_object are reachable with any
# argument (send, or an UnboundMethod rebound to a Class): the argument and receiver types
# are checked like CRuby's ensure_includable, instead of reading a non-module as a module
# body (an assertion failure in a debug build). Found by the panic-freedom check on
# ruby/spec core/module/append_features_spec.rb.

AF = Module.instance_method(:append_features)
PF = Module.instance_method(:prepend_features)
EO = Module.instance_method(:extend_object)

test "the target must be a class or a module" do
  assert_raise(TypeError, "wrong argument type Object (expected Class)") { AF.bind(Class.new).call(Object.new) }
  assert_raise(TypeError, "wrong argument type Object (expected Class)") { AF.bind(Module.new).call(Object.new) }
  assert_raise(TypeError, "wrong argument type Integer (expected Class)") { Module.new.send(:append_features, 1) }
  assert_raise(TypeError, "wrong argument type nil (expected Class)") { PF.bind(Module.new).call(nil) }
  assert_raise(TypeError, "wrong argument type Object (expected Class)") { PF.bind(Class.new).call(Object.new) }
end

test "the receiver must be a module" do
  assert_raise(TypeError, "wrong argument type Class (expected Module)") { AF.bind(Class.new).call(Module.new) }
  assert_raise(TypeError, "wrong argument type Class (expected Module)") { PF.bind(Class.new).call(Class.new) }
  assert_raise(TypeError, "wrong argument type Class (expected Module)") { EO.bind(Class.new).call(Object.new) }
end

test "frozen targets and objects without singleton classes" do
  assert_raise(FrozenError) { AF.bind(Class.new).call(Module.new.freeze) }
  assert_raise(FrozenError) { EO.bind(Module.new).call(Object.new.freeze) }
  assert_raise(TypeError, "can't define singleton") { EO.bind(Module.new).call(1) }
end

test "the hooks still mix in" do
  m = Module.new { def hi = :hi }
  c = Class.new
  m.send(:append_features, c)
  assert_equal :hi, c.new.hi
  o = Object.new
  m.send(:extend_object, o)
  assert_equal :hi, o.hi
  assert_raise(ArgumentError, "cyclic include detected") { Comparable.send(:append_features, Comparable) }
end
