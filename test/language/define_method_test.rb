require_relative "../assert"

# Methods defined from blocks and from other methods: which block, self and super they see.

class DmBlockGiven
  define_method(:given) { block_given? }
  def outer
    self.class.send(:define_method, :inner) { block_given? ? yield : :none }
  end
end

test "block_given? and yield in a define_method body see the defining scope, not the caller" do
  o = DmBlockGiven.new
  assert_false(o.given { })
  o.outer { :from_outer }
  assert_equal :from_outer, o.inner { :from_caller }
end

test "binding.eval sees the method's block" do
  def dm_binding_yield
    binding.eval("yield")
  end
  assert_equal 5, dm_binding_yield { 5 }
  def dm_binding_proc_yield
    binding.eval("proc { yield }").call
  end
  assert_equal 6, dm_binding_proc_yield { 6 }
end

class DmSuperA
  def foo = [:a_foo]
  def bar = [:a_bar]
end
class DmSuperB < DmSuperA
  def foo = [:b_foo] + super
end
class DmSuperC < DmSuperB
  define_method(:bar, DmSuperB.instance_method(:foo))
end

test "super in a method copied with define_method searches above the new owner, by the original name" do
  assert_equal [:b_foo, :b_foo, :a_foo], DmSuperC.new.bar
end

test "super in define_method on a singleton class" do
  o = DmSuperA.new
  o.singleton_class.define_method(:foo) { [:single] + super() }
  assert_equal [:single, :a_foo], o.foo
end

test "super at top level raises NoMethodError" do
  e = assert_raise(NoMethodError) { eval("super") }
  assert_match(/super called outside of method/, e.message)
end

module DmPrep
  def m = [:m] + super
end
class DmPrepA
  prepend DmPrep
  def m = [:a]
end
class DmPrepB < DmPrepA
  prepend DmPrep
  def m = [:b] + super
end

test "prepending a module the superclass already prepends puts it in both places" do
  assert_equal [DmPrep, DmPrepB, DmPrep, DmPrepA], DmPrepB.ancestors.take(4)
  assert_equal [:m, :b, :m, :a], DmPrepB.new.m
end

module DmListed
  def listed_from_module = 1
end
class DmListing
  prepend DmListed
  def own = 1
end

test "instance_methods(false) lists the class's own methods, not a prepended module's" do
  assert_equal [:own], DmListing.instance_methods(false)
  assert_equal [:own], DmListing.public_instance_methods(false)
end
