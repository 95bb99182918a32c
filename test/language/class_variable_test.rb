require_relative "../assert"

test "class variables at the top level raise RuntimeError" do
  assert_raise(RuntimeError, "class variable access from toplevel") { eval("@@cv_test_top") }
  assert_nil eval("defined?(@@cv_test_top)")
end

test "a class variable overtaken by an ancestor" do
  parent = Class.new
  sub = Class.new(parent)
  sub.class_variable_set(:@@cv_overtaken, :sub)
  parent.class_variable_set(:@@cv_overtaken, :parent)
  assert_raise(RuntimeError) { sub.class_variable_get(:@@cv_overtaken) }
  assert_equal :parent, parent.class_variable_get(:@@cv_overtaken)
end

class CvTestBase
  @@shared = 1
  def self.shared = @@shared
end

test "class variables in class bodies" do
  assert_equal 1, CvTestBase.shared
end
