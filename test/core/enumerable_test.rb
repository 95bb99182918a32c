require_relative "../assert"

# A minimal Enumerable (so the Enumerable methods run, not Array's own).
class Numbers
  include Enumerable
  def initialize(*v) = @v = v
  def each(&b)
    @v.each(&b)
    self
  end
  def size = @v.size
end

class Multi
  include Enumerable
  def each
    yield 1, 2
    yield 3, 4, 5
    yield 6, 7, 8, 9
  end
end

class Infinite
  include Enumerable
  def each
    i = 0
    loop { yield i += 1 }
  end
end

test "chunk, chunk_while, slice_before/after/when" do
  n = Numbers.new(1, 2, 4, 5, 7)
  assert_equal [[false, [1]], [true, [2, 4]], [false, [5, 7]]], n.chunk(&:even?).to_a
  assert_equal [[1], [2], [4, 5, 7]], n.slice_before(&:even?).to_a
  assert_equal [[1, 2], [4], [5, 7]], n.slice_after(&:even?).to_a
  assert_equal [["a", "b"], ["#", "c"]], %w[a b # c].each.slice_before("#").to_a
  assert_equal [[1, 2], [4, 5], [7]], n.chunk_while { |a, b| b == a + 1 }.to_a
  assert_equal [[1, 2], [4, 5], [7]], n.slice_when { |a, b| b != a + 1 }.to_a
  assert_equal [[:_alone, [1]], [true, [2]]], Numbers.new(1, 2, 3).chunk { |x| x == 1 ? :_alone : (x == 2 ? true : nil) }.to_a
  assert_raise(RuntimeError, "symbols beginning with an underscore are reserved") { Numbers.new(1).chunk { :_x }.to_a }
  assert_raise(ArgumentError, "tried to create Proc object without a block") { n.slice_when }
  assert_raise(ArgumentError, "wrong number of arguments (given 0, expected 1)") { n.slice_before }
  # lazy: works on an infinite source
  assert_equal [[1, 2], [3, 4]], Infinite.new.slice_after(&:even?).first(2)
  assert_kind_of Enumerator, n.chunk
end

test "min/max with counts and blocks, minmax, minmax_by" do
  n = Numbers.new(3, 1, 2)
  assert_equal [3, 2], n.max(2)
  assert_equal [1, 2], n.min(2)
  assert_equal [1, 2], n.max(2) { |a, b| b <=> a }
  assert_equal %w[ccc aa], %w[aa b ccc].each.max_by(2, &:size)
  assert_equal %w[b ccc], %w[aa b ccc].each.minmax_by(&:size)
  assert_equal [1, 3], n.minmax
  assert_equal [3, 1], n.minmax { |a, b| b <=> a }
  assert_equal [nil, nil], Numbers.new.minmax
  assert_raise(ArgumentError, "negative size (-1)") { n.min(-1) }
end

test "sum, inject with symbols" do
  assert_equal 6, Numbers.new(1, 2, 3).sum
  assert_equal 0.6, Numbers.new(0.1, 0.2, 0.3).sum
  assert_equal 6.0, Numbers.new(1, 2, 3).sum(0.0)
  assert_equal "ab", Numbers.new("a", "b").sum("")
  assert_equal 6, Numbers.new(1, 2, 3).inject(:+)
  assert_equal 16, Numbers.new(1, 2, 3).inject(10, :+)
  assert_equal 6, Numbers.new(1, 2, 3).inject("+")
  assert_equal(-4, Numbers.new(1, 2, 3).inject { |a, b| a - b })
  assert_nil Numbers.new.inject(:+)
  assert_raise(TypeError, "2 is not a symbol nor a string") { Numbers.new(1, 2).inject(1, 2) }
  assert_raise(LocalJumpError) { Numbers.new(1, 2).inject }
  assert_raise(NoMethodError) { Numbers.new(1, 2).inject(:puts) }
end

test "zip, to_set, uniq, tally, filter_map, compact" do
  assert_equal [[1, 4], [2, 5], [3, 6]], Numbers.new(1, 2, 3).zip(4..)
  assert_equal [[1, 4], [2, nil]], Numbers.new(1, 2).zip([4])
  assert_raise(TypeError, "wrong argument type Integer (must respond to :each)") { Numbers.new(1).zip(1) }
  assert_equal Set[1, 2], Numbers.new(1, 2, 2).to_set
  assert_equal [1, 2], Numbers.new(1, 1, 2).uniq
  assert_equal [1, 2], Numbers.new(1, 3, 2).uniq(&:odd?)
  assert_equal({1 => 2, 2 => 1}, Numbers.new(1, 1, 2).tally)
  h = {1 => 3}
  assert_same h, Numbers.new(1, 2).tally(h)
  assert_equal({1 => 4, 2 => 1}, h)
  assert_raise(TypeError) { Numbers.new(1).tally({1 => "x"}) }
  assert_raise(FrozenError) { Numbers.new(1).tally({}.freeze) }
  assert_equal [2, 6], Numbers.new(1, 2, 3).filter_map { |x| x * 2 if x.odd? }
  assert_equal [1, 2], Numbers.new(1, nil, 2).compact
end

test "each_slice/each_cons return self and size their enumerators" do
  n = Numbers.new(1, 2, 3)
  assert_same n, n.each_slice(2) {}
  assert_same n, n.each_cons(2) {}
  assert_equal [[1, 2], [3]], n.each_slice(2).to_a
  assert_equal [[1, 2], [2, 3]], n.each_cons(2).to_a
  assert_equal 2, n.each_slice(2).size
  assert_equal 2, n.each_cons(2).size
  assert_equal 0, Numbers.new.each_cons(2).size
  assert_raise(ArgumentError, "invalid slice size") { n.each_slice(0) }
  assert_raise(ArgumentError, "invalid size") { n.each_cons(0) }
  assert_equal 3, n.map.size
  assert_nil n.find.size
end

test "grep and grep_v" do
  assert_equal %w[abc], %w[abc def].each.grep(/b/)
  assert_equal %w[def], %w[abc def].each.grep_v(/b/)
  assert_equal [2, 4], Numbers.new(1, 2, 3, 4).grep(2..4) { |x| x.even? ? x : nil }.compact
  "z" =~ /z/
  %w[abc].each.grep(/b/)
  assert_equal "z", $~[0]
end

test "first, take, cycle, each_entry, reverse_each, to_a with args" do
  assert_equal 1, Infinite.new.first
  assert_equal [1, 2, 3], Infinite.new.first(3)
  assert_equal [1, 2], Infinite.new.take(2)
  assert_raise(ArgumentError, "attempt to take negative size") { Infinite.new.first(-1) }
  r = []
  assert_nil Numbers.new(1, 2).cycle(2) { |x| r << x }
  assert_equal [1, 2, 1, 2], r
  assert_equal Float::INFINITY, Numbers.new(1).cycle.size
  assert_equal [[1, 2], [3, 4, 5], [6, 7, 8, 9]], Multi.new.each_entry.to_a
  r = []
  Numbers.new(1, 2).reverse_each { |x| r << x }
  assert_equal [2, 1], r
end

test "blocks see multiple yielded values like CRuby" do
  m = Multi.new
  seen = []
  m.all? { |e| seen << e }
  assert_equal [1, 3, 6], seen
  seen = []
  m.any? { |*a| seen << a; false }
  assert_equal [[1, 2], [3, 4, 5], [6, 7, 8, 9]], seen
  assert_equal [1, 3, 6], m.map { |e| e }
  assert_equal 1, m.count { |e| e == 1 }
  assert_equal [[1, 2], [3, 4, 5], [6, 7, 8, 9]], m.to_a
  assert_equal [[1, 2]], m.select { |e| e == [1, 2] }
  assert_equal [1, 2], m.min
  assert_equal [[1, 2], [6, 7, 8, 9]], m.minmax_by(&:size)
  assert_equal [[[1, 2], [3, 4, 5]], [[6, 7, 8, 9]]], m.each_slice(2).to_a
  assert_equal [[[1, 2], 0], [[3, 4, 5], 1], [[6, 7, 8, 9], 2]], m.each_with_index.to_a
  assert_equal 1, m.find_index { |e| e == 3 }
end

test "sort_by is stable; sort uses <=>" do
  words = %w[bb a cc d]
  assert_equal %w[a d bb cc], words.each.sort_by(&:size)
  assert_equal %w[a bb cc d], Numbers.new(*words).sort
  assert_raise(ArgumentError, "comparison of Integer with String failed") { Numbers.new(1, "a").sort }
end

test "group_by, partition, each_with_object, to_h, include?, find" do
  n = Numbers.new(1, 2, 3, 4)
  assert_equal({true => [1, 3], false => [2, 4]}, n.group_by(&:odd?))
  assert_equal [[1, 3], [2, 4]], n.partition(&:odd?)
  assert_equal [1, 2, 3, 4], n.each_with_object([]) { |x, acc| acc << x }
  assert_equal({1 => 2, 2 => 4, 3 => 6, 4 => 8}, n.to_h { |x| [x, x * 2] })
  assert_raise(TypeError, "wrong element type Integer (expected array)") { n.to_h }
  assert_true n.include?(3)
  assert_equal 3, n.find { |x| x > 2 }
  assert_equal :none, n.find(-> { :none }) { |x| x > 9 }
  assert_equal [1, 2], n.take_while { |x| x < 3 }
  assert_equal [3, 4], n.drop_while { |x| x < 3 }
  assert_equal [3, 4], n.drop(2)
end

test "lazy and chain" do
  assert_equal [2, 4, 6], Infinite.new.lazy.map { |x| x * 2 }.first(3)
  assert_equal [1, 2, 3], Numbers.new(1).chain([2, 3]).to_a
end

test "aliases are the same method" do
  assert_equal Enumerable.instance_method(:map), Enumerable.instance_method(:collect)
  assert_equal Enumerable.instance_method(:inject), Enumerable.instance_method(:reduce)
  assert_equal Enumerable.instance_method(:select), Enumerable.instance_method(:find_all)
end

test "Comparable" do
  v = Class.new do
    include Comparable
    attr_reader :n
    def initialize(n) = @n = n
    def <=>(o) = o.is_a?(self.class) ? n <=> o.n : nil
  end
  a, b = v.new(1), v.new(2)
  assert_true a < b
  assert_true b >= a
  assert_true a.between?(a, b)
  assert_equal b, v.new(5).clamp(a, b)
  assert_false a == 1
  assert_raise(ArgumentError, /comparison of .* with 1 failed/) { a < 1 }
  assert_equal 3, 5.clamp(..3)
end

test "Lazy: grep, grep_v, zip and chunking stay lazy" do
  inf = (1..Float::INFINITY).lazy
  assert_equal [2, 3], inf.grep(2..4).first(2)
  assert_equal [20, 30], inf.grep(2..4) { |x| x * 10 }.first(2)
  assert_equal [1, 5], inf.grep_v(2..4).first(2)
  assert_equal [[1, 10], [2, 11]], inf.zip(10..).first(2)
  assert_equal [[1, :a, 1], [2, nil, 2]], inf.zip([:a], 1..).first(2)
  assert_equal [5, 7, 9], (1..3).lazy.zip(4..6).map(&:sum).to_a
  assert_kind_of Enumerator::Lazy, inf.chunk_while { |a, b| b == a + 1 }
  assert_equal [[1, 2]], [1, 2, 4].lazy.slice_when { |a, b| b != a + 1 }.first(1)
  assert_equal [1, 2], [1, 1, 2].lazy.uniq.to_a
  assert_equal [1, 2], [1, 2, 1].lazy.uniq.to_a
end

test "external iteration of chunking enumerators" do
  e = [1, 2, 4, 5].chunk_while { |a, b| b == a + 1 }
  assert_equal [1, 2], e.next
  assert_equal [4, 5], e.next
  assert_raise(StopIteration) { e.next }
end

test "Lazy: next, size, Lazy.new, eager and inspect" do
  e = (1..).lazy.map { |x| x * 2 }
  assert_equal [2, 4], [e.next, e.next]
  assert_equal Float::INFINITY, e.size
  assert_equal 3, (1..3).lazy.map { 1 }.size
  assert_nil (1..3).lazy.select(&:odd?).size
  assert_equal 2, (1..3).lazy.take(2).size
  assert_equal 7, (1..10).lazy.drop(3).size
  assert_equal [10, 20, 30], Enumerator::Lazy.new([1, 2, 3], 3) { |y, v| y << v * 10 }.to_a
  assert_equal 100, Enumerator::Lazy.new(Object.new, 100) {}.map {}.size
  assert_equal Enumerator, (1..3).lazy.eager.class
  assert_equal "#<Enumerator::Lazy: #<Enumerator::Lazy: #<Enumerator::Lazy: 1..3>:select>:map>",
               (1..3).lazy.select(&:odd?).map { 1 }.inspect
  assert_equal "#<Enumerator::Lazy: #<Enumerator::Lazy: 1..3>:take(2)>", (1..3).lazy.take(2).inspect
  assert_equal [[1, 0], [2, 1]], (1..2).lazy.with_index.to_a
  assert_equal [0, 2, 6], (1..).lazy.each_with_index.map { |x, i| x * i }.first(3)
  assert_equal [[1, 2], [3, 4]], (1..).lazy.each_slice(2).first(2)
  assert_kind_of Enumerator::Lazy, (1..3).lazy.collect { 1 }
  assert_equal Enumerator::Lazy.instance_method(:map), Enumerator::Lazy.instance_method(:collect)
end

test "Lazy: values yielded together stay together" do
  multi = Enumerator.new { |y| y.yield 1, 2 }
  seen = []
  multi.lazy.map { |a, b| seen << [a, b]; a + b }.force
  assert_equal [[1, 2]], seen
  args = nil
  multi.lazy.select { true }.each { |*a| args = a }
  assert_equal [[1, 2]], args
  multi.lazy.each { |*a| args = a }
  assert_equal [1, 2], args
end

test "Enumerable methods over a Hash see [key, value] pairs and keep the iteration guard" do
  h = {a: 1, b: 2, c: 3}
  assert_equal 6, h.inject(0) { |s, (_k, v)| s + v }
  assert_equal [:c, 3], h.max_by { |_k, v| v }
  assert_equal [[[:a, 1], 0], [[:b, 2], 1]], h.first(2).each_with_index.to_a
  assert_raise(RuntimeError) { h.inject(0) { |s, _| h[:new_key] = 1; s } }
end
