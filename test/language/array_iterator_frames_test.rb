require_relative "../assert"

# Array#map, select, reject, count and Enumerable#each_with_index and inject over an Array,
# called with a literal block (or a Symbol block), run as iterator frames driven by the
# dispatch loop (interp/iter.rs). These cases pin down that they behave exactly like the
# Rust iterations they replace. Expected values are CRuby's.

test "results of map, select, reject, count, each_with_index and inject" do
  a = [1, 2, 3, 4]
  assert_equal [2, 4, 6, 8], a.map { |x| x * 2 }
  assert_equal [2, 4, 6, 8], a.collect { |x| x * 2 }
  assert_equal [2, 4], a.select { |x| x.even? }
  assert_equal [2, 4], a.filter { |x| x.even? }
  assert_equal [1, 3], a.reject { |x| x.even? }
  assert_equal 2, a.count { |x| x > 2 }
  pairs = []
  assert_same a, a.each_with_index { |x, i| pairs << [x, i] }
  assert_equal [[1, 0], [2, 1], [3, 2], [4, 3]], pairs
  assert_equal 10, a.inject { |s, x| s + x }
  assert_equal 20, a.inject(10) { |s, x| s + x }
  assert_equal 24, a.reduce(1) { |s, x| s * x }
  assert_equal [1, 2, 3, 4], a
  assert_equal [nil, nil], [1, 2].map { }
  assert_equal [[1, 2], [3, 4]], [[1, 2], [3, 4]].select { |x, y| y > x }
end

test "empty and one-element receivers" do
  assert_equal [], [].map { raise "not called" }
  assert_equal [], [].select { raise "not called" }
  assert_equal [], [].reject { raise "not called" }
  assert_equal 0, [].count { raise "not called" }
  assert_equal [], [].each_with_index { raise "not called" }
  assert_nil [].inject { raise "not called" }
  assert_equal :init, [].inject(:init) { raise "not called" }
  assert_equal :only, [:only].inject { raise "not called" }
  assert_equal [:a, :only], [:only].inject([:a]) { |s, x| s + [x] }
  r = [].map { }
  assert_equal Array, r.class
  assert !r.equal?([].map { })
end

test "block parameters: several, splat, destructuring, numbered" do
  assert_equal [[1, nil], [2, nil]], [1, 2].map { |x, y| [x, y] }
  assert_equal [[1, 2], [3, 4]], [[1, 2], [3, 4]].map { |x, y| [x, y] }
  assert_equal [[1, 0], [2, 1]], [1, 2].each_with_index.map { |x, i| [x, i] }
  seen = []
  [5, 6].each_with_index { |x| seen << x }
  [5, 6].each_with_index { |*r| seen << r }
  [[1, 2]].each_with_index { |(a, b), i| seen << [a, b, i] }
  assert_equal [5, 6, [5, 0], [6, 1], [1, 2, 0]], seen
  assert_equal [[0, 1], 2], [1, 2].inject(0) { |*r| r }
  assert_equal 2, [1, 2].inject { |s| s + 1 }
  assert_equal 10, [[1, 2], [3, 4]].inject(0) { |s, (x, y)| s + x + y }
  assert_equal [2, 3], [1, 2].map { _1 + 1 }
  assert_equal [2], [1, 2].each_with_index.select { _1 + _2 > 2 }.map(&:first)
  assert_equal 6, [1, 2, 3].inject { _1 + _2 }
  assert_equal [[1, :d], [2, :d]], [1, 2].map { |x, y = :d| [x, y] }
  assert_equal [[1, nil]], [1].map { |x; y| [x, y] }
end

test "locals of each iteration are fresh, captured ones get their own environment" do
  out = [1, 2, 3].map { |x| r = defined?(w) ? :leak : x; w = x; r }
  assert_equal [1, 2, 3], out
  procs = [1, 2, 3].map { |x| y = x * 10; proc { [x, y] } }
  assert_equal [[1, 10], [2, 20], [3, 30]], procs.map(&:call)
  keep = []
  [1, 2].each_with_index { |x, i| keep << -> { [x, i] } }
  assert_equal [[1, 0], [2, 1]], keep.map(&:call)
  acc = [1, 2, 3].inject([]) { |s, x| s + [proc { x }] }
  assert_equal [1, 2, 3], acc.map(&:call)
