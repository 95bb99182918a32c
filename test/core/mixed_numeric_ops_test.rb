# Float with Integer operands (either side) in the dispatch loop's operator fast path, and
# `when SomeClass` through Module#===: results as CRuby computes them.
require_relative "../assert"

test "arithmetic of a Float and an Integer, either order" do
  assert_equal 3.5, 1 + 2.5
  assert_equal 3.5, 2.5 + 1
  assert_equal 2.5, 3 - 0.5
  assert_equal(-2.5, 0.5 - 3)
  assert_equal 3.0, 2 * 1.5
  assert_equal 0.5, 1 / 2.0
  assert_equal 0.5, 2.0 / 4
  assert_equal Float::INFINITY, 1 / 0.0
  assert_equal Float::INFINITY, 1.0 / 0
  assert_true (0 / 0.0).nan?
  assert_equal 4.611686018427388e18, 4611686018427387903 + 1.0
  assert_raise(ZeroDivisionError) { 1.5 % 0 }
  assert_raise(ZeroDivisionError) { 3 % 0.0 }
  assert_equal 2.0, 7 % 2.5
end

test "comparison of a Float and an Integer is exact" do
  assert_true 1 < 1.5
  assert_false 1.5 < 1
  assert_true 2 <= 2.0
  assert_true 2.0 >= 2
  # Beyond 2**53 the Integer is not rounded to a Float first.
  assert_false((2**53 + 1) < 2.0**53)
  assert_true((2**53 + 1) > 2.0**53)
  assert_false 1 < Float::NAN
  assert_false Float::NAN >= 1
end

test "a redefined operator is called, not the fast path" do
  Integer.class_eval do
    alias_method :__plus_before_test, :+
    define_method(:+) { |o| o.is_a?(Float) ? :redefined : __plus_before_test(o) }
  end
  begin
    assert_equal :redefined, 1 + 2.0
  ensure
    Integer.class_eval { alias_method :+, :__plus_before_test }
  end
  assert_equal 3.0, 1 + 2.0
end

def case_kind(x) = case x when Integer then :i when String, Symbol then :s when Comparable then :c else :o end

class CaseEqPattern
  def self.===(o) = o == 42
end

test "when with classes, and a class with its own ===" do
  assert_equal [:i, :s, :s, :c, :o], [1, "a", :a, 1.5, nil].map { |x| case_kind(x) }
  assert_equal :yes, (case 42 when CaseEqPattern then :yes else :no end)
  assert_equal :no, (case 41 when CaseEqPattern then :yes else :no end)
end
