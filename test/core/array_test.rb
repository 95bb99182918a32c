require_relative "../assert"

# Expected values were checked against CRuby (3.4 semantics where they differ from 3.1).

test "at, fetch, fetch_values, dig" do
  a = [1, 2, 3]
  assert_equal [1, 3, nil, 2], [a.at(0), a.at(-1), a.at(5), a.at(1.9)]
  assert_equal [2, 3, :d, 20], [a.fetch(1), a.fetch(-1), a.fetch(10, :d), a.fetch(10) { |i| i * 2 }]
  assert_raise(IndexError, "index 10 outside of array bounds: -3...3") { a.fetch(10) }
  assert_raise(IndexError, "index -10 outside of array bounds: -3...3") { a.fetch(-10) }
  assert_equal [1, 3], a.fetch_values(0, 2)
  assert_equal [1, :x], a.fetch_values(0, 7) { :x }
  assert_raise(IndexError) { a.fetch_values(7) }
  assert_equal 3, [1, [2, [3]]].dig(1, 1, 0)
  assert_equal 2, [1, {a: 2}].dig(1, :a)
  assert_nil [1, nil].dig(1, 5)
  assert_raise(TypeError, "Integer does not have #dig method") { [1].dig(0, 1) }
end

test "values_at with indexes and ranges" do
  a = [1, 2, 3]
  assert_equal [1, 3, nil], a.values_at(0, 2, 4)
  assert_equal [2, 3, nil, nil], a.values_at(1..4)
  assert_equal [2, 3], a.values_at(-2..)
  assert_equal [nil, nil], a.values_at(5..6)
  assert_raise(RangeError, "-5..1 out of range") { a.values_at(-5..1) }
end

test "assoc and rassoc" do
  assert_equal [2, :b], [[1, :a], [2, :b], 3].assoc(2)
  assert_equal [1, :a], [[1, :a], [2, :b]].rassoc(:a)
  assert_nil [[1]].rassoc(nil)
  assert_nil [].assoc(1)
end

test "index, find_index, rindex, count" do
  a = [1, 2, 3, 2]
  assert_equal 1, a.index(2)
  assert_equal 1, a.index { |x| x > 1 }
  assert_nil a.index(9)
  assert_equal 3, a.rindex(2)
  assert_equal 2, a.rindex { |x| x == 3 }
  assert_equal 2, a.find_index(3)
  assert_kind_of Enumerator, a.index
  assert_equal [4, 2, 2], [a.count, a.count(2), a.count(&:odd?)]
end

test "delete, delete_at, delete_if, reject!, select!, keep_if" do
  b = [1, 2, 2, 3, 2]
  assert_equal 2, b.delete(2)
  assert_equal [1, 3], b
  assert_nil b.delete(9)
  assert_equal :nf, b.delete(9) { :nf }
  c = [1, 2, 3]
  assert_equal [2, 3, nil], [c.delete_at(1), c.delete_at(-1), c.delete_at(9)]
  assert_equal [1], c
  c = [1, 2, 3, 4]
  assert_same c, c.delete_if(&:even?)
  assert_equal [1, 3], c
  c = [1, 2, 3, 4]
  assert_equal [1, 3], c.reject!(&:even?)
  assert_nil c.reject!(&:even?)
  c = [1, 2, 3, 4]
  assert_equal [2, 4], c.select!(&:even?)
  assert_nil c.select!(&:even?)
  assert_equal [], c.keep_if { false }
  assert_equal 4, [1, 2, 3, 4].delete_if.size
end

test "reject! compacts what was visited when the block breaks" do
  c = [1, 2, 3, 4, 5]
  c.reject! { |x| break if x == 4; x.odd? }
  assert_equal [2, 4, 5], c
end

test "insert" do
  c = [1, 2, 3]
  assert_equal [1, :a, :b, 2, 3], c.insert(1, :a, :b)
  assert_equal [1, :a, :b, 2, :z, 3], c.insert(-2, :z)
  assert_equal [1, :a, :b, 2, :z, 3, nil, :w], c.insert(7, :w)
  assert_equal [1], [1].insert(1)
  assert_raise(IndexError, "index -5 too small for array; minimum: -4") { [1, 2, 3].insert(-5, 1) }
end