end

test "break, next and return" do
  assert_equal :b, [1, 2, 3].map { |x| break :b if x == 2; x }
  assert_equal :b, [1, 2, 3].select { |x| break :b if x == 2; true }
  assert_equal :b, [1, 2, 3].reject { |x| break :b if x == 3; true }
  assert_equal :b, [1, 2, 3].count { |x| break :b if x == 3; true }
  assert_equal :b, [1, 2, 3].each_with_index { |x, i| break :b if i == 1 }
  assert_equal :b, [1, 2, 3].inject { |s, x| break :b if x == 3; s + x }
  assert_equal [1, nil, 3], [1, 2, 3].map { |x| next if x == 2; x }
  assert_equal [1, 3], [1, 2, 3].select { |x| next false if x == 2; true }
  assert_equal 4, [1, 2, 3].inject { |s, x| next s if x == 2; s + x }
  def map_return = [1, 2, 3].map { |x| return x * 100 if x == 2; x }
  def inject_return = [1, 2, 3].inject(0) { |s, x| return [:r, s] if x == 3; s + x }
  def with_index_return = [:a, :b].each_with_index { |x, i| return i if x == :b }
  assert_equal 200, map_return
  assert_equal [:r, 3], inject_return
  assert_equal 1, with_index_return
  nested = [1, 2].map { |x| [10, 20].map { |y| break y + x if y == 20; y } }
  assert_equal [21, 22], nested
end

test "redo and retry inside the block" do
  tries = 0
  r = [1, 2].map do |x|
    tries += 1
    redo if tries == 1
    x * tries
  end
  assert_equal [2, 6], r
  tries = 0
  s = [1, 2, 3].inject(0) do |acc, x|
    tries += 1
    redo if tries == 2
    acc + x
  end
  assert_equal 6, s
  assert_equal 4, tries
  attempts = 0
  r = [1, 2].select do |x|
    begin
      attempts += 1
      raise "again" if attempts < 3
      x.odd?
    rescue
      retry
    end
  end
  assert_equal [1], r
  assert_equal 4, attempts
end

