require_relative "../assert"

test "construction, freezing and copying" do
  assert_equal true, (1..2).frozen?
  assert_equal true, Range.new(1, 2).frozen?
  assert_equal false, Class.new(Range).new(1, 2).frozen?
  assert_equal false, Range.allocate.frozen?
  assert_equal false, (1..2).dup.frozen?
  assert_equal true, (1..2).clone.frozen?
  assert_equal (1...3), (1...3).dup
  assert_raise(ArgumentError, "bad value for range") { Range.new(1, Object.new) }
  assert_raise(FrozenError) { (0..1).send(:initialize, 1, 3) }
  r = Range.allocate
  r.send(:initialize, 1, 2, true)
  assert_equal (1...2), r
  assert_raise(FrozenError) { r.send(:initialize, 1, 2) }
  sub = Class.new(Range).new(1, 2)
  assert_raise(NameError, "'initialize' called twice") { sub.send(:initialize, 1, 2) }
  assert_equal true, Range.private_instance_methods(false).include?(:initialize)
end

test "inspect and to_s" do
  assert_equal "1..", (1..).inspect
  assert_equal "..1", (..1).inspect
  assert_equal "nil..nil", (nil..nil).inspect
  assert_equal "1...", (1...nil).to_s
  a = []
  r = (a..a)
  a << r
  assert_equal "[(... .. ...)]..[(... .. ...)]", r.inspect
end

test "include?, cover? and ===" do
  assert_equal false, ("a".."c").include?("bc")
  assert_equal true, ("a".."c").cover?("bc")
  assert_equal true, ("a".."ab").include?("aa")
  assert_raise(TypeError, "cannot determine inclusion in beginless/endless ranges") { (.."aa").include?("a") }
  assert_raise(TypeError) { ("aa"..).include?("a") }
  assert_equal true, (nil..nil).include?(1)
  assert_equal true, (1..3).cover?(1...4)
  assert_equal false, (1...3).cover?(1..3)
  assert_equal false, (1..).cover?(..3)
  assert_equal true, (1..5) === 2.5
  assert_equal false, (1..5) === "x"
end

test "overlap?" do
  assert_equal true, (0..2).overlap?(1..3)
  assert_equal false, (0...2).overlap?(2..4)
  assert_equal false, (2..0).overlap?(1..3)
  assert_equal true, (..0).overlap?(..2)
  assert_equal false, (0..2).overlap?("a".."d")
  assert_raise(TypeError, "wrong argument type Integer (expected Range)") { (0..2).overlap?(1) }
end

test "size, count, min, max, minmax, last, sum" do
  assert_equal 15, (1...16).size
  assert_equal Float::INFINITY, (1..).size
  assert_equal nil, ("a".."z").size
  assert_raise(TypeError, "can't iterate from Float") { (1.0..2.0).size }
  assert_raise(TypeError, "can't iterate from NilClass") { (..1).size }
  assert_equal Float::INFINITY, (..1).count
  assert_equal 1.0, (1.0...).min
  assert_equal 9, (1...10).max
  assert_raise(TypeError, "cannot exclude non Integer end value") { (1...2.5).max }
  assert_raise(RangeError, "cannot get the maximum of endless range") { (1..).minmax }
  assert_equal [18, 19, 20], (10..20).last(3)
  assert_equal [2**64 - 1], (0...2**64).last(1)
  assert_equal (2**64) * (2**64 + 1) / 2, (1..2**64).sum
  assert_equal 10.0, (1..4).sum(0.0)
end

test "each over integers, symbols and strings" do
  big = 2**62
  assert_equal [big - 1, big, big + 1], (big - 1..big + 1).to_a
  assert_equal [:aa, :ab], (:aa...:ac).to_a
  assert_equal ["y", "z", "aa"], ("y"..).first(3)
  assert_raise(TypeError, "can't iterate from Float") { (1.0..2.0).each {} }
  assert_raise(TypeError, "can't iterate from NilClass") { (..2).each {} }
  assert_raise(RangeError, "cannot convert endless range to an array") { (1..).to_a }
end

test "reverse_each" do
  assert_equal [2, 1], (1...3).reverse_each.to_a
  assert_equal [5, 4, 3], (..5).reverse_each.take(3)
  assert_equal ["D", "C", "B", "A"], ("A".."D").reverse_each.to_a
  assert_raise(TypeError, "can't iterate from NilClass") { (1..).reverse_each {} }
  assert_equal 3, (1...3.3).reverse_each.size
