require_relative "../assert"

test "Module#set_temporary_name names an anonymous module until it gets a permanent name" do
  m = Module.new
  assert_same m, m.set_temporary_name("fake_name")
  assert_equal "fake_name", m.name
  assert_equal "fake_name", m.inspect
  m.set_temporary_name(nil)
  assert_nil m.name
  assert_raise(ArgumentError, "empty class/module name") { m.set_temporary_name("") }
  assert_raise(ArgumentError, "the temporary name must not be a constant path to avoid confusion") { m.set_temporary_name("A::B") }
  assert_raise(RuntimeError, "can't change permanent name") { Object.set_temporary_name("x") }
  outer = Module.new
  m.set_temporary_name("m")
  outer::M = m
  assert_equal "m", m.name
  n = Module.new
  n::N = Module.new
  n.set_temporary_name("n")
  assert_equal "n::N", n::N.name
end

module ConstAddedProbe
  @added = []
  def self.const_added(name) = @added << name
  def self.added = @added
  A = 1
  class B; end
  module C; end
  const_set(:D, 2)
  autoload :E, "carmine_never_loaded"
end

test "Module#const_added hears of every new constant" do
  assert_equal [:A, :B, :C, :D, :E], ConstAddedProbe.added
end

test "a class allocated where a freed class was does not inherit its instance-variable caches" do
  base = Class.new do
    def initialize(x = Object.new)
      @a = 1
      @b = x
      @c = 3
    end

    def a = @a
  end
  200.times do |i|
    obj = Class.new(base) { define_method(:foo) { i } }.new
    assert_equal [:@a, :@b, :@c], obj.instance_variables, "iteration #{i}"
    assert_equal 1, obj.a
    GC.start
  end
end
