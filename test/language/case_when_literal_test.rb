# `case`/`when` against Integer and Symbol literals: Fixnums, Symbols, other values through
# `===`, a value whose `==` says yes, and redefined `===` on Integer and Symbol.
require_relative "../assert"

def classify(v)
  case v
  when 1, 2 then :small
  when 3 then :three
  when :a then :sym_a
  when :b, 4 then :b_or_four
  else :other
  end
end

test "Fixnums and Symbols against literal whens" do
  assert_equal [:small, :small, :three, :b_or_four, :other], [1, 2, 3, 4, 5].map { |v| classify(v) }
  assert_equal [:sym_a, :b_or_four, :other], [:a, :b, :c].map { |v| classify(v) }
end

test "other values use ===" do
  assert_equal :small, classify(2.0)
  assert_equal :three, classify(3r)
  assert_equal :other, classify("3")
  assert_equal :other, classify(nil)
  assert_equal :other, classify(2**70)
  assert_equal :other, classify(Object.new)
end

test "a case value whose == says yes" do
  liar = Object.new
  def liar.==(o) = o == 3
  assert_equal :three, classify(liar)
end

test "the value is not evaluated again and the case result is the body's" do
  n = 0
  r = case (n += 1; 3) when 1 then :one when 3 then :three end
  assert_equal [:three, 1], [r, n]
  assert_nil(case 9 when 1 then :one end)
end

test "redefined === on Integer and Symbol is honoured" do
  out, = run_carmine(<<~RUBY)
    class Integer
      def ===(o) = o == :any
    end
    p(case :any when 5 then :int else :no end)
    p(case 5 when 5 then :int else :no end)
    class Symbol
      def ===(o) = true
    end
    p(case 42 when :x then :sym else :no end)
  RUBY
  assert_equal ":int\n:no\n:sym\n", out
end

OP_A = 1
OP_B = 2
SYM_C = :c

test "when CONSTANT with Fixnums and Symbols, and a redefined Integer#===" do
  r = [1, 2, 3, :c, 2.0].map do |v|
    case v
    when OP_A then :a
    when OP_B then :b
    when SYM_C then :c
    else :other
    end
  end
  assert_equal [:a, :b, :other, :c, :b], r
  out, = run_carmine(<<~RUBY)
    K = 5
    f = ->(v) { case v when K then :k else :no end }
    a = [f.(5), f.(6)]
    class Integer
      def ===(o) = o == 6
    end
    p a + [f.(5), f.(6)]
  RUBY
  assert_equal "[:k, :no, :no, :k]\n", out
end
