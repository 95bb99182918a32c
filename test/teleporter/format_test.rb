# Teleporter's copy format, through Teleporter.dump / Teleporter.load (the encoding that
# Tunnel#send writes and Tunnel#recv reads).
require_relative "../assert"
require "teleporter"

TpStruct = Struct.new(:a, :b)
TpData = Data.define(:x, :y)
class TpPoint
  attr_accessor :x, :y
  def initialize(x, y)
    @x = x
    @y = y
  end

  def ==(o)
    o.class == self.class && o.x == x && o.y == y
  end
end
class TpStr < String; end
class TpArr < Array; end
class TpHash < Hash; end
class TpError < StandardError; end
class TpNotStr; end
TpThree3 = Struct.new(:a, :b, :c)
module TpMod; end

def round_trip(v)
  Teleporter.load(Teleporter.dump(v))
end

test "Teleporter.dump gives a binary String that starts with the format version" do
  s = Teleporter.dump(1)
  assert_equal Encoding::BINARY, s.encoding
  assert_equal 1, s.getbyte(0)
  assert_kind_of Class, Teleporter::Error
  assert_equal StandardError, Teleporter::Error.superclass
end

test "immediates" do
  [nil, true, false, 0, 1, -1, -32, 95, 96, -33, 127, 128, 2**40, -(2**40), 2**62 - 1, -(2**62),
   0.0, -0.0, 1.5, -2.25, 1e100, 1e-300, Float::INFINITY, -Float::INFINITY, Float::MAX, Float::MIN,
   :sym, :"with space", :"ü", :+, :[]=].each do |v|
    r = round_trip(v)
    assert_equal v, r
    assert_same v, r if v.is_a?(Symbol) || v.is_a?(Integer)
  end
  assert_true round_trip(Float::NAN).nan?
  assert_equal "-0.0", round_trip(-0.0).to_s
end

test "small Integers take two bytes, Floats ten, Symbols their name" do
  assert_equal 2, Teleporter.dump(5).bytesize
  assert_equal 10, Teleporter.dump(2.5).bytesize
  assert_equal 2 + 1 + 3, Teleporter.dump(:abc).bytesize
end

test "Bignums" do
  [2**62, -(2**62) - 1, 2**64, 2**64 - 1, -(2**64), 3**200, -(7**300), 2**1000 + 1].each do |v|
    assert_equal v, round_trip(v)
  end
end

test "Rational and Complex" do
  [Rational(1, 3), Rational(-5, 7), Rational(2**70, 3), Complex(1, 2), Complex(1.5, -2.5),
   Complex(Rational(1, 2), 2**80), Complex(0, 0.0)].each do |v|
    r = round_trip(v)
    assert_equal v, r
    assert_equal v.class, r.class
    assert_true r.frozen?
  end
end

test "Strings keep their bytes and encoding" do
  ["", "abc", "ü€", "x" * 100, "y" * 100_000, "\xff\x00".b, "abc".force_encoding("US-ASCII"),
   "日本".encode("Shift_JIS"), "d".encode("UTF-16LE"), "\xff".force_encoding("UTF-8")].each do |s|
    r = round_trip(s)
    assert_equal s.b, r.b
    assert_equal s.encoding, r.encoding
    assert_false r.frozen?
  end
end

test "Arrays and Hashes" do
  v = [1, [2, [3, []]], "s", :t, nil, 2.5, { a: 1, "b" => [2], 3 => { 4 => 5 } }]
  assert_equal v, round_trip(v)
  big = (1..300).map { |i| [i, i * 1.5, 2**70 + i] }
  assert_equal big, round_trip(big)
  h = round_trip({ "k" => 1 })
  assert_true h.keys[0].frozen?
end

