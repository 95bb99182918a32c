require_relative "../assert"

# Multiple assignment evaluates the targets' receivers, index arguments and
# constant scopes left to right before the right-hand side (CRuby 3.4).

class MasgnBox
  attr_accessor :x, :y
end

module MasgnScope
end

test "receivers and index arguments are evaluated before the value" do
  log = []
  t = ->(v) { log << v; v }
  o = MasgnBox.new
  h = {}
  a = []
  t.(o).x, t.(h)[t.(:k)], (t.(o).y, *t.(a)[t.(0)]) = t.(1), t.(2), [t.(3), t.(4)]
  assert_equal [o, h, :k, o, a, 0, 1, 2, 3, 4], log
  assert_equal 1, o.x
  assert_equal 3, o.y
  assert_equal({ k: 2 }, h)
  assert_equal [[4]], a
end

test "constant scopes are evaluated before the value" do
  log = []
  t = ->(v) { log << v; v }
  r = (t.(MasgnScope)::C, t.(MasgnScope)::D = t.(5), t.(6))
  assert_equal [5, 6], r
  assert_equal [MasgnScope, MasgnScope, 5, 6], log
  assert_equal 5, MasgnScope::C
  assert_equal 6, MasgnScope::D
end

test "splatted index targets" do
  a = []
  a[*[1]], a[*[2]] = 1, 2
  assert_equal [nil, 1, 2], a
end

test "the value of a multiple assignment is the right-hand side" do
  o = MasgnBox.new
  v = (o.x, o.y = 1, 2)
  assert_equal [1, 2], v
  w = (o.x, = [7, 8])
  assert_equal [7, 8], w
  assert_equal 7, o.x
end

class MasgnRespondsNot
  def respond_to?(name, include_all = false) = false
  def to_ary = raise("to_ary must not be called")
  def to_a = raise("to_a must not be called")
end

test "a multiple assignment asks a user-defined respond_to? before to_ary and to_a" do
  x = MasgnRespondsNot.new
  a, b = x
  assert_same x, a
  assert_nil b
  *c = *x
  assert_equal [x], c
end

test "*nil calls a redefined NilClass#to_a" do
  out, = run_carmine("class NilClass; def to_a = [:redefined]; end; a = *nil; p a")
  assert_equal "[:redefined]\n", out
end
