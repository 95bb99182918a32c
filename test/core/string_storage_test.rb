require_relative "../assert"

# Strings of up to 47 bytes live inside their heap slot and move to a separate buffer when
# they grow; these tests walk every mutation across that boundary and back. Expected
# values come from CRuby.

test "appending across the embedded limit" do
  s = +""
  expected = +""
  60.times do |i|
    s << (i % 10).to_s
    expected = expected + (i % 10).to_s
    assert_equal expected, s
    assert_equal i + 1, s.bytesize
  end
  t = "x" * 47
  t << "y"
  assert_equal "x" * 47 + "y", t
  assert_equal 48, t.size
end

test "appending a string to itself, short and long" do
  s = +"abc"
  s << s
  assert_equal "abcabc", s
  6.times { s << s }
  assert_equal 384, s.size
  assert_equal "abc" * 128, s
  u = +"héllo"
  u.concat(u, u)
  assert_equal "héllohéllohéllo", u
end

test "in-place edits of embedded and long strings" do
  [5, 46, 47, 48, 100].each do |n|
    base = (0...n).map { |i| (97 + i % 26).chr }.join
    s = base.dup
    assert_equal base.chop, s.dup.tap(&:chop!)
    assert_equal base[1..], s.dup.tap { |x| x.delete_prefix!("a") }
    assert_equal base[0...-1], s.dup.tap { |x| x.delete_suffix!(base[-1]) }
    assert_equal "", s.dup.tap(&:clear)
    t = s.dup
    t[1, 2] = "XYZW"
    assert_equal base[0] + "XYZW" + base[3..].to_s, t
    t = s.dup
    t[0, 0] = t
    assert_equal base + base, t
    t = s.dup
    t.setbyte(0, 65)
    assert_equal "A" + base[1..], t
    t = s.dup
    t.sub!(/a/) { "long replacement " * 4 }
    assert_equal base.sub("a", "long replacement " * 4), t
    t.replace("short")
    assert_equal "short", t
    assert_equal base, s
  end
end

test "substrings, interpolation and number conversions" do
  s = "0123456789" * 10
  assert_equal "2345", s[2, 4]
  assert_equal s[10, 60], s.byteslice(10, 60)
  x = 123456789
  assert_equal "n=123456789!", "n=#{x}!"
  assert_equal "12345678901234567890123456789012345678901234567890", (12345678901234567890123456789012345678901234567890).to_s
  assert_equal "1.5", 1.5.to_s
  assert_equal Encoding::UTF_8, "#{x}".encoding
end

# Under GC stress every allocation collects: fewer strings exercise the same paths.
test "many short strings survive collections" do
  n = ENV["CARMINE_GC_STRESS"] ? 2_000 : 20_000
  a = Array.new(n) { |i| "s#{i.to_s.rjust(9, "0")}"[0, 10] }
  GC.start
  assert_equal "s000001234", a[1234]
  assert_equal n * 10, a.sum(&:bytesize)
  assert_equal a.size, a.uniq.size
end

test "Marshal and pack round-trip embedded content" do
  ["", "a", "x" * 47, "y" * 48, "z" * 1000].each do |s|
    assert_equal s, Marshal.load(Marshal.dump(s))
    assert_equal s, [s].pack("a*").unpack1("a*")
  end
  buf = +"ab"
  [1, 2].pack("C*", buffer: buf)
  assert_equal "ab\x01\x02".b, buf.b
end