test "Arrays of only Fixnums or only Floats are packed" do
  fixnum_max = 2**62 - 1
  fixnum_min = -(2**62)
  [[(1..8).to_a, 1], [(-128..127).to_a, 1], [[0] * 7 + [128], 2], [[-129] + [0] * 7, 2],
   [(1..1000).to_a, 2], [[2**15] * 8, 4], [[-(2**31)] * 8, 4], [[2**31] * 8, 8],
   [[fixnum_max, fixnum_min] * 4, 8]].each do |a, width|
    s = Teleporter.dump(a)
    assert_equal 0x18, s.getbyte(1)
    assert_equal width, s.getbyte(2)
    r = Teleporter.load(s)
    assert_equal a, r
    assert_equal Array, r.class
  end
  floats = (1..1000).map { |i| i * 1.5 }
  s = Teleporter.dump(floats)
  assert_equal 0x19, s.getbyte(1)
  assert_equal floats, Teleporter.load(s)
  # Boxed Floats (outside the flonum range), NaN, -0.0 and flonums mixed.
  odd = [1e300, -1e-300, 0.0, -0.0, Float::INFINITY, 2.5, Float::MAX, Float::MIN, 1.0]
  r = Teleporter.load(Teleporter.dump(odd + [Float::NAN]))
  assert_equal odd, r[0, odd.size]
  assert_true r.last.nan?
  assert_equal "-0.0", r[3].to_s
  assert_equal 0x19, Teleporter.dump(odd).getbyte(1)
  # Short arrays and mixed ones are written element by element.
  assert_equal 0x0e, Teleporter.dump([1, 2, 3]).getbyte(1)
  assert_equal 0x0e, Teleporter.dump((1..10).to_a + [1.5]).getbyte(1)
  assert_equal 0x0e, Teleporter.dump((1..10).to_a + [2**70]).getbyte(1)
  # A packed Array keeps its identity, its subclass and its instance variables.
  a = (1..10).to_a
  x, y = Teleporter.load(Teleporter.dump([a, a]))
  assert_same x, y
  assert_equal TpArr, round_trip(TpArr.new((1..10).to_a)).class
  t = (1..10).map(&:to_f)
  t.instance_variable_set(:@tag, :t)
  assert_equal :t, round_trip(t).instance_variable_get(:@tag)
end

test "packed records reject bad widths, short data and out-of-range values" do
  assert_raise(Teleporter::Error, /bad packed Integer width 3/) { Teleporter.load("\x01\x18\x03\x01abc".b) }
  assert_raise(Teleporter::Error, "truncated data") { Teleporter.load("\x01\x18\x02\x05\x00\x00".b) }
  assert_raise(Teleporter::Error, "truncated data") { Teleporter.load("\x01\x19\x02".b + "\x00" * 15) }
  assert_raise(Teleporter::Error, /out of the Fixnum range/) { Teleporter.load("\x01\x18\x08\x01".b + [2**62].pack("q<")) }
  assert_equal [], Teleporter.load("\x01\x18\x01\x00".b)
  assert_equal [-1, 1], Teleporter.load("\x01\x18\x04\x02".b + [-1, 1].pack("l<l<"))
end

test "Bignums of every limb count, alone and in Arrays" do
  vals = [2**64, -(2**64), 2**64 - 1 + 2**64 * 5, 2**128 - 1, 2**128, -(2**190) + 3, 10**100, -(10**100)]
  vals.each { |v| assert_equal v, round_trip(v) }
  arr = vals * 3
  assert_equal arr, round_trip(arr)
  # A Bignum record that holds a Fixnum's value loads as the Fixnum.
  assert_equal 5, Teleporter.load("\x01\x05\x00\x01".b + [5].pack("Q<"))
  assert_equal(-5, Teleporter.load("\x01\x0e\x01\x05\x01\x01".b + [5].pack("Q<"))[0])
  assert_equal 0, Teleporter.load("\x01\x05\x01\x00".b)
end

