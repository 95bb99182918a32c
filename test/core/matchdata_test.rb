require_relative "../assert"

test "byte offsets of groups" do
  m = /(.)(.)(\d+)(\d)/.match("TñX1138.")
  assert_equal 1, m.bytebegin(0)
  assert_equal 3, m.bytebegin(2)
  assert_equal 8, m.byteend(0)
  assert_equal 4, m.byteend(2)
  assert_equal 2, m.begin(2)
  n = /something is( not)? (right)/.match("something is right")
  assert_nil n.bytebegin(1)
  assert_nil n.byteend(1)
  assert_raise(IndexError, "index -1 out of matches") { m.bytebegin(-1) }
  assert_raise(IndexError, "index 5 out of matches") { m.byteend(5) }
  named = /(?<a>.)(?<a>x)?/.match("ñ")
  assert_equal 0, named.bytebegin(:a)
  assert_equal 2, named.byteend("a")
  assert_raise(IndexError, "undefined group name reference: y") { named.bytebegin("y") }
end

test "a shared group name designates the last participating group" do
  m = /(?<x>a)(?<x>b)?/.match("ac")
  assert_equal "a", m[:x]
  assert_equal 0, m.begin(:x)
  m = /(?<x>a)(?<x>b)/.match("ab")
  assert_equal "b", m[:x]
  assert_equal 1, m.bytebegin(:x)
end

test "match and match_length" do
  md = /(.)(.)(\d+)(\d)/.match("THX1138.")
  assert_equal "113", md.match(3)
  assert_equal 3, md.match_length(3)
  assert_equal 6, md.match_length(0)
  md = "haystack".match(/(?<t>t)(?<a>all)?/)
  assert_equal "t", md.match(:t)
  assert_nil md.match(:a)
  assert_nil md.match_length(:a)
  assert_equal 2, "añb".match(/ñb/).match_length(0)
  assert_raise(IndexError) { md.match(9) }
end

test "values_at with ranges" do
  m = /(.)(.)(\d+)(\d)/.match("THX1138: The Movie")
  assert_equal ["HX1138", "H", "X"], m.values_at(0..2)
  assert_equal ["HX1138", "H", "X", "113", "8", nil], m.values_at(0..5)
  assert_equal ["H", "X", "8"], m.values_at(1..2, 4)
  assert_equal ["113", "8"], m.values_at(3..)
  assert_equal [], m.values_at(2..0)
  assert_raise(RangeError, "-6..3 out of range") { m.values_at(-6..3) }
  assert_raise(TypeError) { m.values_at(Object.new) }
end

test "deconstruct_keys" do
  m = /(?<f>foo)(?<b>bar)(?<c>baz)/.match("foobarbaz")
  assert_equal({ f: "foo", b: "bar", c: "baz" }, m.deconstruct_keys(nil))
  assert_equal({ f: "foo" }, m.deconstruct_keys([:f]))
  assert_equal({ f: "foo" }, m.deconstruct_keys([:f, :a, :b]))
  assert_equal({}, m.deconstruct_keys([]))
  assert_equal({}, m.deconstruct_keys([:f, :b, :c, :d]))
  assert_raise(TypeError, "wrong argument type Integer (expected Array)") { m.deconstruct_keys(1) }
  assert_raise(TypeError, "wrong argument type String (expected Symbol)") { m.deconstruct_keys(["f"]) }
  case "2024-05"
  in /(?<year>\d+)-(?<month>\d+)/
    assert_equal "2024", $~[:year]
  end
  result = case /(?<year>\d+)-(?<month>\d+)/.match("2024-05")
           in { year:, month: } then [year, month]
           end
  assert_equal ["2024", "05"], result
end

test "names follow the order of definition" do
  assert_equal ["yellow", "pin"], "haystack".match(/(?<yellow>hay).(?<pin>tack)/).names
  assert_equal ["hay", "dot"], "haystack".match(/(?<hay>hay)(?<dot>.)(?<hay>tack)/).names
  assert_equal ["zz", "aa", "mm"], /(?<zz>.)(?<aa>.)(?<mm>.)/.names
  assert_equal %w[zz aa], /(?<zz>.)(?<aa>.)/.match("ab").named_captures.keys
end

test "equality, hash, dup and allocation" do
  a = "haystack".match(/hay/)
  b = "haystack".match(/hay/)
  assert_equal true, a == b
  assert_equal true, a.eql?(b)
  assert_equal a.hash, b.hash
  assert_equal false, a == "hay".match(/hay/)
  assert_equal false, a == "haystack".match(/h.y/)
  a.instance_variable_set(:@note, 1)
  d = a.dup
  assert_equal 1, d.instance_variable_get(:@note)
  assert_equal a.offset(0), d.offset(0)
  assert_equal a, d
  assert_raise(NoMethodError) { MatchData.allocate }
  assert_raise(NoMethodError) { MatchData.new }
end
