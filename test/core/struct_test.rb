require_relative "../assert"

Point = Struct.new(:x, :y) do
  def dist2 = x * x + y * y
  alias_method :abscissa, :x
end

test "construction: positional, keywords, []" do
  assert_equal [1, 2], Point.new(1, 2).to_a
  assert_equal [1, nil], Point.new(1).to_a
  assert_equal [1, 2], Point[1, 2].to_a
  assert_equal [1, 2], Point.new(x: 1, y: 2).to_a
  assert_equal [{x: 1}, nil], Point.new({x: 1}).to_a
  assert_raise(ArgumentError, "struct size differs") { Point.new(1, 2, 3) }
  assert_raise(ArgumentError, "unknown keywords: z") { Point.new(z: 1) }
  assert_raise(ArgumentError, "unknown keywords: z, w") { Point.new(x: 0, z: 1, w: 2) }
  assert_raise(ArgumentError, "struct size differs") { Point.new(1, 2, {z: 3}) }
  re = Point.new(5, 6)
  re.send(:initialize, 7)
  assert_equal [7, nil], re.to_a
  assert_equal [:x, :y], Point.members
  assert_nil Point.keyword_init?
end

test "keyword_init" do
  k = Struct.new(:a, :b, keyword_init: true)
  assert_equal [1, nil], k.new(a: 1).to_a
  assert_true k.keyword_init?
  assert_match(/\(keyword_init: true\)\z/, k.inspect)
  assert_raise(ArgumentError, "wrong number of arguments (given 1, expected 0)") { k.new(1) }
  f = Struct.new(:a, keyword_init: false)
  assert_equal [{a: 1}], f.new(a: 1).to_a
  assert_false f.keyword_init?
  assert_raise(ArgumentError, "unknown keyword: :foo") { Struct.new(:a, foo: 1) }
end

test "accessors, [] and []=" do
  p = Point.new(1, 2)
  p.x = 5
  assert_equal 5, p.x
  assert_equal 5, p.abscissa
  assert_equal 29, p.dist2
  assert_equal [2, 2, 5, 2], [p[:y], p["y"], p[0], p[-1]]
  p[:y] = 7
  p[1] = 8
  assert_equal 8, p.y
  assert_raise(NameError, "no member 'z' in struct") { p[:z] }
  assert_raise(IndexError, "offset 5 too large for struct(size:2)") { p[5] }
  assert_raise(IndexError, "offset -5 too small for struct(size:2)") { p[-5] = 1 }
  assert_raise(TypeError) { p[nil] }
end

test "conversion and iteration" do
  p = Point.new(1, 2)
  assert_equal({x: 1, y: 2}, p.to_h)
  assert_equal({"x" => 2, "y" => 4}, p.to_h { |k, v| [k.to_s, v * 2] })
  assert_equal [1, 2], p.deconstruct
  assert_equal [1, 2], p.values
  assert_equal [1, 2], p.each.to_a
  assert_equal [[:x, 1], [:y, 2]], p.each_pair.to_a
  assert_equal [1], p.select(&:odd?)
  assert_equal [1], p.filter(&:odd?)
  assert_equal [1, 1, 2, nil], p.values_at(0, 0..2)
  assert_raise(IndexError, "offset 3 too large for struct(size:2)") { p.values_at(3) }
  assert_equal 2, p.size
  assert_equal 2, p.each.size
  assert_equal 3, p.sum
  assert_equal({x: 1}, p.deconstruct_keys([:x]))
  assert_equal({x: 1, y: 2}, p.deconstruct_keys(nil))
  assert_equal({}, p.deconstruct_keys([:x, :y, :z]))
  assert_equal({0 => 1}, p.deconstruct_keys([0]))
  assert_raise(TypeError, "wrong argument type String (expected Array or nil)") { p.deconstruct_keys("x") }
end

test "dig" do
  p = Point.new({a: [10]}, nil)
  assert_equal 10, p.dig(:x, :a, 0)
  assert_nil p.dig(:z)
  assert_nil p.dig(:y, :q)
end

