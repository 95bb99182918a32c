require_relative "../assert"

module SingletonTest
  class C
    class << self
      class << self
        def ham = :iberico
      end
    end
  end
  class D < C; end
end

test "a method of the superclass's meta-metaclass is found on a metaclass" do
  assert_equal :iberico, SingletonTest::D.singleton_class.ham
end

test "clone keeps the constants of the singleton class" do
  o = Object.new
  class << o
    CONST_IN_SINGLETON = 5
  end
  c = o.clone
  assert_equal 5, c.singleton_class.const_get(:CONST_IN_SINGLETON)
end

test "yield in a singleton class body is a SyntaxError" do
  assert_raise(SyntaxError) { eval("def yield_in_sclass; class << self; yield; end; end") }
end

test "an object's singleton class responds to its class's class methods" do
  klass = Class.new do
    def self.a_class_method = :cm
    def an_instance_method; end
  end
  sc = klass.new.singleton_class
  assert_equal :cm, sc.a_class_method
  assert_false sc.respond_to?(:an_instance_method)
  assert_equal Class, sc.class
end

test "freezing an object freezes its singleton class" do
  o = Object.new
  sc = o.singleton_class
  assert_false sc.frozen?
  o.freeze
  assert_true sc.frozen?
  c = Class.new
  c.freeze
  assert_raise(FrozenError, "can't modify frozen Class: #{c}") { def c.foo; end }
end

test "frozen string literals with equal content are one object; ASCII symbols inspect as US-ASCII" do
  out, = run_carmine("# frozen_string_literal: true\na = 'abc'\nb = \"abc\"\np a.equal?(b)\n")
  assert_equal "true\n", out
  assert_equal ':"\\x00"', :"\0".inspect
end
