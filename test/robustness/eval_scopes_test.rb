require_relative "../assert"

# Locals of an eval's binding read from blocks nested inside the eval'd code: every scope
# between the access and the binding must keep its env (a missing one made the VM walk
# past the end of the env chain: a segfault). Found by the panic-freedom check.

def with_block
  yield
end

test "blocks nested in eval read the binding's locals" do
  l = 1
  assert_equal 1, eval("with_block { with_block { l } }")
  assert_equal 1, with_block { eval("with_block { -> { l }.() }") }
  [7].each { |x| assert_equal 7, eval("with_block { [1].map { x }.first }") }
end

test "blocks nested in eval write the binding's locals" do
  x = 5
  eval("[1].each { [2].each { [3].each { x += 1 } } }")
  assert_equal 6, x
end

test "unbounded recursion through a lambda stored in an eval'd binding local" do
  r = [1].map do |l|
    eval("l = ->(n) { l.(n + 1) }; begin; l.(0); rescue SystemStackError => e; e.class; end")
  end
  assert_equal [SystemStackError], r
end

test "for loops inside eval in a block assign the binding's locals" do
  i = 0
  [2].each { eval("for i in [5]; end") }
  assert_equal 5, i
end

# Proc#binding of a block that captured nothing: its method kept its locals in the frame,
# which is gone once the method returns. The binding must not read it (a segfault); those
# locals are not visible through it (CRuby shows them: a known difference). A lambda
# literal keeps its method's locals on the heap, so its binding sees them (as in CRuby).
test "Proc#binding after the creating method returned" do
  obj = Object.new
  def obj.take(&b) = b
  def obj.make(some, params) = take {}
  b = obj.make(1, 2).binding
  assert_raise(NameError) { eval("some", b) }
  assert_equal 3, eval("x = 3; x", b)
  def obj.make_lambda(some, params) = -> {}
  assert_equal 3, eval("some + params", obj.make_lambda(1, 2).binding)
  def obj.make_using(some) = -> { some }
  assert_equal 1, eval("some", obj.make_using(1).binding)
end
