# Operators on two locals (`a + b`, `a < b`, and `while a < b` / `if a == b`) run as one fused
# instruction with Fixnum and Float fast paths (compile/peephole.rs); every other operand
# takes the method call, with CRuby's results and errors.
require_relative "../assert"

def add(a, b) = a + b
def sub(a, b) = a - b
def mul(a, b) = a * b
def lt(a, b) = a < b
def le(a, b) = a <= b
def gt(a, b) = a > b
def ge(a, b) = a >= b
def eq(a, b) = a == b
def smaller(a, b)
  if a < b then :yes else :no end
end
def count_up(a, b)
  n = 0
  while a < b
    a += 1
    n += 1
  end
  n
end
def same?(a, b)
  return :same if a == b
  :different
end

test "Fixnum operands, overflow into Bignum" do
  assert_equal 5, add(2, 3)
  assert_equal(-1, sub(2, 3))
  assert_equal 6, mul(2, 3)
  assert_equal 2**62, add(2**61, 2**61)
  assert_equal(-(2**62) - 1, sub(-(2**62), 1))
  assert_equal 2**64, mul(2**32, 2**32)
  assert_equal [true, true, false, false], [lt(1, 2), le(2, 2), gt(1, 2), ge(1, 2)]
  assert_true eq(7, 7)
  assert_false eq(7, 8)
end

test "Float and mixed operands" do
  assert_equal 3.5, add(1, 2.5)
  assert_equal 3.5, add(2.5, 1)
  assert_equal 0.25, mul(0.5, 0.5)
  assert_true lt(1, 1.5)
  assert_false gt(1.0, 1)
  assert_true eq(1, 1.0)
  assert_false lt(1, Float::NAN)
  assert_false((2**53 + 1) < 2.0**53)
  assert_true gt(2**53 + 1, 2.0**53)
end

test "other receivers call the method" do
  assert_equal "ab", add("a", "b")
  assert_equal [1, 2], add([1], [2])
  assert_equal "aaa", mul("a", 3)
  assert_true lt("a", "b")
  assert_true eq("x", "x")
  assert_false eq(:x, "x")
  assert_equal 2**70 + 1, add(2**70, 1)
  assert_equal Rational(3, 2), add(1, Rational(1, 2))
  e = assert_raise(NoMethodError) { add(nil, 1) }
  assert_match(/undefined method [`']\+' for nil/, e.message)
  e = assert_raise(ArgumentError) { lt(1, "a") }
  assert_equal "comparison of Integer with String failed", e.message
  assert_raise(TypeError) { add(1, "a") }
end

test "compare-and-branch" do
  assert_equal :yes, smaller(1, 2)
  assert_equal :no, smaller(2, 1)
  assert_equal :yes, smaller(1.5, 2)
  assert_equal :yes, smaller("a", "b")
  assert_equal 10, count_up(0, 10)
  assert_equal 0, count_up(10, 0)
  assert_equal 3, count_up(0.5, 3)
  assert_equal :same, same?(3, 3)
  assert_equal :different, same?(3, 4)
  assert_equal :same, same?("s", "s")
  assert_equal :same, same?(nil, nil)
end

class Money
  attr_reader :cents
  def initialize(c) = @cents = c
  def <(other) = cents < other.cents
  def ==(other) = other.is_a?(Money) && cents == other.cents
end

test "user-defined operators" do
  assert_equal :yes, smaller(Money.new(1), Money.new(2))
  assert_equal :same, same?(Money.new(5), Money.new(5))
  assert_equal :different, same?(Money.new(5), 5)
end

test "a redefined Integer operator is called" do
  class Integer
    alias_method :fused_test_orig_lt, :<
    alias_method :fused_test_orig_plus, :+
    def <(o) = :redefined_lt
    def +(o) = :redefined_plus
  end
  begin
    assert_equal :redefined_lt, lt(1, 2)
    assert_equal :redefined_plus, add(1, 2)
    assert_equal :yes, smaller(5, 1)
  ensure
    class Integer
      alias_method :<, :fused_test_orig_lt
      alias_method :+, :fused_test_orig_plus
    end
  end
  assert_equal :no, smaller(5, 1)
  assert_equal 3, add(1, 2)
end

# A local and a negative Integer literal are not fused (the fused instructions hold only
# non-negative immediates); a local and a non-negative one are. Both give CRuby's results.
def minus_one(a) = a + -1
def below_minus_two?(a) = a < -2
def at_least_zero?(a) = a >= 0
def count_down(a)
  n = 0
  while a > -3
    a -= 1
    n += 1
  end
  n
end
def step_back(a)
  a += -2
  a
end

test "negative and non-negative immediates" do
  assert_equal 4, minus_one(5)
  assert_equal(-1.5, minus_one(-0.5))
  assert_equal 2**62 - 1, minus_one(2**62)
  assert_equal(-2**62 - 1, minus_one(-2**62))
  assert_equal [true, false, false], [-3, -2, 0].map { |x| below_minus_two?(x) }
  assert_equal [false, true, true], [-1, 0, 2**64].map { |x| at_least_zero?(x) }
  assert_equal 5, count_down(2)
  assert_equal 2, count_down(-1.5)
  assert_equal 3, step_back(5)
  assert_raise(TypeError) { step_back("s") }
  assert_equal 2**63 - 2, step_back(2**63)
end
