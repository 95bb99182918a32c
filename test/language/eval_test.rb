require_relative "../assert"

# eval sees and updates the locals of its caller, and a binding keeps the
# locals that an eval on it created.

test "eval reads and writes the caller's locals" do
  r = 1
  assert_equal 1, eval("r")
  eval("r = 5")
  assert_equal 5, r
end

test "eval inside a method and a block" do
  obj = Object.new
  def obj.run
    result = nil
    [1].each { eval("result = [1, 2, 3].map { |a| a * 2 }") }
    result
  end
  assert_equal [2, 4, 6], obj.run
end

test "a block in eval shadowing an eval local" do
  result = nil
  -> { eval("a = [1, 2, 3]; result = a.map { |a| a = 3 }") }.call
  assert_equal [3, 3, 3], result
end

test "Binding#eval keeps new locals for later evals" do
  b = binding
  b.eval("z = 3")
  assert_equal 3, b.eval("z")
  assert_true b.local_variable_defined?(:z)
  assert_false binding.local_variable_defined?(:z)
end

test "eval's own locals are not visible to the caller" do
  eval("fresh_local = 1")
  assert_false binding.local_variable_defined?(:fresh_local)
end

def eval_nested_block_helper = yield

test "nested blocks in an eval assign a local of the method around the eval" do
  a = 1
  eval("eval_nested_block_helper { eval_nested_block_helper { a = 2 } }")
  assert_equal 2, a
  b = 1
  eval("[1].each { [2].each { |x| b += x } }")
  assert_equal 3, b
end

def eval_fwd_target(*a, **k, &b) = [a, k, b&.call]
def eval_fwd_rest(*) = eval("eval_fwd_target(*)")
def eval_fwd_all(...) = eval("eval_fwd_target(...)")

test "eval forwards the enclosing method's anonymous parameters" do
  assert_equal [[1, 2], {}, nil], eval_fwd_rest(1, 2)
  assert_equal [[1], { b: 2 }, 3], eval_fwd_all(1, b: 2) { 3 }
end

def eval_yield_helper = eval("yield")

test "yield in an eval is valid only inside a method" do
  assert_raise(SyntaxError, /Invalid yield/) { eval("1.times { yield }") }
  assert_equal 5, eval_yield_helper { 5 }
end