end

test "step: numeric, backwards, non-numeric with +" do
  assert_equal [-2.0, -0.5, 1.0], (-2..2).step(1.5).to_a
  assert_equal [1, 0, -1], (1..-1).step(-1).to_a
  a = []
  (1..-1).step(-1) { |x| a << x }
  assert_equal [1, 0, -1], a
  a = []
  (-1..1).step(-1) { |x| a << x }
  assert_equal [], a
  a = []
  ("A".."AAA").step("A") { |x| a << x }
  assert_equal ["A", "AA", "AAA"], a
  a = []
  ("A".."G").step(2) { |x| a << x }
  assert_equal ["A", "C", "E", "G"], a
  assert_raise(ArgumentError, "step can't be 0") { (1..2).step(0) }
  assert_raise(ArgumentError, "#step iteration for beginless ranges is meaningless") { (..10).step(1) {} }
  assert_raise(ArgumentError, "#step for non-numeric beginless ranges is meaningless") { (nil..nil).step(1) }
  assert_raise(ArgumentError, "step is required for non-numeric ranges") { (Time.at(0)..Time.at(5)).step {} }
  t = Time.at(0)
  a = []
  (t..t + 2).step(1) { |x| a << x.to_i }
  assert_equal [0, 1, 2], a
  assert_equal [1.0, 19.2, 37.4, 55.599999999999994], (1.0...55.6).step(18.2).to_a
  assert_equal 4, (1.0...55.6).step(18.2).size
end

test "ArithmeticSequence" do
  s = (1..10) % 3
  assert_equal "((1..10).%(3))", s.inspect
  assert_equal Enumerator::ArithmeticSequence, s.class
  assert_equal [1, 4, 7, 10], s.to_a
  assert_equal 10, s.last
  assert_equal [4, 7, 10], s.last(3)
  assert_equal 1, s.next
  assert_equal "(1.step(by: 2, to: 5))", 1.step(by: 2, to: 5).inspect
  assert_equal [1, 3, 5], 1.step(by: 2, to: 5).to_a
  assert_equal [10, 7, 4, 1], 10.step(1, -3).to_a
  assert_equal 4, 10.step(1, -3).size
  assert_equal (1..10).step(2), 1.step(10, 2).then { (1..10).step(2) }
  assert_equal [2**62 - 1, 2**62, 2**62 + 1], (2**62 - 1).step.first(3)
  assert_raise(NoMethodError) { Enumerator::ArithmeticSequence.new }
end

test "bsearch" do
  ary = [0, 4, 7, 10, 12]
  assert_equal 1, (0...ary.size).bsearch { |i| ary[i] >= 4 }
  assert_equal nil, (0...ary.size).bsearch { |i| ary[i] >= 100 }
  assert_equal 1.0, (0.0...Float::INFINITY).bsearch { |x| Math.log(x) >= 0 }
  assert_equal 1000, (0..).bsearch { |x| x >= 1000 }
  assert_equal(-1000, (..0).bsearch { |x| x >= -1000 })
  assert_equal 2**70, (0..2**80).bsearch { |x| x >= 2**70 }
  assert_raise(TypeError, "can't do binary search for String") { ("a".."b").bsearch }
  assert_raise(TypeError, "wrong argument type Object (must be numeric, true, false or nil)") { (1..3).bsearch { Object.new } }
end

class EachOverridingRange < Range
  def each
    yield 42
    self
  end
end

test "Enumerable methods of Ranges iterate Range#each's elements, or a subclass's each" do
  assert_equal [[1, 2, 3, 4, 5], [1, 2, 3, 4], %w[a b c], [1, 3, 5], [], [2, 4]], [(1..5).to_a, (1...5).to_a, ("a".."c").to_a, (1..5).select(&:odd?), (1..0).to_a, (1..2).map { |x| x * 2 }]
  assert_equal [2**62, 2**62 + 1], (2**62..2**62 + 1).to_a
  assert_equal [[42], [42]], [EachOverridingRange.new(1, 3).to_a, EachOverridingRange.new(1, 3).select { true }]
  assert_equal [1, 2], (1..).first(2)
  assert_raise(RangeError) { (1..).to_a }
end
