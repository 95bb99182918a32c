require_relative "../assert"

module DefinedTest
  def self.raises = raise("boom")
  def self.record = $defined_test_ran = true
end

test "defined? on array literals" do
  assert_equal "expression", defined?([Object, Array])
  assert_nil defined?([NoSuchConstantForDefined, Array])
  assert_nil defined?([*NoSuchConstantForDefined])
end

test "defined? on scoped constant assignments" do
  assert_equal "assignment", defined?(Object::DefinedTestConst += 1)
  assert_equal "assignment", defined?(Object::DefinedTestConst ||= 1)
  assert_equal "assignment", defined?(Object::DefinedTestConst &&= 1)
end

test "an exception while evaluating the receiver gives nil" do
  assert_nil defined?(DefinedTest.raises.foo)
  assert_nil defined?(not DefinedTest.raises)
end

test "defined? in a void context evaluates nothing" do
  $defined_test_ran = false
  defined?(DefinedTest.record / 2)
  assert_false $defined_test_ran
end
