# `a, b = x, y` as a statement pushes the two values and swaps them instead of building and
# spreading an Array, and index targets with one index assign through `OptAset`. The
# values, the order of evaluation and the methods called must not change.
require_relative "../assert"

test "swapping locals, elements, ivars and globals" do
  x, y = 1, 2
  x, y = y, x
  assert_equal [2, 1], [x, y]
  a = [1, 2, 3]
  a[0], a[2] = a[2], a[0]
  assert_equal [3, 2, 1], a
  @p, $carmine_pair_q = :p, :q
  @p, $carmine_pair_q = $carmine_pair_q, @p
  assert_equal [:q, :p], [@p, $carmine_pair_q]
end

test "the statement's value, when used, is still the Array" do
  x, y = 1, 2
  r = (x, y = y, x)
  assert_equal [2, 1], r
  assert_equal [2, 1], [x, y]
end

test "targets are evaluated before the values, values left to right" do
  log = []
  a = [0, 0]
  i = 0
  a[(log << :t1; i)], a[(log << :t2; i + 1)] = (log << :v1; i = 5; :a), (log << :v2; :b)
  assert_equal [:t1, :t2, :v1, :v2], log
  assert_equal [:a, :b], a
  assert_equal 5, i
end

class PairRecorder
  attr_reader :log
  def initialize = (@log = [])
  def []=(i, v)
    @log << [i, v]
    :ignored
  end
end

test "user []= and Hash targets" do
  w = PairRecorder.new
  w[1], w[2] = :x, :y
  assert_equal [[1, :x], [2, :y]], w.log
  h = {}
  h["k"], h[:s] = 1, 2
  assert_equal({ "k" => 1, s: 2 }, h)
  assert_true h.keys.first.frozen?
end

test "a frozen Array raises FrozenError" do
  fr = [1, 2].freeze
  assert_raise(FrozenError) { fr[0], fr[1] = fr[1], fr[0] }
  assert_equal [1, 2], fr
end

test "splats and unequal counts still spread an Array" do
  a, b = *[1, 2]
  assert_equal [1, 2], [a, b]
  a, b = 1, 2, 3
  assert_equal [1, 2], [a, b]
  a, b = [3]
  assert_equal [3, nil], [a, b]
end