test "equality and hash" do
  assert_equal Point.new(1, 2), Point.new(1, 2)
  assert_true Point.new(1, 2).eql?(Point.new(1, 2))
  assert_false Point.new(1, 2).eql?(Point.new(1.0, 2))
  assert_true Point.new(1, 2) == Point.new(1.0, 2)
  assert_equal Point.new(1, 2).hash, Point.new(1, 2).hash
  other = Struct.new(:x, :y)
  assert_false Point.new(1, 2) == other.new(1, 2)
end

test "inspect, named and anonymous structs" do
  assert_equal "#<struct Point x=1, y=2>", Point.new(1, 2).inspect
  assert_equal "#<struct a=1>", Struct.new(:a).new(1).inspect
  Struct.new("Named", :q)
  assert_equal "#<struct Struct::Named q=3>", Struct::Named.new(3).to_s
  r = Point.new(1, nil)
  r.y = r
  assert_equal "#<struct Point x=1, y=#<struct Point:...>>", r.inspect
  assert_equal "#<struct :\"a b\"=1>", Struct.new(:"a b").new(1).inspect
end

test "definition errors" do
  assert_raise(NameError, "identifier animal needs to be constant") { Struct.new("animal", :a) }
  assert_raise(ArgumentError, "duplicate member: a") { Struct.new(:a, :a) }
  assert_raise(TypeError, "1.0 is not a symbol nor a string") { Struct.new(:a, 1.0) }
  assert_raise(ArgumentError, "invalid struct member: a=") { Struct.new(:a=) }
  c = Struct.new
  assert_equal Struct, c.superclass
  assert_equal [], c.new.to_a
end

test "frozen structs" do
  p = Point.new(1, 2).freeze
  assert_raise(FrozenError, "can't modify frozen Point: #<struct Point x=1, y=2>") { p.x = 3 }
  assert_raise(FrozenError) { p[:x] = 3 }
end

test "dup, clone and subclasses" do
  a = Point.new(1, 2)
  b = a.dup
  b.x = 9
  assert_equal 1, a.x
  sub = Class.new(Point) do
    def sum2 = x + y
  end
  s = sub.new(3, 4)
  assert_equal 7, s.sum2
  assert_equal [:x, :y], sub.members
  assert_kind_of Point, s
end

test "pattern matching" do
  r = case Point.new(1, 2)
      in [x, y] then [:array, x, y]
      end
  assert_equal [:array, 1, 2], r
  r = case Point.new(1, 2)
      in {x:, y:} then [:hash, x, y]
      end
  assert_equal [:hash, 1, 2], r
end

test "aliases" do
  assert_equal Struct.instance_method(:to_a), Struct.instance_method(:deconstruct)
  assert_equal Struct.instance_method(:size), Struct.instance_method(:length)
end

test "accessors by position, through aliases, past the sixteenth member" do
  wide = Struct.new(*(0..19).map { |i| :"m#{i}" })
  w = wide.new(*0..19)
  assert_equal [0, 15, 16, 19], [w.m0, w.m15, w.m16, w.m19]
  w.m3 = :a
  w.m18 = :b
  assert_equal [:a, :b], [w[3], w[18]]
  klass = Struct.new(:a, :b) do
    alias_method :bee, :b
    alias_method :bee=, :b=
  end
  k = klass.new(1, 2)
  k.bee = 5
  assert_equal [5, 5], [k.b, k.bee]
  assert_equal 5, klass.instance_method(:b).bind(Class.new(klass).new(0, 5)).call
  assert_equal 5, k[-1]
  assert_raise(IndexError) { k[2] }
  k.freeze
  assert_raise(FrozenError) { k.a = 3 }
end

test "== and eql? of members that need and need not a method call" do
  pair = Struct.new(:a, :b)
  assert_equal true, pair.new(1, 2.0) == pair.new(1, 2)
  assert_equal false, pair.new(1, 2.0).eql?(pair.new(1, 2))
  assert_equal true, pair.new(:x, "s").eql?(pair.new(:x, "s"))
  a = pair.new(1, nil)
  a.b = a
  b = pair.new(1, nil)
  b.b = b
  assert_equal true, a == b
end
