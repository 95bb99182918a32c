require_relative "../assert"

# Objects of every core type, built the same way by Carmine and by CRuby (this source is
# evaluated by both), for byte-for-byte comparison of their dumps. The first Time carries
# every instance variable a Time dump can have, so CRuby numbers them in the order Carmine
# writes them (CRuby orders a String's instance variables by first use in the process).
CASES_SRC = <<~'RUBY'
  require "set"
  class MPoint
    def initialize(x, y) = (@x = x; @y = y)
  end
  MStruct = Struct.new(:a, :b)
  class MUser
    def initialize(v) = @v = v
    def _dump(_level) = @v.to_s
    def self._load(s) = new(s.to_i)
  end
  class MMarsh
    def initialize(v) = @v = v
    def marshal_dump = [@v]
    def marshal_load(a) = @v = a[0]
  end
  class MStr < String; end
  class MArr < Array; end
  class MHash < Hash; end
  class MRe < Regexp; end
  module MMod; end
  module MNest; class Inner; end; end

  def marshal_cases
    shared = "shared"
    rec = [1]
    rec << rec
    with_default = Hash.new(7)
    with_default[:a] = 1
    identity = {}.compare_by_identity
    identity["k"] = 1
    str_ivar = +"iv"
    str_ivar.instance_variable_set(:@note, [1, :two])
    obj = MPoint.new(1, "y")
    bt = StandardError.new("with backtrace")
    bt.set_backtrace(["a.rb:1", "b.rb:2"])
    st_ivar = MStruct.new(shared, [shared])
    st_ivar.instance_variable_set(:@extra, 1.25)
    h_ivar = Hash.new(:dflt)
    h_ivar["k"] = shared
    h_ivar.instance_variable_set(:@meta, { a: [shared] })
    a_ivar = [1, 2]
    a_ivar.instance_variable_set(:@tag, :t)
    ext_ivar = MPoint.new([1], nil).extend(MMod)
    [
      Time.at(1_600_000_000, 123_456_789, :nsec, in: "+09:00"),
      nil, true, false, 0, 1, -1, 122, 123, -123, -124, 255, 256, -257, 65_536,
      2**30 - 1, 2**30, -(2**30), -(2**30) - 1, 2**31 + 1, 2**62, 2**64, -(2**64), 2**100,
      [2**40, 2**40, obj, obj],
      0.0, -0.0, 1.0, 1.5, 100.0, 1e20, 1e-5, 0.001, 0.0001, 1.0 / 3, 123_456_789.123, 1e300,
      -2.5e-5, Float::INFINITY, -Float::INFINITY, Float::NAN, [1.5, 1.5],
      "", "abc", "abc".b, "abc".force_encoding("US-ASCII"), "\u00e9t\u00e9", "\xff\x00".b,
      "sj".force_encoding("Shift_JIS"), "a".encode("UTF-16LE"), str_ivar,
      :abc, :"\u00e9", [:a, :a, :b, :"\u00e9", :"\u00e9"],
      [], [1, [2, [3]]], [shared, shared], rec,
      {}, { 1 => 2, "a" => [1], nil => :x }, with_default, identity,
      [{ "name" => 1, "id" => 2 }, { "name" => 3, "id" => 4, "\u00e9" => 5 }, { "\u00e9" => 6 }],
      1..2, 1...2, (1..), ("a".."z"),
      /ab/i, /ab/mx, /\u00e9/, /x/n,
      MStruct.new(1, "x"), obj, MUser.new(42), MMarsh.new([1, "z"]),
      String, Kernel, Comparable, MNest::Inner, Errno::ENOENT,
      MStr.new("x"), MArr[1, 2], MHash.new, MHash[1, 2],
      Time.at(0).utc, Time.at(1_600_000_000, 5, :usec).utc, Time.at(0, in: "+09:00"),
      Time.utc(1800, 3, 4, 5, 6, 7), Time.utc(100_000, 1, 1), Time.at(Rational(1, 3)).utc,
      Rational(1, 2), Rational(-7, 3), Complex(1, 2), Complex(1.5, Rational(1, 3)),
      RuntimeError.new("boom"), ArgumentError.new, bt,
      Object.new.extend(MMod), "str".extend(MMod), MStr.new("y").extend(MMod),
      Encoding::UTF_8, Encoding::Shift_JIS,
      Set[1, "a", [2]], Set[], Set[:x].compare_by_identity,
      Random.new(42).tap { |r| 700.times { r.rand } },
      [st_ivar, h_ivar, a_ivar, ext_ivar, MRe.new("sub", Regexp::IGNORECASE), shared],
      MPoint.new(MUser.new(1), [MMarsh.new(:m), Time.at(5).utc, Rational(3, 4), 2**70, -1.5]),
    ]
  end