test "exceptions leave through the iterator with its backtrace entry" do
  e = assert_raise(RuntimeError) { [1, 2, 3].map { |x| raise "x#{x}" if x == 2; x } }
  assert_equal "x2", e.message
  assert_match(/in .(Array#)?map'/, e.backtrace[1])
  e = assert_raise(RuntimeError) { [1, 2].select { raise "s" } }
  assert_match(/in .(Array#)?select'/, e.backtrace[1])
  e = assert_raise(RuntimeError) { [1, 2].inject(0) { raise "i" } }
  assert e.backtrace.any? { |l| l =~ /in .(Enumerable#)?inject'/ }, e.backtrace.inspect
  e = assert_raise(RuntimeError) { [1, 2].each_with_index { raise "w" } }
  assert e.backtrace.any? { |l| l =~ /in .(Enumerable#)?each_with_index'/ }, e.backtrace.inspect
  ens = []
  r = [1, 2, 3].map { |x| begin; raise ArgumentError if x == 2; x; rescue ArgumentError; :rescued; ensure; ens << x; end }
  assert_equal [1, :rescued, 3], r
  assert_equal [1, 2, 3], ens
  assert_equal :thrown, catch(:t) { [1, 2].map { |x| throw :t, :thrown if x == 2 } }
  assert_raise(TypeError) { [1, nil].inject { |s, x| s + x } }
end

test "the block changes the receiver" do
  a = [1, 2, 3]
  assert_equal [1, 2, 3, 4, 5], a.map { |x| a << x + 3 if a.size < 5; x }
  a = [1, 2, 3, 4]
  assert_equal [1, 3], a.map { |x| a.shift; x }
  a = [1, 2, 3, 4]
  r = a.select { |x| a[1] = :changed if x == 1; true }
  assert_equal [1, :changed, 3, 4], r
  a = [1, 2, 3, 4]
  r = a.select { |x| a.clear if x == 2; true }
  assert_equal [1, nil], r
  a = [1, 2, 3]
  r = a.select { |x| a.clear if x == 2; true }
  assert_equal [1, nil], r
  a = [1, 2, 3]
  assert_equal [1, 2], a.reject { |x| a.clear if x == 2; false }
  a = [1, 2, 3, 4]
  r = a.reject { |x| a.pop; false }
  assert_equal [1, 2], r
  a = [1, 2, 3]
  seen = []
  a.each_with_index { |x, i| seen << [x, i]; a << 9 if i == 0 }
  assert_equal [[1, 0], [2, 1], [3, 2], [9, 3]], seen
  a = [1, 2, 3]
  assert_equal 3, a.inject { |s, x| a.pop; s + x }
  a = [1, 2, 3]
  assert_equal 2, a.count { |x| a.pop if x == 1; true }
  f = [1, 2].freeze
  assert_equal [2, 4], f.map { |x| x * 2 }
end

test "Symbol blocks" do
  assert_equal ["1", "2"], [1, 2].map(&:to_s)
  assert_equal [1, 3], [1, 2, 3].select(&:odd?)
  assert_equal [2], [1, 2, 3].reject(&:odd?)
  assert_equal 2, [1, 2, 3].count(&:odd?)
  assert_equal 6, [1, 2, 3].inject(&:+)
  seen = []
  [:a, :b].each_with_index(&->(x, i) { seen << [x, i] })
  assert_equal [[:a, 0], [:b, 1]], seen
  k = Class.new { def initialize(v) = @v = v; def v = @v; def big? = @v > 1 }
  objs = [k.new(1), k.new(2), 3]
  assert_equal [1, 2], objs.first(2).map(&:v)
  assert_equal 1, objs.first(2).count(&:big?)
  e = assert_raise(NoMethodError) { objs.map(&:v) }
  assert_match(/v/, e.message)
  assert_equal [1], [1, 2].map { |x| break [x] }
end

test "without a block: enumerators as before" do
  e = [1, 2, 3].map
  assert_equal Enumerator, e.class
  assert_equal 3, e.size
  assert_equal [2, 4, 6], e.each { |x| x * 2 }
  assert_equal [[1, 0], [2, 1]], [1, 2].each_with_index.to_a
  assert_equal [2], [1, 2].select.each { |x| x.even? }
  assert_equal 6, [1, 2, 3].inject(:+)
  assert_equal 16, [1, 2, 3].inject(10, :+)
  assert_equal 3, [1, 2, 3].count
  assert_equal 1, [1, 2, 3].count(2)
  blk = proc { |x| x + 1 }
  assert_equal [2, 3], [1, 2].map(&blk)
  assert_equal 3, [1, 2].inject(&proc { |s, x| s + x })
  assert_equal [[1, 0]], [1].each_with_index.map { |x, i| [x, i] }
end

test "subclasses, redefinitions and other receivers" do
  sub = Class.new(Array) { def each; yield :from_each; self; end }
  s = sub.new([1, 2])
  assert_equal [:from_each], s.each_with_index.map { |x, i| x }
  got = []
  s.each_with_index { |x, i| got << [x, i] }
  assert_equal [[:from_each, 0]], got
  assert_equal :from_each, s.inject { |a, b| [a, b] }
  assert_equal [2, 4], s.map { |x| x * 2 }
  h = { a: 1, b: 2 }
  assert_equal 3, h.inject(0) { |acc, (k, v)| acc + v }
  assert_equal [[[:a, 1], 0], [[:b, 2], 1]], h.each_with_index.map { |kv, i| [kv, i] }
  assert_equal 6, (1..3).inject { |a, b| a + b }
  assert_equal [2, 4], (1..2).map { |x| x * 2 }
  m = Module.new { def map; :refined_map; end }
  o = [1, 2]
  o.extend(m)
  assert_equal :refined_map, o.map { |x| x }
end

test "a fiber switches inside the block" do
  f = Fiber.new do
    r = [1, 2, 3].map { |x| Fiber.yield(x) * 10 }
    s = [4, 5].inject(0) { |acc, x| acc + Fiber.yield(x) }
    w = []
    [:a, :b].each_with_index { |x, i| w << [Fiber.yield(x), i] }
    [r, s, w]
  end
  got = [f.resume]
  got << f.resume(1) << f.resume(2) << f.resume(3)
  got << f.resume(40) << f.resume(50)
  got << f.resume(:x)
  got << f.resume(:y)
  assert_equal [1, 2, 3, 4, 5, :a, :b, [[10, 20, 30], 90, [[:x, 0], [:y, 1]]]], got
end

test "nested iterators and GC during iterations" do
  m = [1, 2, 3].map { |x| [10, 20].map { |y| x * y }.inject { |a, b| a + b } }
  assert_equal [30, 60, 90], m
  grid = [[1, 2], [3, 4]].each_with_index.map { |row, i| row.select { |v| v.odd? }.map { |v| [v, i] } }
  assert_equal [[[1, 0]], [[3, 1]]], grid
  strs = (0...300).to_a.map { |i| GC.start if i % 100 == 0; "s" * (i % 5) }
  assert_equal 300, strs.size
  assert_equal "ssss", strs[4]
  kept = (0...300).to_a.select { |i| GC.start if i % 100 == 0; "x#{i}".end_with?("7") }
  assert_equal 30, kept.size
  total = (0...200).to_a.inject("") { |s, i| GC.start if i % 50 == 0; s.size > 50 ? "" : s + i.to_s }
  assert_equal String, total.class
  def deep(d) = d == 0 ? [0] : [d, d].map { |x| deep(x - 1) }.inject { |a, b| a + b }
  assert_equal 2**8, deep(8).size
end

test "break out of a block whose iterator was called from Rust" do
  r = [[1, 2], [3, 4]].each_slice(1).map { |(pair)| pair.map { |x| break x * 100 if x == 3; x } }
  assert_equal [[1, 2], 300], r
  assert_equal [2, 3], [1, 2].then { |a| a.map { |x| x + 1 } }
end

test "Array.new with a size and a block" do
  assert_equal [0, 1, 4], Array.new(3) { |i| i * i }
  assert_equal [], Array.new(0) { raise "not called" }
  assert_equal [nil, nil], Array.new(2) { }
  assert_equal [[0, nil], [1, nil]], Array.new(2) { |a, b| [a, b] }
  assert_equal :b, Array.new(5) { |i| break :b if i == 2; i }
  assert_equal [0, nil, 2], Array.new(3) { |i| next if i == 1; i }
  def new_return = Array.new(3) { |i| return [:r, i] if i == 1 }
  assert_equal [:r, 1], new_return
  tries = 0
  assert_equal [[0, 2], [1, 3]], Array.new(2) { |i| tries += 1; redo if tries == 1; [i, tries] }
  e = assert_raise(RuntimeError) { Array.new(2) { raise "n" } }
  assert_match(/in .(Array#)?initialize'/, e.backtrace[1])
  assert_match(/in .(Array\.|Class#)?new'/, e.backtrace[2])
  assert_raise(ArgumentError) { Array.new(-1) { } }
  assert_equal [0, 1], Array.new(2.0.to_i) { |i| i }
  assert_equal ["0", "1"], Array.new(2, &:to_s)
  procs = Array.new(3) { |i| proc { i } }
  assert_equal [0, 1, 2], procs.map(&:call)
  sub = Class.new(Array)
  s = sub.new(2) { |i| i + 1 }
  assert_equal sub, s.class
  assert_equal [1, 2], s
  grid = Array.new(2) { |i| Array.new(2) { |j| [i, j] } }
  assert_equal [[[0, 0], [0, 1]], [[1, 0], [1, 1]]], grid
  big = Array.new(1000) { |i| GC.start if i % 400 == 0; "s#{i}" }
  assert_equal "s999", big.last
  f = Fiber.new { Array.new(2) { |i| Fiber.yield(i) + 1 } }
  assert_equal [0, 1, [11, 21]], [f.resume, f.resume(10), f.resume(20)]
  Array.class_eval do
    alias_method :carmine_saved_initialize, :initialize
    def initialize(*a, &b) = carmine_saved_initialize(*a) { |i| b.call(i) * 10 }
  end
  begin
    assert_equal [0, 10], Array.new(2) { |i| i }
  ensure
    Array.class_eval do
      alias_method :initialize, :carmine_saved_initialize
      remove_method :carmine_saved_initialize
    end
  end
  assert_equal [0, 1], Array.new(2) { |i| i }
end
