require_relative "../assert"

# Exercises the interpreter's fast paths (fused local/immediate instructions, inline method
# and block calls, inlined Class#new) on the values where they must fall back to the general
# path: Floats, Bignum overflow, non-numeric operands, and redefined operators.

test "loop counters fall back for floats and overflow into Bignum" do
  i = 0.5
  i += 1 while i < 3
  assert_equal 3.5, i
  j = 2**62 - 3
  j += 1 while j < 2**62 + 2
  assert_equal 2**62 + 2, j
  k = 4611686018427387900
  k += 10
  assert_equal 4611686018427387910, k
end

test "fused compare and branch on non-numbers sends the operator" do
  s = "a"
  s += "b" while s.size < 4
  assert_equal "abbb", s
  n = 0
  n += 1 until n == 5
  assert_equal 5, n
  x = nil
  assert_raise(NoMethodError) { x += 1 }
end

test "redefined Integer operators are honoured by the fused paths" do
  calls = []
  Integer.class_eval do
    alias_method :__orig_lt, :<
    alias_method :__orig_plus, :+
    define_method(:<) { |o| calls << :lt; __orig_lt(o) }
    define_method(:+) { |o| calls << :plus; __orig_plus(o) }
  end
  begin
    m = 0
    m += 1 while m < 2
  ensure
    Integer.class_eval do
      alias_method :<, :__orig_lt
      alias_method :+, :__orig_plus
    end
  end
  assert_equal 2, m
  assert_equal [:lt, :plus, :lt, :plus, :lt], calls
end

test "block calls pad, truncate and splat arguments" do
  def yield_two = yield(1, 2)
  def yield_pair = yield([1, 2])
  def yield_none = yield
  assert_equal 1, yield_two { |a| a }
  assert_equal [1, 2, nil], yield_two { |a, b, c| [a, b, c] }
  assert_equal [1, 2], yield_pair { |a, b| [a, b] }
  assert_equal [1, 2], yield_pair { |a| a }
  assert_nil yield_none { |a| a }
  assert_equal 1, yield_pair { |a, | a }
  assert_equal [2, 4], [1, 2].map { |v| v * 2 }
end

test "Class#new runs initialize and returns the object whatever initialize returns" do
  klass = Class.new do
    attr_reader :args
    def initialize(a, b = 2, *rest, k: 1, &blk)
      @args = [a, b, rest, k, blk&.call]
      :ignored
    end
  end
  assert_equal [1, 2, [], 1, nil], klass.new(1).args
  assert_equal [1, 3, [4], 5, 9], klass.new(1, 3, 4, k: 5) { 9 }.args
  early = Class.new { def initialize = [1].each { return 5 } }
  assert_kind_of early, early.new
  e = assert_raise(ArgumentError) { klass.new }
  assert_equal "wrong number of arguments (given 0, expected 1+)", e.message
  e = assert_raise(ArgumentError) { Class.new.new(1) }
  assert_equal "wrong number of arguments (given 1, expected 0)", e.message
end

test "deep recursion raises SystemStackError" do
  def recurse(n) = recurse(n + 1)
  assert_raise(SystemStackError) { recurse(0) }
end

def break_as_statement_probe(a)
  while true
    while true
      break
    end
    unless a
      break
    end
    break
  end
  a
end

test "a break used as a statement leaves the operand stack as it was (locals survive a later break)" do
  assert_equal 1, break_as_statement_probe(1)
  b = 2
  r = while true
    next if b == 0
    unless b
      break
    end
    break b + 1
  end
  assert_equal [2, 3], [b, r]
end