test "fill forms" do
  assert_equal [0, 0, 0], [1, 2, 3].fill(0)
  assert_equal [1, 9, 9], [1, 2, 3].fill(9, 1)
  assert_equal [1, 9, 3], [1, 2, 3].fill(9, 1, 1)
  assert_equal [1, 2, 3, nil, nil, 9, 9], [1, 2, 3].fill(9, 5..6)
  assert_equal [0, 1, 4], [1, 2, 3].fill { |i| i * i }
  assert_equal [1, 1, 2], [1, 2, 3].fill(-2) { |i| i }
  assert_equal [1, 2, 7, 7, 7], [1, 2, 3].fill(7, -1, 3)
  assert_equal [0, 0, 0, 0], [1, 2].fill(0, nil, 4)
  assert_raise(ArgumentError, "wrong number of arguments (given 0, expected 1..3)") { [1].fill }
  assert_raise(ArgumentError, "wrong number of arguments (given 4, expected 1..3)") { [1].fill(1, 2, 3, 4) }
end

test "slice!" do
  c = [1, 2, 3, 4, 5]
  assert_equal 2, c.slice!(1)
  assert_equal [3, 4], c.slice!(1, 2)
  assert_nil c.slice!(5..6)
  assert_equal [5], c.slice!(-1..)
  assert_equal [1], c
  assert_nil c.slice!(9)
  assert_equal [], c.slice!(1, 0)
end

test "compact, take, drop" do
  c = [1, nil, 2, nil]
  assert_equal [1, 2], c.compact
  assert_equal [1, 2], c.compact!
  assert_nil c.compact!
  a = [1, 2, 3]
  assert_equal [[1, 2], [1, 2, 3], [2, 3], []], [a.take(2), a.take(10), a.drop(1), a.drop(10)]
  assert_equal [[1, 2], [2, 3]], [a.take_while { |x| x < 3 }, a.drop_while { |x| x < 2 }]
  assert_raise(ArgumentError, "attempt to take negative size") { a.take(-1) }
  assert_raise(ArgumentError, "attempt to drop negative size") { a.drop(-1) }
end

test "set operations" do
  assert_equal [2, 3], [1, 1, 2, 3] - [1]
  assert_equal [1, 2, 3], [1, 2] | [2, 3]
  assert_equal [1, 2], [1, 1, 2] & [1, 2, 2]
  assert_equal [], [1, 2].difference([1], [2])
  assert_equal [1, 2, 3], [1].union([2], [3, 1])
  assert_equal [3], [1, 2, 3].intersection([2, 3], [3])
  assert_true [1].intersect?([1])
  assert_false [1].intersect?([2])
  x = (1..40).to_a
  y = (20..60).to_a
  assert_equal [19, 60, 21, true], [(x - y).size, (x | y).size, (x & y).size, x.intersect?(y)]
  # eql? semantics: 1 and 1.0 differ
  assert_equal [1], [1] - [1.0]
  assert_equal [1, 1.0], [1] | [1.0]
end

test "uniq and uniq!" do
  c = [1, 1, 2, 3, 3]
  assert_equal [1, 2, 3], c.uniq
  assert_equal [1, 2], c.uniq(&:odd?)
  assert_equal [1, 2, 3], c.uniq!
  assert_nil c.uniq!
  assert_equal [[1, :a]], [[1, :a], [1, :b]].uniq(&:first)
end

test "flatten and flatten!" do
  assert_equal [1, 2, 3, 4], [1, [2, [3, [4]]]].flatten
  assert_equal [1, 2, [3, [4]]], [1, [2, [3, [4]]]].flatten(1)
  assert_nil [1, 2].flatten!
  assert_equal [1, 2], [1, [2]].flatten!
  assert_equal [[1]], [[1]].flatten(0)
  x = [1]
  x << x
  assert_raise(ArgumentError, "tried to flatten recursive array") { x.flatten }
  assert_equal 3, x.flatten(1).size
end

test "<=>, *, to_h" do
  assert_equal [-1, 0, 1, nil, nil], [[1, 2] <=> [1, 3], [1, 2] <=> [1, 2], [1, 2, 3] <=> [1, 2], [1] <=> 1, [1] <=> ["a"]]
  assert_equal [1, 2, 1, 2], [1, 2] * 2
  assert_equal "1,2", [1, 2] * ","
  assert_raise(ArgumentError, "negative argument") { [1] * -1 }
  assert_raise(TypeError) { [1] * nil }
  assert_equal({1 => 2, 3 => 4}, [[1, 2], [3, 4]].to_h)
  assert_equal({1 => 2, 2 => 4}, [1, 2].to_h { |x| [x, x * 2] })
  assert_raise(TypeError, "wrong element type Integer at 1 (expected array)") { [[1, 2], 3].to_h }
  assert_raise(ArgumentError, "wrong array length at 0 (expected 2, was 3)") { [[1, 2, 3]].to_h }
end

