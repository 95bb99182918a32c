require_relative "../assert"

def block_args_test_yield(arg) = yield(arg)

test "a lone positional parameter with keywords does not auto-splat" do
  assert_equal [[1, 2], {}], block_args_test_yield([1, 2]) { |a, **k| [a, k] }
  assert_equal [[1, 2], :b], block_args_test_yield([1, 2]) { |a, b: :b| [a, b] }
  assert_equal [[{ "a" => 1 }], {}], block_args_test_yield([{ "a" => 1 }]) { |a = nil, **k| [a, k] }
end

test "several parameters or a trailing comma auto-splat; a rest with keywords does not" do
  assert_equal [1, 2, :k], block_args_test_yield([1, 2]) { |a, b, k: :k| [a, b, k] }
  assert_equal [[[1, 2]], {}], block_args_test_yield([1, 2]) { |*a, **kw| [a, kw] }
  assert_equal 1, block_args_test_yield([1, 2]) { |a, | a }
end

test "auto-splat asks respond_to? for to_ary" do
  obj = Object.new
  def obj.respond_to?(name, priv = false) = name == :to_ary ? true : super
  def obj.method_missing(name, *args) = name == :to_ary ? [1, 2] : super
  assert_equal [1, 2, nil], block_args_test_yield(obj) { |a, b, c| [a, b, c] }
end
