# Operator instructions (`+`, `<`, `==`, `[]`, `<<`, `size`, `empty?` … compiled as Opt*
# instructions) on receivers without a builtin fast path take the `Send` path, with its
# inline caches: user methods, attribute readers, method_missing, visibility, redefinition
# and receivers that change class at one call site all behave as plain calls.
require_relative "../assert"

class Box
  attr_reader :size, :length
  def initialize(n) = (@size = n; @length = n * 2)
  def empty? = @size.zero?
  def +(o) = Box.new(@size + o.size)
  def -(o) = Box.new(@size - o)
  def <(o) = @size < o.size
  def <=(o) = @size <= o.size
  def ==(o) = o.is_a?(Box) && o.size == @size
  def [](i) = @size * i
  def []=(i, v)
    @size = i + v
  end
  def <<(v) = (@size += v; self)
  def succ = Box.new(@size + 1)
end

test "operators on user objects call the user's methods" do
  a = Box.new(3)
  b = Box.new(4)
  assert_equal 7, (a + b).size
  assert_equal 1, (b - 3).size
  assert_equal true, a < b
  assert_equal false, b <= a
  assert_equal true, a == Box.new(3)
  assert_equal false, a != Box.new(3)
  assert_equal 30, a[10]
  a[1] = 2
  assert_equal 3, a.size
  assert_equal 9, (a << 6).size
  assert_equal 6, a.length
  assert_equal false, a.empty?
  assert_equal true, Box.new(0).empty?
end

test "one operator call site sees builtin and user receivers in turn" do
  sizes = [[1, 2, 3], "abcd", {a: 1}, Box.new(5), [], Box.new(0)].map { |x| x.size }
  assert_equal [3, 4, 1, 5, 0, 0], sizes
  empties = [[], "", Box.new(0), [1], Box.new(1)].map { |x| x.empty? }
  assert_equal [true, true, true, false, false], empties
  sums = [[1, 2], [1.5, 2], [Box.new(1), Box.new(2)], ["a", "b"], [1, 2.5]].map { |x, y| x + y }
  assert_equal [3, 3.5, "ab", 3.5], sums.values_at(0, 1, 3, 4)
  assert_equal 3, sums[2].size
end

test "a fused local operator falls back to the user's method" do
  b = Box.new(10)
  assert_equal 7, (b - 3).size
  c = Box.new(1)
  r = []
  3.times { c = c.succ; r << (c < Box.new(3)) }
  assert_equal [true, false, false], r
end

test "method_missing, private methods and redefinition behave as plain calls" do
  mm = Class.new do
    def method_missing(name, *args) = [name, *args]
    def respond_to_missing?(*) = true
  end.new
  assert_equal [:size], mm.size
  assert_equal [:+, 1], mm + 1
  assert_equal [:[], 2], mm[2]
  priv = Class.new do
    private def size = 1
    private def +(o) = 2
  end.new
  e = assert_raise(NoMethodError) { priv.size }
  assert_match(/private method [`']size' called/, e.message)
  assert_raise(NoMethodError) { priv + 1 }
  k = Class.new { def size = 1 }
  o = k.new
  r = []
  2.times do |i|
    r << o.size
    k.class_eval { def size = 2 } if i == 0
  end
  assert_equal [1, 2], r
end

test "attribute readers and writers reached through operators see ivar changes" do
  s = Struct.new(:size).new(4)
  assert_equal 4, s.size
  s.size = 9
  assert_equal 9, s.size
  b = Box.new(2)
  b.instance_variable_set(:@size, 11)
  assert_equal 11, b.size
  frozen = Box.new(1).freeze
  assert_raise(FrozenError) { frozen << 1 }
end

test "<=> compares Fixnums and Floats in place and sends for anything else" do
  assert_equal [-1, 1, 0], [1 <=> 2, 2 <=> 1, 3 <=> 3]
  assert_equal [-1, 1, 0, nil], [1 <=> 2.5, 2.5 <=> 1, 1.0 <=> 1.0, (0.0 / 0.0) <=> 1.0]
  assert_equal [nil, -1, 1, -1], [1 <=> "a", "a" <=> "b", (2**70) <=> 1, [1, 2] <=> [1, 3]]
  k = Class.new do
    include Comparable
    attr_reader :v
    def initialize(v) = (@v = v)
    def <=>(o) = v <=> o.v
  end
  assert_equal [-1, true], [k.new(1) <=> k.new(2), k.new(3) > k.new(2)]
  assert_equal [3, 2, 1], [3, 1, 2].sort { |a, b| b <=> a }
  out, _err, status = run_carmine(<<~RUBY)
    p 1 <=> 2
    class Integer; def <=>(o) = 42; end
    p 1 <=> 2
    class Float; def <=>(o) = 43; end
    p 1.5 <=> 2.5
  RUBY
  assert status.success?
  assert_equal "-1\n42\n43\n", out
end

test "size, length and empty? of Strings and Hashes in place, and what must still send" do
  assert_equal [3, 3, 5, 0], ["abc".size, "añb".length, "\xff\xfeab\xff".size, "".size]
  assert_equal [2, 0, true, false, true], [{a: 1, b: 2}.size, {}.length, {}.empty?, {a: 1}.empty?, "".empty?]
  sub = Class.new(String) { def size = 99 }
  hsub = Class.new(Hash) { def empty? = :sub }
  s = +"xy"
  def s.length = :single
  assert_equal [99, :sub, :single, 2], [sub.new("a").size, hsub.new.empty?, s.length, s.size]
  # One attribute-reader site over objects of two layouts, and an unset ivar.
  a = Class.new { attr_reader :size; def initialize(n) = (@size = n) }
  b = Class.new { attr_reader :size; def initialize(n) = (@pad = 0; @size = n) }
  c = Class.new { attr_reader :size }
  assert_equal [1, 2, 3, nil, 4], [a.new(1), b.new(2), a.new(3), c.new, b.new(4)].map { |o| o.size }
  out, _err, status = run_carmine(<<~RUBY)
    p ["ab".size, {a: 1}.size, "".empty?, {}.empty?]
    class String; def size = 7; def empty? = :s; end
    class Hash; def length = 8; end
    p ["ab".size, {a: 1}.length, "".empty?, {}.empty?]
    module Big; def size = 9; end
    Hash.prepend(Big)
    p({a: 1}.size)
  RUBY
  assert status.success?
  assert_equal "[2, 1, true, true]\n[7, 8, :s, true]\n9\n", out
end
