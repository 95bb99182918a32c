require_relative "../assert"

module ConstTestIncludedIntoObject
  CONST_TEST_FROM_OBJECT_MODULE = :found
end
class Object
  include ConstTestIncludedIntoObject
end

module ConstTestVisibility
  PUBLIC = 1
  SECRET = 2
  private_constant :SECRET
  module Inner; end
  private_constant :Inner
  def self.secret_lexically = SECRET
end

class ConstTestScoped; end

test "A::X finds constants of modules included into Object" do
  assert_equal :found, ConstTestScoped::CONST_TEST_FROM_OBJECT_MODULE
end

test "A::X does not find Object's own constants" do
  assert_raise(NameError) { ConstTestScoped::String }
end

test "uninitialized constant messages use #name, or #inspect when anonymous" do
  named = Module.new
  def named.name = "ModuleName"
  assert_raise(NameError, "uninitialized constant ModuleName::NOPE") { named::NOPE }
  anon = Module.new
  def anon.name = nil
  def anon.inspect = "<anon>"
  assert_raise(NameError, "uninitialized constant <anon>::NOPE") { anon::NOPE }
end

test "private constants" do
  assert_equal 2, ConstTestVisibility.secret_lexically
  e = assert_raise(NameError, "private constant ConstTestVisibility::SECRET referenced") { ConstTestVisibility::SECRET }
  assert_equal ConstTestVisibility, e.receiver
  assert_nil defined?(ConstTestVisibility::SECRET)
  assert_equal "constant", defined?(ConstTestVisibility::PUBLIC)
  assert_raise(NameError) { eval("module ConstTestVisibility::Inner; end") }
end

test "a user-defined const_missing handles a private constant" do
  mod = Module.new
  mod.const_set :Foo, true
  mod.send :private_constant, :Foo
  def mod.const_missing(name) = name == :Foo ? name : super
  assert_equal :Foo, mod::Foo
end

ConstTestNumber = 123
module ConstTestModuleNotClass; end

test "reopening a constant of the wrong kind names the previous definition" do
  e = assert_raise(TypeError) { eval("class ConstTestNumber; end") }
  assert_match(/\AConstTestNumber is not a class\n.*constants_test.rb:\d+: previous definition of ConstTestNumber was here\z/, e.message)
  e = assert_raise(TypeError) { eval("class ConstTestModuleNotClass; end") }
  assert_match(/\AConstTestModuleNotClass is not a class/, e.message)
end

test "const_source_location" do
  loc = Object.const_source_location(:ConstTestNumber)
  assert_match(/constants_test.rb\z/, loc[0])
  assert_equal [], Object.const_source_location(:String)
  assert_nil Object.const_source_location(:NoSuchConstantAtAll)
  assert_equal loc, Object.const_source_location("::ConstTestNumber")
end

test "FrozenError wording for method definitions" do
  m = Module.new.freeze
  assert_raise(FrozenError, "can't modify frozen module: #{m.inspect}") { m.module_eval { def x; end } }
  o = Object.new.freeze
  assert_raise(FrozenError, "can't modify frozen object: #{o.inspect}") { def o.x; end }
end

test "modules under anonymous modules get temporary names, made permanent later" do
  a, b, c = Module.new, Module.new, Module.new
  a::B = b
  assert_match(/\A#<Module:0x\h+>::B\z/, b.name)
  a::B::C = c
  Object.const_set(:ConstTestPermanentName, a)
  assert_equal "ConstTestPermanentName::B", b.name
  assert_equal "ConstTestPermanentName::B::C", c.name
end