test "a Hash keeps its default value and compare_by_identity" do
  h = Hash.new(7)
  h[1] = 2
  r = round_trip(h)
  assert_equal({ 1 => 2 }, r)
  assert_equal 7, r[:missing]
  i = {}.compare_by_identity
  a = "a"
  i[a] = 1
  i["a".dup] = 2
  r = round_trip(i)
  assert_true r.compare_by_identity?
  assert_equal 2, r.size
  assert_raise(TypeError, "can't teleport Hash with a default proc") { Teleporter.dump(Hash.new { 1 }) }
end

test "Ranges" do
  [1..5, 1...5, (1..), (..3), "a".."z", 1.5..2.5, (2**70)..(2**71)].each do |r|
    x = round_trip(r)
    assert_equal r, x
    assert_equal r.exclude_end?, x.exclude_end?
  end
end

test "Struct and Data instances" do
  s = round_trip(TpStruct.new(1, "x"))
  assert_equal TpStruct.new(1, "x"), s
  assert_false s.frozen?
  d = round_trip(TpData.new(x: 1, y: [2]))
  assert_equal TpData.new(x: 1, y: [2]), d
  assert_true d.frozen?
end

test "user objects with instance variables" do
  p = round_trip(TpPoint.new(1, "a"))
  assert_equal TpPoint, p.class
  assert_equal [1, "a"], [p.x, p.y]
  e = round_trip(TpError.new("boom"))
  assert_equal [TpError, "boom"], [e.class, e.message]
end

test "subclasses of String, Array and Hash, and instance variables on them" do
  assert_equal TpStr, round_trip(TpStr.new("abc")).class
  assert_equal "abc", round_trip(TpStr.new("abc"))
  assert_equal TpArr, round_trip(TpArr[1, 2]).class
  h = TpHash.new
  h[1] = 2
  assert_equal [TpHash, { 1 => 2 }], round_trip(h).then { [_1.class, _1.to_h] }
  s = +"tagged"
  s.instance_variable_set(:@tag, [1, 2])
  assert_equal [1, 2], round_trip(s).instance_variable_get(:@tag)
  a = [1]
  a.instance_variable_set(:@n, a)
  r = round_trip(a)
  assert_same r, r.instance_variable_get(:@n)
end