test "reverse_each and quantifiers" do
  r = []
  [1, 2, 3].reverse_each { |x| r << x }
  assert_equal [3, 2, 1], r
  assert_equal [true, true, true, true, false, false],
               [[1, 2].all?(Integer), [1, 3].any? { |x| x > 2 }, [1].none?(4..), [3].one?(3), [nil, 1].all?, [].any?]
end

test "sort, sort!, sort_by!, min, max, minmax" do
  assert_equal [1, 2, 3], [3, 1, 2].sort
  assert_equal [3, 2, 1], [3, 1, 2].sort { |x, y| y <=> x }
  c = [3, 1, 2]
  assert_same c, c.sort!
  assert_equal [1, 2, 3], c
  c = %w[bb a ccc]
  c.sort_by!(&:size)
  assert_equal %w[a bb ccc], c
  assert_raise(ArgumentError, "comparison of Integer with String failed") { [1, "a"].sort }
  assert_equal [1, 3, [1, 2], [3, 2], [1, 3]], [[3, 1, 2].min, [3, 1, 2].max, [3, 1, 2].min(2), [3, 1, 2].max(2), [3, 1, 2].minmax]
  assert_equal [nil, [nil, nil]], [[].min, [].minmax]
  assert_equal "aa", %w[aa b].max { |x, y| x.size <=> y.size }
  assert_raise(ArgumentError, "negative size (-1)") { [1].min(-1) }
end

test "sum is exact for integers and compensated for floats" do
  assert_equal 6, [1, 2, 3].sum
  assert_equal 0.6, [0.1, 0.2, 0.3].sum
  assert_equal 0.6, [0.1, 0.2, 0.3].sum(0.0)
  assert_equal 13, [1, 2].sum(10)
  assert_equal "ab", ["a", "b"].sum("")
  assert_equal 30, [1, 2].sum { |x| x * 10 }
  assert_equal 3r, [1r, 2].sum
  assert_equal 18446744073709551617, [1, 2**64].sum
  assert_equal 3.6, [3r, 0.1, 0.2, 0.3].sum
  assert_true [Float::INFINITY, -Float::INFINITY].sum.nan?
  assert_equal [1, 2], [[1], [2]].sum([])
  assert_raise(TypeError) { ["a"].sum }
end

test "rotate and rotate!" do
  a = [1, 2, 3]
  assert_equal [[2, 3, 1], [3, 1, 2], [2, 3, 1], []], [a.rotate, a.rotate(-1), a.rotate(7), [].rotate]
  c = [1, 2, 3]
  c.rotate!(2)
  assert_equal [3, 1, 2], c
end

test "shuffle and sample" do
  a = [1, 2, 3]
  assert_equal [1, 2, 3], a.shuffle.sort
  assert_kind_of Integer, a.sample
  assert_equal 2, a.sample(2).size
  assert_equal [1, 2, 3], a.sample(10).sort
  assert_nil [].sample
  assert_equal [], [].sample(2)
  assert_raise(ArgumentError, "negative sample number") { a.sample(-1) }
  assert_raise(ArgumentError, "unknown keyword: :foo") { a.shuffle(foo: 1) }
  o = Object.new
  def o.rand(n) = 0
  assert_equal [2, 3, 1], a.shuffle(random: o)
  assert_equal 1, a.sample(random: o)
  bad = Object.new
  def bad.rand(n) = n
  assert_raise(RangeError, "random number too big 3") { a.shuffle(random: bad) }
  c = [1, 2, 3, 4]
  assert_same c, c.shuffle!(random: Random.new(42))
  assert_equal [1, 2, 3, 4], c.sort
end

test "bsearch and bsearch_index" do
  x = [1, 3, 5, 7]
  assert_equal 5, x.bsearch { |v| v >= 4 }
  assert_equal 5, x.bsearch { |v| 5 <=> v }
  assert_equal 2, x.bsearch_index { |v| v >= 4 }
  assert_nil x.bsearch { |v| v > 10 }
  assert_raise(TypeError, "wrong argument type String (must be numeric, true, false or nil)") { [1].bsearch { "x" } }
end

