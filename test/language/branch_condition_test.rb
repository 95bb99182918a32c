# Conditions of if/unless/while/until/?: compiled as chains of branches (compile/control.rs
# `compile_cond`): `&&`, `||`, `and`, `or`, `not`, `!` and parentheses give CRuby's results
# for every truthiness of their operands, evaluate each operand at most once and in order,
# and stop at the first operand that decides.
require_relative "../assert"

def conds(a, b, c)
  r = []
  r << (a && b ? 1 : 2)
  r << (a || b ? 1 : 2)
  r << ((a && b) || c ? 1 : 2)
  r << (a && (b || c) ? 1 : 2)
  r << (!a && b ? 1 : 2)
  r << ((a; b) ? 1 : 2)
  r << (unless a || b then 1 else 2 end)
  r << (unless a && b then 1 else 2 end)
  r << (if (a and b) or not c then 1 else 2 end)
  r << (if ((a || b) && (b || c)) then 1 else 2 end)
  i = 0
  i += 1 while i < 3 && (a || i < 2)
  r << i
  j = 0
  j += 1 until j > 2 || (b && c)
  r << j
  r
end

def truthy(x) = x ? true : false

def expected(a, b, c)
  a, b, c = truthy(a), truthy(b), truthy(c)
  i = a ? 3 : 2
  j = b && c ? 0 : 3
  [a && b, a || b, (a && b) || c, a && (b || c), !a && b, b, !(a || b), !(a && b),
   (a && b) || !c, (a || b) && (b || c)].map { |t| t ? 1 : 2 } + [i, j]
end

test "conditions made of && || and parentheses decide like their values" do
  vals = [nil, false, true, 0, ""]
  vals.each do |a|
    vals.each do |b|
      vals.each { |c| assert_equal expected(a, b, c), conds(a, b, c), [a, b, c].inspect }
    end
  end
end

test "each operand of a condition runs at most once, in order, until one decides" do
  log = []
  t = ->(name, v) { log << name; v }
  log.clear
  x = (t.(:a, 1) && t.(:b, nil) && t.(:c, 1)) ? :yes : :no
  assert_equal [:no, [:a, :b]], [x, log.dup]
  log.clear
  x = (t.(:a, nil) || t.(:b, false) || t.(:c, 1)) ? :yes : :no
  assert_equal [:yes, [:a, :b, :c]], [x, log.dup]
  log.clear
  x = :no
  x = :yes if (t.(:a, 1) || t.(:b, 1)) && t.(:c, 1)
  assert_equal [:yes, [:a, :c]], [x, log.dup]
end

test "a condition's value is still the operand's value where it is used" do
  a = nil
  b = 0
  assert_equal 0, (a || b)
  assert_equal nil, (a && b)
  assert_equal false, (false || a || false)
  s = "x"
  c = (b && s) ? (b || 1) : 2
  assert_equal 0, c
end

test "! in a condition calls a redefined ! method" do
  klass = Class.new { def !; true; end }
  o = klass.new
  hit = (!o && true) ? :redefined : :builtin
  assert_equal :redefined, hit
end