RUBY
eval(CASES_SRC)

def hex(s) = s.unpack1("H*")
def unhex(h) = [h].pack("H*")

def redump(bytes) = Marshal.dump(Marshal.load(bytes))

test "round trips in process keep every value and type" do
  marshal_cases.each_with_index do |v, i|
    dumped = Marshal.dump(v)
    assert_equal Encoding::BINARY, dumped.encoding
    assert_equal dumped, redump(dumped), "case #{i}: #{v.inspect}"
  end
  assert_equal [1, "x", :y, 2.5, nil], Marshal.load(Marshal.dump([1, "x", :y, 2.5, nil]))
  t = Time.at(1_600_000_000, 123_456_789, :nsec)
  t2 = Marshal.load(Marshal.dump(t))
  assert_equal t, t2
  assert_equal t.nsec, t2.nsec
  assert_equal t.utc_offset, t2.utc_offset
  assert_true Marshal.load(Marshal.dump(Time.now.utc)).utc?
  assert_equal 32_400, Marshal.load(Marshal.dump(Time.new(2007, 11, 1, 15, 25, 0, "+09:00"))).utc_offset
  assert_equal Rational(2, 3), Marshal.load(Marshal.dump(Rational(2, 3)))
  assert_equal Complex(1, 2), Marshal.load(Marshal.dump(Complex(1, 2)))
  assert_equal "\u00e9", Marshal.load(Marshal.dump("\u00e9"))
  assert_equal Encoding::Shift_JIS, Marshal.load(Marshal.dump("x".force_encoding("Shift_JIS"))).encoding
  assert_equal Encoding::US_ASCII, Marshal.load(Marshal.dump("x".force_encoding("US-ASCII"))).encoding
  h = Marshal.load(Marshal.dump(Hash.new(5).merge!(1 => 2)))
  assert_equal 5, h[:missing]
  ih = Marshal.load(Marshal.dump({}.compare_by_identity))
  assert_true ih.compare_by_identity?
  e = Marshal.load(Marshal.dump(RuntimeError.new("boom").tap { _1.set_backtrace(["x:1"]) }))
  assert_equal [RuntimeError, "boom", ["x:1"]], [e.class, e.message, e.backtrace]
  r = Marshal.load(Marshal.dump(1...5))
  assert_equal [1, 5, true], [r.begin, r.end, r.exclude_end?]
  assert_true r.frozen?
  range_sub = Class.new(Range) { def initialize(x) = super(x, x) }
  Object.const_set(:MarshalRangeSub, range_sub)
  r = Marshal.load(Marshal.dump(range_sub.new(3)))
  assert_equal [MarshalRangeSub, 3, 3, false], [r.class, r.begin, r.end, r.frozen?]
  s = Marshal.load(Marshal.dump(MStruct.new(1, [2])))
  assert_equal MStruct.new(1, [2]), s
  o = Marshal.load(Marshal.dump(Object.new.extend(MMod)))
  assert_true o.singleton_class.include?(MMod)
  assert_equal MStr, Marshal.load(Marshal.dump(MStr.new("q"))).class
  assert_equal [MUser, 42], Marshal.load(Marshal.dump(MUser.new(42))).then { [_1.class, _1.instance_variable_get(:@v)] }
  assert_equal [1, "z"], Marshal.load(Marshal.dump(MMarsh.new([1, "z"]))).instance_variable_get(:@v)
  assert_equal Set[1, "a"], Marshal.load(Marshal.dump(Set[1, "a"]))
  # (CRuby 3.1 drops a Regexp's instance variables when loading; 3.4 and Carmine keep them.)
  re = Regexp.new("re", Regexp::MULTILINE)
  re.instance_variable_set(:@why, "because")
  assert_equal "\x04\bI/\are\x04\a:\x06EF:\t@whyI\"\fbecause\x06;\x00T".b, Marshal.dump(re)
  re2 = Marshal.load(Marshal.dump(re))
  assert_equal [re, "because"], [re2, re2.instance_variable_get(:@why)]
  rng = Random.new(7)
  3.times { rng.rand }
  rng2 = Marshal.load(Marshal.dump(rng))
  assert_equal rng, rng2
  assert_equal rng.rand, rng2.rand
  point = Data.define(:x, :y)
  Object.const_set(:MarshalDataPoint, point)
  d = point.new(x: 1, y: "two")
  assert_equal "\x04\bS:\x15MarshalDataPoint\a:\x06xi\x06:\x06yI\"\btwo\x06:\x06ET".b, Marshal.dump(d)
  d2 = Marshal.load(Marshal.dump(d))
  assert_equal d, d2
  assert_true d2.frozen?
  assert_raise(TypeError, /can't dump anonymous class/) { Marshal.dump(Data.define(:a).new(a: 1)) }
end

test "links and cycles come back as shared objects" do
  a = [1]
  a << a
  b = Marshal.load(Marshal.dump(a))
  assert_same b, b[1]
  s = "s"
  x, y = Marshal.load(Marshal.dump([s, s]))
  assert_same x, y
  h = {}
  h[:self] = h
  h2 = Marshal.load(Marshal.dump(h))
  assert_same h2, h2[:self]
  o = MPoint.new(1, 2)
  o.instance_variable_set(:@x, o)
  o2 = Marshal.load(Marshal.dump(o))
  assert_same o2, o2.instance_variable_get(:@x)
end

test "dump writes to an IO and load reads from one" do
  r, w = IO.pipe
  assert_same w, Marshal.dump([1, "two", :three], w)
  w.close
  assert_equal [1, "two", :three], Marshal.load(r)
  r.close
  src = Object.new
  data = Marshal.dump({ a: [1, 2.5] })
  pos = 0
  src.define_singleton_method(:getbyte) { b = data.getbyte(pos); pos += 1 if b; b }
  src.define_singleton_method(:read) { |n| s = data.byteslice(pos, n); pos += n; s }
  assert_equal({ a: [1, 2.5] }, Marshal.load(src))
  assert_raise(TypeError, "instance of IO needed") { Marshal.dump(1, Object.new) }
  assert_raise(TypeError, "instance of IO needed") { Marshal.load(Object.new) }
  r, w = IO.pipe
  w.close
  assert_raise(EOFError) { Marshal.load(r) }
  r.close
  # Loads read an IO in chunks but leave it right after each object.
  r, w = IO.pipe
  Marshal.dump([1, "a" * 5000], w)
  Marshal.dump({ b: 2 }, w)
  w.write("tail")
  w.close
  assert_equal [1, "a" * 5000], Marshal.load(r)
  assert_equal({ b: 2 }, Marshal.load(r))
  assert_equal "tail", r.read
  r.close
  r, w = IO.pipe
  w.write(Marshal.dump("x" * 100)[0, 50])
  w.close
  assert_raise(ArgumentError, "marshal data too short") { Marshal.load(r) }
  r.close
end

test "depth limit, freeze: and the proc" do
  assert_raise(ArgumentError, "exceed depth limit") { Marshal.dump([[[]]], 1) }
  assert_raise(ArgumentError, "exceed depth limit") { Marshal.dump([], 0) }
  assert_equal "\x04\b[\x06[\x06[\x00".b, Marshal.dump([[[]]], 3)
  assert_equal "\x04\b[\x06[\x06[\x00".b, Marshal.dump([[[]]], -1)
  v = Marshal.load(Marshal.dump([+"a", { "k" => [1] }, MPoint.new(1, 2)]), freeze: true)
  assert_true v.frozen?
  assert_true v[0].frozen?
  assert_true v[1]["k"].frozen?
  assert_true v[2].frozen?
  assert_false Marshal.load(Marshal.dump(String), freeze: true).frozen?
  seen = []
  out = Marshal.load(Marshal.dump([:a, :a, "s", [1]]), ->(x) { seen << x; x.is_a?(Integer) ? x * 10 : x })
  assert_equal [:a, true, "s", 1, [10], [:a, :a, "s", [10]]], seen
  assert_equal [:a, :a, "s", [10]], out
  seen = []
  s = +"q"
  Marshal.load(Marshal.dump([s, s]), ->(x) { seen << x; x })
  assert_equal [true, "q", "q", ["q", "q"]], seen
  seen = []
  rec = [1]
  rec << rec
  Marshal.load(Marshal.dump(rec), ->(x) { seen << x.class; x })
  assert_equal [Integer, Array], seen
end

test "errors have CRuby's classes and messages" do
  assert_raise(TypeError, "no _dump_data is defined for class Proc") { Marshal.dump(proc {}) }
  assert_raise(TypeError, "can't dump IO") { Marshal.dump(STDIN) }
  assert_raise(TypeError, "can't dump MatchData") { Marshal.dump(/a/.match("a")) }
  assert_raise(TypeError, "no _dump_data is defined for class Method") { Marshal.dump(1.method(:+)) }
  o = Object.new
  def o.x; end
  assert_raise(TypeError, "singleton can't be dumped") { Marshal.dump(o) }
  assert_raise(TypeError, "singleton class can't be dumped") { Marshal.dump(Object.new.singleton_class) }
  assert_raise(TypeError, /\Acan't dump anonymous class #<Class:0x\h+>\z/) { Marshal.dump(Class.new.new) }
  assert_raise(TypeError, /\Acan't dump anonymous module #<Module:0x\h+>\z/) { Marshal.dump(Module.new) }
  assert_raise(TypeError, "can't dump hash with default proc") { Marshal.dump(Hash.new {}) }
  gone = Class.new
  Object.const_set(:MarshalGone, gone)
  Object.send(:remove_const, :MarshalGone)
  assert_raise(ArgumentError, "undefined class/module MarshalGone") { Marshal.dump(gone.new) }
  assert_raise(TypeError, "no _dump_data is defined for class Object") { Marshal.dump(ENV) }
  assert_raise(TypeError, "no _dump_data is defined for class ObjectSpace::WeakMap") { Marshal.dump(ObjectSpace::WeakMap.new) }
  assert_raise(TypeError, "_dump() must return string") { Marshal.dump(Class.new { def _dump(_) = 1 }.new) }
  assert_raise(ArgumentError, "marshal data too short") { Marshal.load("") }
  assert_raise(ArgumentError, "marshal data too short") { Marshal.load("\x04\x08") }
  assert_raise(ArgumentError, "marshal data too short") { Marshal.load(Marshal.dump({ first: 1, second: 2 })[0, 5]) }
  assert_raise(ArgumentError, "undefined class/module Zzz") { Marshal.load("\x04\bo:\bZzz\x00") }
  assert_raise(ArgumentError, "undefined class/module MNest::Nope") { Marshal.load("\x04\bo:\x10MNest::Nope\x00") }
  assert_raise(ArgumentError, "dump format error(0x58)") { Marshal.load("\x04\bX") }
  assert_raise(ArgumentError, "dump format error (unlinked)") { Marshal.load("\x04\b@\x06") }
  assert_raise(ArgumentError, "bad symbol") { Marshal.load("\x04\b;\x06") }
  assert_raise(ArgumentError, "Kernel does not refer to class") { Marshal.load("\x04\bc\vKernel") }
  assert_raise(ArgumentError, "String does not refer to module") { Marshal.load("\x04\bm\vString") }
  assert_raise(ArgumentError, "dump format error (user class)") { Marshal.load("\x04\bC:\vObject\"\x06x") }
  assert_raise(TypeError, "class String not a struct") { Marshal.load("\x04\bS:\vString\x00") }
  assert_raise(TypeError, "class Object needs to have method '_load'") { Marshal.load("\x04\bu:\vObject\x06x") }
  assert_raise(TypeError, "instance of Object needs to have method 'marshal_load'") { Marshal.load("\x04\bU:\vObject0") }
  msg = "incompatible marshal file format (can't be read)\n\tformat version 4.8 required; 4.9 given"
  assert_raise(TypeError, msg) { Marshal.load("\x04\x09T") }
  assert_raise(TypeError) { Marshal.load("\x03\x08T") }
  assert_raise(ArgumentError, "unknown keyword: :foo") { Marshal.load("\x04\bT", foo: 1) }
  assert_equal 4, Marshal::MAJOR_VERSION
  assert_equal 8, Marshal::MINOR_VERSION
  assert_equal Marshal.method(:load), Marshal.method(:restore)
end

RUBY_BIN = ENV["PATH"].to_s.split(File::PATH_SEPARATOR).map { |d| File.join(d, "ruby") }.find { |f| File.file?(f) && File.executable?(f) }

# CRuby builds the same cases, prints its dump of each, and loads and re-dumps Carmine's.
CRUBY_SIDE = <<~'RUBY'
  eval(ARGV[0])
  theirs = STDIN.read.split("\n").map { |h| [h].pack("H*") }
  cases = marshal_cases
  mine = cases.map { |v| Marshal.dump(v) }
  mine.each_with_index do |d, i|
    back = begin
      loaded = Marshal.load(theirs[i])
      same = if loaded.is_a?(Exception) # CRuby adds bt_locations to a loaded exception
        [loaded.class, loaded.message, loaded.backtrace] == [cases[i].class, cases[i].message, cases[i].backtrace]
      else
        Marshal.dump(loaded) == d
      end
      same ? "ok" : "differs"
    rescue Exception => e
      "#{e.class}: #{e.message}"
    end
    puts "#{d.unpack1("H*")}\t#{back}"
  end
RUBY

test "dumps are byte-identical to CRuby's, and each side loads the other's" do
  unless RUBY_BIN
    puts "skipped: no `ruby` on PATH to compare with"
    next
  end
  cases = marshal_cases
  mine = cases.map { |v| Marshal.dump(v) }
  out = IO.popen({ "TZ" => "UTC" }, [RUBY_BIN, "-e", CRUBY_SIDE, CASES_SRC], "r+") do |io|
    io.write(mine.map { |d| hex(d) }.join("\n"))
    io.close_write
    io.read
  end
  lines = out.split("\n")
  assert_equal cases.size, lines.size
  lines.each_with_index do |line, i|
    theirs, back = line.split("\t", 2)
    theirs = unhex(theirs)
    desc = "case #{i}: #{cases[i].inspect}"
    assert_equal theirs, mine[i], "#{desc}: dump differs from CRuby's"
    assert_equal "ok", back, "#{desc}: CRuby loading Carmine's dump"
    assert_equal theirs, redump(theirs), "#{desc}: Carmine loading CRuby's dump"
  end
end