test "combinatorics" do
  a = [1, 2, 3]
  assert_equal [[1, 2], [1, 3], [2, 3]], a.combination(2).to_a
  assert_equal [[]], a.combination(0).to_a
  assert_equal [], a.combination(4).to_a
  assert_equal 3, a.combination(2).size
  assert_equal [[1, 2, 3], [1, 3, 2], [2, 1, 3], [2, 3, 1], [3, 1, 2], [3, 2, 1]], a.permutation.to_a
  assert_equal 6, a.permutation(2).size
  assert_equal [[1, 2], [1, 3], [2, 1], [2, 3], [3, 1], [3, 2]], a.permutation(2).to_a
  assert_equal [[1, 1], [1, 2], [2, 2]], [1, 2].repeated_combination(2).to_a
  assert_equal [[1, 1], [1, 2], [2, 1], [2, 2]], [1, 2].repeated_permutation(2).to_a
  assert_equal [6, 8], [a.repeated_combination(2).size, [1, 2].repeated_permutation(3).size]
  assert_equal 2432902008176640000 * 21, (1..21).to_a.permutation.size
  r = []
  assert_same a, a.combination(2) { |c| r << c }
  assert_equal 3, r.size
end

test "product and transpose" do
  assert_equal [[1, 3], [1, 4], [2, 3], [2, 4]], [1, 2].product([3, 4])
  assert_equal [[1], [2]], [1, 2].product
  assert_equal [], [1, 2].product([])
  r = []
  a = [1, 2]
  assert_same a, a.product([3]) { |x| r << x }
  assert_equal [[1, 3], [2, 3]], r
  big = (0..100).to_a
  assert_raise(RangeError) { big.product(big, big, big, big, big, big, big, big, big, big) }
  assert_equal [[1, 3], [2, 4]], [[1, 2], [3, 4]].transpose
  assert_raise(IndexError, "element size differs (1 should be 2)") { [[1, 2], [3]].transpose }
end

test "zip and cycle" do
  a = [1, 2, 3]
  assert_equal [[1, 4], [2, 5], [3, nil]], a.zip([4, 5])
  assert_equal [[1, 1], [2, 2], [3, 3]], a.zip(1..)
  assert_raise(TypeError, "wrong argument type Integer (must respond to :each)") { a.zip(1) }
  r = []
  assert_nil a.zip([4]) { |x| r << x }
  assert_equal [[1, 4], [2, nil], [3, nil]], r
  r = []
  assert_nil a.cycle(2) { |x| r << x }
  assert_equal [1, 2, 3, 1, 2, 3], r
  assert_equal [Float::INFINITY, 9, 0], [a.cycle.size, a.cycle(3).size, [].cycle.size]
end

test "pack" do
  assert_equal "\x01\x02".b, [1, 2].pack("C*")
  assert_equal "AB", [65, 66].pack("U*")
  assert_equal "YWJj\n", ["abc"].pack("m")
  assert_equal "YWJj", ["abc"].pack("m0")
  assert_equal "\x00\x00\x00\x01".b, [1].pack("N")
  assert_equal "\x01\x00".b, [1].pack("v")
  assert_equal "\x00\x01".b, [1].pack("s>")
  assert_equal "ab\x00\x00".b, ["ab"].pack("a4")
  assert_equal "ab  ", ["ab"].pack("A4")
  assert_equal "ab\x00".b, ["ab"].pack("Z*")
  assert_equal "\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF".b, [-1].pack("Q")
  assert_equal "\x05\x00\x00\x00\x00\x00\x00\x00".b, [2**64 + 5].pack("Q")
  assert_equal "\x82,".b, [300].pack("w")
  assert_equal "\xA1".b, ["a1"].pack("H*")
  assert_equal "\x05".b, ["1010"].pack("b*")
  assert_equal "h=C3=A9llo =3D x =\n\n", ["h\u00e9llo = x \n"].pack("M")
  assert_equal "!80``\n", ["a"].pack("u")
  assert_equal "\x00\x00\x00".b, [].pack("@3")
  assert_equal "a", ["abc"].pack("a*X2")
  assert_equal "\x00\x00\x00\x00\x00\x00\xF8?".b, [1.5].pack("E")
  assert_equal Encoding::UTF_8, [0x20AC].pack("U").encoding
  assert_equal Encoding::US_ASCII, ["x"].pack("m").encoding
  assert_raise(ArgumentError, "too few arguments") { [1].pack("C2") }
  assert_raise(ArgumentError, "unknown pack directive 'y' in 'y'") { [1].pack("y") }
  assert_raise(ArgumentError) { [1].pack("n_") }
  assert_raise(RangeError) { [1].pack("s<>") }
  assert_raise(TypeError) { ["a"].pack("C") }
  assert_raise(RangeError, "pack(U): value out of range") { [-1].pack("U") }
  assert_raise(ArgumentError, "can't compress negative numbers") { [-1].pack("w") }
  buf = +"x"
  assert_same buf, [65].pack("C", buffer: buf)
  assert_equal "xA", buf
end

