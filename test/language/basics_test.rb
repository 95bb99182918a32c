require_relative "../assert"

def fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

test "method calls and recursion" do
  assert_equal 6765, fib(20)
end

test "blocks capture locals" do
  total = 0
  [1, 2, 3].each { |x| total += x }
  assert_equal 6, total
end

test "classes, attr_accessor and op-assign on attributes" do
  klass = Class.new do
    attr_accessor :x
    def initialize(x) = @x = x
  end
  o = klass.new(5)
  o.x += 1
  assert_equal 6, o.x
end

test "rescue binds the exception" do
  e = begin
    raise ArgumentError, "bad"
  rescue => err
    err
  end
  assert_kind_of ArgumentError, e
  assert_equal "bad", e.message
end

test "bignum promotion" do
  assert_equal "1267650600228229401496703205376", (2**100).to_s
  assert_equal 4611686018427387904, 4611686018427387903 + 1
end

test "case/when with ranges" do
  r = case 5
      when 1..3 then :low
      when 4..6 then :mid
      end
  assert_equal :mid, r
end

test "string interpolation and symbols" do
  name = "world"
  assert_equal "hello world", "hello #{name}"
  assert_equal [2, 4], (1..4).select(&:even?)
end
