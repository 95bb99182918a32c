require_relative "../assert"

test "define_method and attr_* take the scope visibility in the class's own body or block" do
  k = Class.new do
    define_method(:pub) {}
    attr_reader :pub_attr
    private
    define_method(:priv) {}
    define_method(:priv_um, Kernel.instance_method(:frozen?))
    attr_accessor :priv_attr
  end
  assert_equal [:pub, :pub_attr].sort, k.public_instance_methods(false).sort
  assert_equal [:priv, :priv_attr, :priv_attr=, :priv_um].sort, k.private_instance_methods(false).sort
  other = Class.new
  Class.new do
    private
    other.send(:define_method, :from_elsewhere) {}
    other.send(:attr_reader, :attr_elsewhere)
  end
  assert_equal [:attr_elsewhere, :from_elsewhere], other.public_instance_methods(false).sort
end

test "define_method under module_function makes a module function" do
  m = Module.new do
    module_function
    define_method(:helper) { :helped }
  end
  assert_equal :helped, m.helper
  assert_true m.private_instance_methods(false).include?(:helper)
end

test "initialize and friends are private however they are defined, except in a singleton class" do
  k = Class.new do
    def public_one; end
    alias_method :initialize_copy, :public_one
    define_method(:initialize) {}
    define_method(:respond_to_missing?, Kernel.instance_method(:respond_to_missing?))
  end
  assert_equal [:initialize, :initialize_copy, :respond_to_missing?], k.private_instance_methods(false).sort
  o = Object.new
  class << o
    def initialize; end
  end
  assert_equal [:initialize], o.singleton_class.public_instance_methods(false)
end

test "class_eval and module_eval are one method" do
  assert_equal Module.instance_method(:module_eval), Module.instance_method(:class_eval)
end