test "frozen arrays reject mutation" do
  f = [1, 2].freeze
  assert_raise(FrozenError, "can't modify frozen Array: [1, 2]") { f.delete_if { true } }
  assert_raise(FrozenError) { [].freeze.compact! }
  assert_raise(FrozenError) { f.delete(2) }
  assert_raise(FrozenError) { [].freeze.sort! }
  assert_raise(FrozenError) { [].freeze.fill(1) }
  assert_raise(FrozenError) { [].freeze.rotate! }
  assert_raise(FrozenError) { f.uniq! }
  assert_raise(FrozenError) { f.insert(0) }
  assert_raise(FrozenError) { f.shuffle! }
  assert_raise(FrozenError) { f.flatten! }
  assert_raise(FrozenError) { f.slice!(0) }
  assert_raise(FrozenError) { f.select! { true } }
  assert_nil f.delete(9)
  assert_nil f.delete_at(5)
  assert_raise(IndexError, "index -10 too small for array; minimum: -3") { [1, 2, 3][-10] = 1 }
end

test "enumerator sizes" do
  a = [1, 2, 3]
  assert_equal [2, 3, 3, 3, 3, nil], [a.each_slice(2).size, a.delete_if.size, a.select!.size, a.reverse_each.size, a.combination(2).size, a.index.size]
end

test "aliases compare equal and enumerators keep the called name" do
  assert_equal Array.instance_method(:length), Array.instance_method(:size)
  assert_equal Array.instance_method(:map), Array.instance_method(:collect)
  assert_equal :collect, [1].collect.inspect[/:(\w+)>/, 1].to_sym
end

test "arithmetic sequence slices" do
  a = [0, 1, 2, 3, 4, 5]
  assert_equal [0, 2, 4], a[(0..).step(2)]
  assert_equal [2, 1, 0], a[(2..).step(-1)]
  assert_equal [3, 1], a[(-3..).step(-2)]
  assert_equal [], a[(1..3).step(-1)]
end

test "recursive arrays inspect, compare and hash" do
  a = [1]
  a << a
  assert_equal "[1, [...]]", a.inspect
  b = [1]
  b << b
  assert_equal a.hash, b.hash
  assert_equal a.hash, [1, a].hash
end

test "shift and unshift keep order through the buffer's front room" do
  a = (1..10).to_a
  assert_equal 1, a.shift
  assert_equal [2, 3], a.shift(2)
  a.unshift(:x, :y)
  assert_equal [:x, :y, 4, 5, 6, 7, 8, 9, 10], a
  a.insert(0, :z)
  assert_equal :z, a.first
  q = []
  1000.times { |i| q.push(i); q.shift if q.size > 3 }
  assert_equal [997, 998, 999], q
  l = []
  100.times { |i| l.unshift(i) }
  assert_equal (0...100).to_a.reverse, l
  assert_equal [99, 98], l.shift(2)
  l.concat([:a])
  assert_equal :a, l.last
  assert_equal 99, l.size
  l.sort_by! { |x| x.is_a?(Integer) ? x : -1 }
  assert_equal :a, l.first
  assert_equal [], [1].tap(&:shift)
  e = [1, 2]
  e.shift(5)
  e << 3
  assert_equal [3], e
end

test "each with a literal block: growing, shrinking, break, next, return, splat, closures" do
  a = [1, 2, 3]
  seen = []
  a.each { |x| a << x + 10 if x < 3; seen << x }
  assert_equal [1, 2, 3, 11, 12], seen
  b = [1, 2, 3, 4]
  seen = []
  b.each { |x| b.pop if x == 1; seen << x }
  assert_equal [1, 2, 3], seen
  assert_equal 20, [1, 2, 3].each { |x| break x * 10 if x == 2 }
  arr = [4, 5]
  assert_same arr, arr.each { |x| next if x == 4 }
  assert_equal [[1, 2], [3, 4]], [[1, 2], [3, 4]].each.map { |a1, b1| [a1, b1] }
  pairs = []
  [[1, 2], [3, 4]].each { |x, y| pairs << y }
  assert_equal [2, 4], pairs
  procs = []
  [1, 2, 3].each { |x| procs << -> { x } }
  assert_equal [1, 2, 3], procs.map(&:call)
  finder = Object.new
  def finder.find_two = [1, 2, 3].each { |x| return x if x == 2 }
  assert_equal 2, finder.find_two
  e = assert_raise(RuntimeError) { [1].each { |x| raise "boom" } }
  assert_match(/each/, e.backtrace[1])
  f = Fiber.new { [1, 2].each { |x| Fiber.yield x }; :done }
  assert_equal [1, 2, :done], [f.resume, f.resume, f.resume]
end