test "classes and modules by name" do
  assert_same String, round_trip(String)
  assert_same TpMod, round_trip(TpMod)
  assert_same Comparable, round_trip(Comparable)
  assert_raise(TypeError, /can't teleport anonymous class/) { Teleporter.dump(Class.new) }
  assert_raise(TypeError, /can't teleport anonymous class/) { Teleporter.dump(Class.new.new) }
end

test "shared references and cycles keep their identity" do
  s = "s"
  x, y = round_trip([s, s])
  assert_same x, y
  a = [1]
  a << a
  b = round_trip(a)
  assert_same b, b[1]
  h = {}
  h[:self] = h
  h2 = round_trip(h)
  assert_same h2, h2[:self]
  o = TpPoint.new(nil, nil)
  o.x = o
  o.y = [o, s, s]
  r = round_trip(o)
  assert_same r, r.x
  assert_same r, r.y[0]
  assert_same r.y[1], r.y[2]
  st = TpStruct.new(nil, nil)
  st.a = st
  r = round_trip(st)
  assert_same r, r.a
end

test "unsupported objects raise TypeError naming the class" do
  [[proc {}, "Proc"], [method(:puts), "Method"], [Thread.current, "Thread"], [Mutex.new, "Thread::Mutex"],
   [$stdout, "IO"], [/re/, "Regexp"], [Object.new.tap { |o| def o.x; end }, "Object with singleton methods"],
   [[1, [2, proc {}]], "Proc"]].each do |obj, name|
    assert_raise(TypeError, "can't teleport #{name}") { Teleporter.dump(obj) }
  end
end

test "a missing class on load raises ArgumentError, a mismatched one TypeError" do
  bytes = Teleporter.dump(TpPoint.new(1, 2))
  assert_raise(ArgumentError, "undefined class/module TqPoint") { Teleporter.load(bytes.sub("TpPoint", "TqPoint")) }
  bytes = Teleporter.dump(TpStruct.new(1, 2))
  assert_raise(TypeError, "TpNotStr is not a Struct or Data class") { Teleporter.load(bytes.sub("TpStruct", "TpNotStr")) }
  assert_raise(TypeError, "TpThree3 has 3 members, the data 2") { Teleporter.load(bytes.sub("TpStruct", "TpThree3")) }
end

test "malformed input raises Teleporter::Error" do
  assert_raise(Teleporter::Error, /incompatible format version/) { Teleporter.load(Marshal.dump(1)) }
  assert_raise(Teleporter::Error, "truncated data") { Teleporter.load("") }
  assert_raise(Teleporter::Error, "truncated data") { Teleporter.load(Teleporter.dump("abc")[0..-2]) }
  assert_raise(Teleporter::Error, /extra bytes/) { Teleporter.load(Teleporter.dump(1) + "x") }
  assert_raise(Teleporter::Error, /unknown tag/) { Teleporter.load("\x01\x7f".b) }
  assert_raise(Teleporter::Error, /undefined object/) { Teleporter.load("\x01\x13\x05".b) }
  assert_raise(Teleporter::Error, /undefined symbol/) { Teleporter.load("\x01\x0d\x00".b) }
  assert_raise(Teleporter::Error, "truncated data") { Teleporter.load("\x01\x0e\xff\xff\xff\xff\x0f".b) }
  assert_raise(Teleporter::Error, /integer too long/) { Teleporter.load("\x01\x03".b + "\xff".b * 11) }
  assert_raise(TypeError) { Teleporter.load(nil) }
end

test "deep nesting raises SystemStackError both ways (in a Fiber: a smaller native stack)" do
  # A Fiber's stack ends well before 20,000 levels; under GC stress every allocation
  # collects, so the graph is no deeper than needed.
  n = ENV["CARMINE_GC_STRESS"] ? 20_000 : 200_000
  a = []
  n.times { a = [a] }
  deep = "\x01".b + "\x0e\x01".b * n + "\x00".b
  caught = Fiber.new do
    [begin; Teleporter.dump(a); rescue SystemStackError => e; e.class; end,
     begin; Teleporter.load(deep); rescue SystemStackError => e; e.class; end]
  end.resume
  assert_equal [SystemStackError, SystemStackError], caught
  h = {}
  1000.times { h = { k: h } }
  assert_equal h, Fiber.new { round_trip(h) }.resume
end

test "random and mutated encodings fail only with Ruby exceptions" do
  rng = Random.new(15)
  samples = [[1, 2.5, "abc"], { a: [1, 2**70], "s" => Rational(1, 3) }, TpPoint.new(TpStruct.new(1, 2), 1..3),
             [TpData.new(x: 1, y: Complex(1, 2)), :sym, :sym, "日本".encode("Shift_JIS")], TpStr.new("x")]
  encodings = samples.map { |v| Teleporter.dump(v) }
  outcomes = Hash.new(0)
  # Under GC stress every allocation collects: fewer inputs exercise the same paths.
  rounds = ENV["CARMINE_GC_STRESS"] ? 400 : 4000
  rounds.times do |i|
    bytes = if i % 4 == 0
      Array.new(rng.rand(1..40)) { rng.rand(256) }.pack("C*").tap { |b| b.setbyte(0, 1) if rng.rand(2) == 0 }
    else
      b = encodings[rng.rand(encodings.size)].dup
      rng.rand(1..4).times do
        case rng.rand(3)
        when 0 then b.setbyte(rng.rand(b.bytesize), rng.rand(256)) unless b.empty?
        when 1 then b = b.byteslice(0, rng.rand(b.bytesize + 1))
        else b.insert(rng.rand(b.bytesize + 1), rng.rand(256).chr)
        end
      end
      b
    end
    begin
      Teleporter.load(bytes)
      outcomes[:ok] += 1
    rescue StandardError => e
      outcomes[e.class] += 1
    end
  end
  assert outcomes[Teleporter::Error] > rounds / 4, outcomes.inspect
end
