# Leaf builtins called from a call site's cache without a frame (interp/leaf.rs), and procs
# given as blocks or called with `call`, run in the dispatch loop (interp/ops.rs).
require_relative "../assert"

test "leaf builtins give the builtin's results at a repeated call site" do
  a = []
  s = "héllo"
  out = []
  6.times do |i|
    a << i
    a.push(i * 2)
    out << [a.last, a.first, a.pop, s.length, s.bytesize, s.getbyte(i - 3), i.zero?, i.even?, i.odd?,
            i <=> 3, i ^ 5, 64 >> i, i.nil?, nil.nil?, i.class, i.frozen?, i.equal?(3),
            i.is_a?(Integer), i.instance_of?(String), {a: i}.size]
  end
  assert_equal [0, 0, 0, 5, 6, 108, true, true, false, -1, 5, 64, false, true, Integer, true, false, true, false, 1], out[0]
  assert_equal [10, 0, 10, 5, 6, 169, false, false, true, 1, 0, 2, false, true, Integer, true, false, true, false, 1], out[5]
  assert_equal [0, 1, 2, 3, 4, 5], a
  assert_equal 0, a.shift
end

test "leaf builtins at the edges: negative and out-of-range indexes, empty arrays, big integers" do
  big = 2**70
  out = []
  [[[], "", 0], [[7], "ab", -3], [[1, 2, 3], "xyz", big], [[], "é", -big]].each do |a, s, n|
    out << [s.getbyte(-1), s.getbyte(-4), s.getbyte(2), s.getbyte(1), a.first, a.last, a.dup.pop, a.dup.shift,
            n.even?, n.odd?, n.zero?, n <=> 1, 1 <=> n, n ^ 6, n >> 2, -9 >> 70, 9 >> 63, n.class, a.frozen?]
  end
  assert_equal [nil, nil, nil, nil, nil, nil, nil, nil, true, false, true, -1, 1, 6, 0, -1, 0, Integer, false], out[0]
  assert_equal [98, nil, nil, 98, 7, 7, 7, 7, false, true, false, -1, 1, -5, -1, -1, 0, Integer, false], out[1]
  assert_equal [122, nil, 122, 121, 1, 3, 3, 1, true, false, false, 1, -1, big ^ 6, big >> 2, -1, 0, Integer, false], out[2]
  assert_equal [169, nil, nil, 169, nil, nil, nil, nil, true, false, false, -1, 1, -big ^ 6, -big >> 2, -1, 0, Integer, false], out[3]
end

test "a leaf call that would raise takes the general path, with the builtin's frame" do
  frozen = [1].freeze
  errors = []
  3.times do |i|
    begin
      (i == 2 ? frozen : [i]).push(1)
    rescue FrozenError => e
      errors << e.backtrace[0]
    end
    begin
      "abc".getbyte(i == 2 ? "x" : i)
    rescue TypeError => e
      errors << e.backtrace[0]
    end
    begin
      3.is_a?(i == 2 ? 4 : Integer)
    rescue TypeError => e
      errors << e.message
    end
    begin
      1 >> (i == 2 ? -(2**70) : i)
    rescue RangeError => e
      errors << e.class
    end
  end
  assert_equal 4, errors.size
  assert errors[0].include?("push"), errors[0]
  assert errors[1].include?("getbyte"), errors[1]
  assert_equal "class or module required", errors[2]
end

test "a redefined builtin is called instead of the leaf" do
  klass = Class.new(Array) { def last = :mine }
  vals = [[1, 2], klass.new([3])].map { |x| x.last }
  assert_equal [2, :mine], vals
end

def leaf_pass_on(&blk) = leaf_twice(&blk)
def leaf_twice
  yield 1
  yield 2
end
def leaf_takes(a, &blk) = [a, blk]

test "procs passed with & and called with call" do
  seen = []
  3.times { leaf_pass_on { |x| seen << x } }
  assert_equal [1, 2] * 3, seen
  pr = proc { |x, y| [x, y] }
  assert_equal [[1, 2], [1, nil], [3, 4]], [pr.call(1, 2), pr.(1), pr.call([3, 4])]
  l = lambda { |x| x * 2 }
  assert_equal [4, 6], [l.call(2), l[3]]
  assert_raise(ArgumentError) { l.call(1, 2) }
  assert_raise(LocalJumpError) { proc { break 1 }.call }
  assert_equal [5, nil], leaf_takes(5)
  a, b = leaf_takes(6) { 7 }
  assert_equal [6, 7], [a, b.call]
  assert_equal 3, leaf_twice(&l).then { |_| 3 }
end

def leaf_traced_last(a) = a.last

test "a TracePoint sees a leaf builtin's c_call event (the general path gives it)" do
  events = []
  tp = TracePoint.new(:c_call) { |t| events << t.method_id }
  2.times { leaf_traced_last([1, 2]) }
  tp.enable { leaf_traced_last([1, 2]) }
  assert_equal [:last], events
end

def leaf_append(s, t) = s << t
def leaf_plus(s, t) = s + t

test "String#<< and String#+ on Strings, and what still takes the full call" do
  s = +"ab"
  3.times { leaf_append(s, "c") }
  assert_equal "abccc", s
  assert_equal "abcccabccc", leaf_append(s, s)
  assert_equal ["xy", "x"], [leaf_plus("x", "y"), leaf_plus("x", "")]
  u = leaf_plus("é", "a".b)
  assert_equal [Encoding::UTF_8, "éa"], [u.encoding, u]
  assert_raise(Encoding::CompatibilityError) { leaf_append(+"é", "\xff".b) }
  assert_raise(Encoding::CompatibilityError) { leaf_plus("é", "\xff".b) }
  assert_raise(FrozenError) { leaf_append("frozen".freeze, "x") }
  sub = Class.new(String)
  assert_equal ["ab", String], [leaf_plus(sub.new("a"), sub.new("b")), leaf_plus(sub.new("a"), "b").class]
  assert_equal "a!", leaf_append(+"a", sub.new("!"))
  assert_equal "a\u00e9", leaf_append(+"a", 0xe9)
  assert_raise(TypeError) { leaf_plus("a", 1) }
  to_str = Object.new
  def to_str.to_str = "T"
  assert_equal ["aT", "bT"], [leaf_plus("a", to_str), leaf_append(+"b", to_str)]
end

# Ruby 3.4's chilled literals (CRuby 3.1 has none: there the strings are plain and no
# warning is printed).
test "String#<< on chilled literals warns as the full call does" do
  old = Warning[:deprecated]
  Warning[:deprecated] = true
  err = Object.new
  def err.write(*parts) = ((@text ||= +"") << parts.join; parts.sum { |x| x.to_s.bytesize })
  def err.text = @text.to_s
  saved = $stderr
  $stderr = err
  begin
    3.times do
      s = "chilled"
      leaf_append(s, "!")
      s << "?"
      assert_equal "chilled!?", s
    end
  ensure
    $stderr = saved
    Warning[:deprecated] = old
  end
  assert_equal 3, err.text.scan(/literal string will be frozen in the future/).size if RUBY_VERSION >= "3.4"
end
