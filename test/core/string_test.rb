require_relative "../assert"

# Expected values come from CRuby (3.4 semantics where they differ from 3.1).

test "String.new" do
  assert_equal "", String.new
  assert_equal Encoding::ASCII_8BIT, (String.new).encoding
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", (String.new.encoding).inspect
  assert_equal "abc", String.new("abc")
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", (String.new("abc", encoding: "ASCII-8BIT").encoding).inspect
  assert_equal "", String.new(capacity: 100)
  assert_equal Encoding::ASCII_8BIT, (String.new(capacity: 100)).encoding
  assert_equal "x", String.new("x", capacity: 10)
  assert_equal "#<Encoding:UTF-8>", (String.new(encoding: Encoding::UTF_8).encoding).inspect
  assert_raise(TypeError, "no implicit conversion of Integer into String") { String.new(3) }
end

test "+ * % concatenation" do
  assert_equal "abcd", "ab" + "cd"
  assert_equal "ababab", "ab" * 3
  assert_equal "", "ab" * 0
  assert_raise(ArgumentError, "negative argument") { "ab" * -1 }
  assert_raise(TypeError, "no implicit conversion of Integer into String") { "ab" + 1 }
  assert_raise(TypeError, "no implicit conversion of nil into String") { "ab" + nil }
  assert_equal "1-x", "%d-%s" % [1, "x"]
  assert_equal "00042", "%05d" % 42
  assert_equal "", "%s" % nil
  assert_equal "nil", "%p" % [nil]
  s = +"ab"
  assert_equal "abcd", s << "c" << 100
  assert_equal "abcdxy", s.concat("x", "y")
  assert_equal "abcdxy", s.concat
  assert_equal "12abcdxy", s.prepend("1", "2")
  assert_equal "12abcdxy", s
  assert_equal "abb", "a".concat(s = +"b", s)
  t = +"ab"
  assert_equal "ababab", t.concat(t, t)
  assert_equal "abあ", "ab" << 0x3042
  assert_equal "\"ab\\xC8\"", ("ab".b << 200).inspect
  assert_raise(RangeError, "-1 out of char range") { "ab" << -1 }
  assert_equal "\"ab\\xC8\"", ("ab".force_encoding("US-ASCII") << 200).inspect
end

test "comparison and equality" do
  assert_equal true, "a" == "a"
  assert_equal false, "a" == :a
  assert_equal true, "a".eql?("a")
  assert_equal false, "a".equal?("a")
  assert_equal -1, "a" <=> "b"
  assert_equal 1, "b" <=> "a"
  assert_equal 0, "a" <=> "a"
  assert_equal -1, "a" <=> "ab"
  assert_equal nil, "a" <=> 1
  assert_equal 0, "abc".casecmp("ABC")
  assert_equal -1, "abc".casecmp("ABD")
  assert_equal 1, "abd".casecmp("ABC")
  assert_equal nil, "abc".casecmp(1)
  assert_equal true, "abc".casecmp?("ABC")
  assert_equal true, "äbc".casecmp?("ÄBC")
  assert_equal nil, "abc".casecmp?(1)
  assert_equal true, "a".hash == "a".hash
  assert_equal false, "a".hash == "b".hash
  assert_equal true, "abc" === "abc"
  assert_equal 1, "abc" =~ /b/
end

test "length and size" do
  assert_equal 5, "hello".length
  assert_equal 5, "héllo".length
  assert_equal 6, "héllo".bytesize
  assert_equal true, "".empty?
  assert_equal false, " ".empty?
  assert_equal 3, "日本語".size
  assert_equal 2, "\xff\xfe".length
  assert_equal 2, "\xff\xfe".b.length
end

test "case mapping" do
  assert_equal "HELLO WORLD", "hello World".upcase
  assert_equal "hello world", "hello World".downcase
  assert_equal "HELLO wORLD", "hello World".swapcase
  assert_equal "Hello world", "hello World".capitalize
  assert_equal "Hello", "HELLO".capitalize
  assert_equal "ǅ", "ǆ".capitalize
  assert_equal "ÄÖÜ", "äöü".upcase
  assert_equal "äöü", "ÄÖÜ".downcase
  assert_equal "SS", "ß".upcase
  assert_equal "STRASSE", "straße".upcase
  assert_equal "i̇", "İ".downcase
  assert_equal "İ", "i".upcase(:turkic)
  assert_equal "ı", "I".downcase(:turkic)
  assert_equal "äBC", "äbc".upcase(:ascii)
  assert_equal "Äbc", "ÄBC".downcase(:ascii)
  assert_equal "àb", "ÀB".swapcase
  assert_raise(ArgumentError, "option :fold only allowed for downcasing") { "abc".upcase(:fold) }
  assert_equal "abc", "ABC".downcase(:fold)
  assert_equal "ss", "ß".downcase(:fold)
  assert_raise(ArgumentError, "invalid option") { "abc".upcase(:bogus) }
  s = +"abc"
  assert_equal "ABC", s.upcase!
  assert_equal nil, s.upcase!
  assert_equal "ABC", s
  assert_equal "abc", s.downcase!
  assert_equal "Abc", s.capitalize!
  assert_equal nil, s.capitalize!
  assert_equal "aBC", s.swapcase!
  assert_equal "aBC", s
  assert_equal "Hello world", "hello world".capitalize
end

test "strip and chomp" do
  assert_equal "hi", "  hi  ".strip
  assert_equal "hi", "\t\n hi \r\n\0".strip
  assert_equal "hi", "\0 hi".strip
  assert_equal "hi  ", "  hi  ".lstrip
  assert_equal "  hi", "  hi  ".rstrip
  assert_equal "hi", "hi\n".chomp
  assert_equal "hi", "hi\r\n".chomp
  assert_equal "hi", "hi\r".chomp
  assert_equal "hi\n", "hi\n\n".chomp
  assert_equal "hi\n", "hi\n\r".chomp
  assert_equal "hel", "hello".chomp("lo")
  assert_equal "hello", "hello".chomp("x")
  assert_equal "hi", "hi\n\n\r\n".chomp("")
  assert_equal "hi", "hi\r\n".chomp("\n")
  assert_equal "hell", "hello".chop
  assert_equal "hi", "hi\r\n".chop
  assert_equal "", "".chop
  assert_equal "日", "日本".chop
  s = +"  x  "
  assert_equal "x", s.strip!
  assert_equal nil, s.strip!
  assert_equal "x", s
  s = +"x\n"
  assert_equal "x", s.chomp!
  assert_equal nil, s.chomp!
  s = +"xy"
  assert_equal "x", s.chop!
  assert_equal "x", s
  assert_equal "", s.chop!
  assert_equal nil, s.chop!
  assert_equal "c", "abc".delete_prefix("ab")
  assert_equal "abc", "abc".delete_prefix("x")
  assert_equal "a", "abc".delete_suffix("bc")
  assert_equal "abc", "abc".delete_suffix("x")
  s = +"abc"
  assert_equal "bc", s.delete_prefix!("a")
  assert_equal nil, s.delete_prefix!("a")
  assert_equal "b", s.delete_suffix!("c")
  assert_equal nil, s.delete_suffix!("c")
  assert_equal "b", s
  assert_raise(TypeError, "no implicit conversion of Integer into String") { "abc".delete_prefix(1) }
end

test "search" do
  assert_equal 2, "hello".index("l")
  assert_equal 3, "hello".index("l", 3)
  assert_equal 3, "hello".index("l", -2)
  assert_equal nil, "hello".index("z")
  assert_equal 0, "hello".index("")
  assert_equal 5, "hello".index("", 5)
  assert_equal nil, "hello".index("", 6)
  assert_equal 2, "hello".index(/l+/)
  assert_equal 2, "héllo".index("l")
  assert_equal 3, "hello".rindex("l")
  assert_equal 2, "hello".rindex("l", 2)
  assert_equal 2, "hello".rindex("l", -3)
  assert_equal 5, "hello".rindex("")
  assert_equal nil, "hello".rindex("h", -6)
  assert_equal 3, "hello".rindex(/l/)
  assert_equal 3, "héllo".rindex("l")
  assert_equal true, "hello".include?("ell")
  assert_equal true, "hello".include?("")
  assert_equal true, "hello".start_with?("he")
  assert_equal true, "hello".start_with?("x", "h")
  assert_equal true, "hello".start_with?(/h.l/)
  assert_equal true, "hello".start_with?("")
  assert_equal true, "hello".end_with?("lo")
  assert_equal true, "hello".end_with?("x", "o")
  assert_raise(TypeError, "no implicit conversion of Integer into String") { "hello".start_with?(1) }
  assert_equal true, "héllo".end_with?("llo")
  assert_equal true, "hello".match?(/ll/)
  assert_equal false, "hello".match?(/ll/, 3)
  assert_equal 2, "hello" =~ /ll/
  assert_equal "l", "hello".match(/l(l)/)[1]
end

test "slicing" do
  s = "hello world"
  assert_equal "h", s[0]
  assert_equal "d", s[-1]
  assert_equal nil, s[11]
  assert_equal nil, s[100]
  assert_equal "hello", s[0, 5]
  assert_equal "world", s[6, 100]
  assert_equal "", s[11, 1]
  assert_equal nil, s[12, 1]
  assert_equal "wor", s[-5, 3]
  assert_equal nil, s[0, -1]
  assert_equal "hello", s[0..4]
  assert_equal "hello worl", s[0...-1]
  assert_equal "world", s[6..]
  assert_equal "hello", s[..4]
  assert_equal nil, s[20..]
  assert_equal "", s[11..]
  assert_equal "world", s["world"]
  assert_equal nil, s["xyz"]
  assert_equal "o w", s[/o\s?w/]
  assert_equal "r", s[/(o)(r)/, 2]
  assert_equal "wo", s[/(?<x>w.)/, "x"]
  assert_equal "e", s[1.5]
  assert_equal "本", "日本語"[1]
  assert_equal "本語", "日本語"[1, 5]
  assert_equal "he", s.slice(0, 2)
  assert_equal "hel", s.byteslice(0, 3)
  assert_equal "日", "日本語".byteslice(0, 3)
  assert_equal "\xE6\x97", "日本語".byteslice(0, 2)
  assert_equal "本", "日本語".byteslice(3..5)
  assert_equal nil, s.byteslice(100)
  assert_equal "rl", s.byteslice(-3, 2)
  t = +"hello world"
  assert_equal "h", t.slice!(0)
  assert_equal "ell", t.slice!(0, 3)
  assert_equal "wo", t.slice!(/w./)
  assert_equal "rld", t.slice!("rld")
  assert_equal nil, t.slice!("zz")
  assert_equal nil, t.slice!(100)
  assert_equal "o ", t
  t = +"hello"
  assert_equal "J", t[0] = "J"
  assert_equal "y!", t[-1, 1] = "y!"
  assert_equal "EE", t[1..2] = "EE"
  assert_equal "ee", t["EE"] = "ee"
  assert_equal "a", t[/e+/] = "a"
  assert_equal "Jaly!", t
  assert_raise(IndexError, "index 10 out of string") { t[10] = "x" }
  assert_raise(IndexError, "string not matched") { t["zz"] = "x" }
  assert_raise(IndexError, "negative length -1") { t[3, -1] = "x" }
end

test "insert replace clear" do
  s = +"abc"
  assert_equal "aXbc", s.insert(1, "X")
  assert_equal "aXbcZ", s.insert(-1, "Z")
  assert_equal "aXbcYZ", s.insert(-2, "Y")
  assert_equal "aXbcYZ", s.insert(0, "")
  assert_raise(IndexError, "index 10 out of string") { s.insert(10, "x") }
  assert_raise(IndexError, "index -19 out of string") { s.insert(-20, "x") }
  assert_equal "new", s.replace("new")
  assert_equal "", s.clear
  assert_equal "", s
  assert_raise(TypeError, "no implicit conversion of Integer into String") { "abc".insert(1, 2) }
end

test "chars bytes lines codepoints" do
  assert_equal ["h", "é", "l", "l", "o"], "héllo".chars
  assert_equal [104, 195, 169, 108, 108, 111], "héllo".bytes
  assert_equal [104, 233, 108, 108, 111], "héllo".codepoints
  assert_equal ["a\n", "b\n", "c"], "a\nb\nc".lines
  assert_equal ["a\n", "b\n"], "a\nb\n".lines
  assert_equal ["a", "b"], "a\nb\n".lines(chomp: true)
  assert_equal ["a", "b"], "a\r\nb\r\n".lines(chomp: true)
  assert_equal ["a,", "b,", "c"], "a,b,c".lines(",")
  assert_equal ["a", "b", "c"], "a,b,c".lines(",", chomp: true)
  assert_equal ["a\n\n", "b\n\n", "c"], "a\n\n\nb\n\nc".lines("")
  assert_equal ["a", "b", "c"], "a\n\n\nb\n\nc".lines("", chomp: true)
  assert_equal ["abc"], "abc".lines(nil)
  assert_equal [], "".lines
  assert_equal ["a", "b", "c"], "abc".each_char.to_a
  assert_equal [97, 98], "ab".each_byte.to_a
  assert_equal ["a\n", "b"], "a\nb".each_line.to_a
  assert_equal [97, 98], "ab".each_codepoint.to_a
  assert_equal ["é", "x"], "e\u0301x".grapheme_clusters
  assert_equal ["é", "x"], "e\u0301x".each_grapheme_cluster.to_a
  assert_equal ["🇯🇵", "🇺🇸"], "🇯🇵🇺🇸".grapheme_clusters
  assert_equal ["a", "\r\n", "b"], "a\r\nb".grapheme_clusters
  assert_equal 1, "\u{1F468}\u200D\u{1F469}".grapheme_clusters.size
  assert_raise(ArgumentError, "invalid byte sequence in UTF-8") { "\xff".codepoints }
  assert_equal 3, "abc".each_char.size
  assert_equal 195, "ab".bytes.sum
end

test "split" do
  assert_equal ["a", "b", "c"], "a b  c".split
  assert_equal ["a", "b", "c"], " a b c ".split
  assert_equal ["a", "b", "", "c"], "a,b,,c,,".split(",")
  assert_equal ["a", "b", "", "c", "", ""], "a,b,,c,,".split(",", -1)
  assert_equal ["a", "b,c"], "a,b,c".split(",", 2)
  assert_equal ["a,b,c"], "a,b,c".split(",", 1)
  assert_equal ["a", "b", "c"], "abc".split("")
  assert_equal ["a", "bc"], "abc".split("", 2)
  assert_equal ["a", "b", "c"], "a1b2c3".split(/\d/)
  assert_equal ["a", "1", "b", "2", "c", "3"], "a1b2c3".split(/(\d)/)
  assert_equal ["a", "b c"], "a b c".split(" ", 2)
  assert_equal ["a", "", "b", "c"], "a  b c".split(/ /)
  assert_equal ["a", "b", "c"], "a  b c".split(/\s*/)
  assert_equal [], "".split(",")
  assert_equal ["a", "b", "c"], "abc".split(/x*/)
  assert_equal [1, 2, 3], "1,2,3".split(",").map(&:to_i)
  assert_equal ["a", "b", "c"], "a b c".split(nil)
  assert_equal ["a", "b"], "  a  b".split(" ", -1)
  assert_equal ["a", "b", ""], "a b ".split(" ", -1)
  assert_equal "aXbXc", "aXbXc".split("X") { |x| x }
end

test "scan gsub sub" do
  assert_equal ["1", "22", "333"], "a1b22c333".scan(/\d+/)
  assert_equal [["a", "1"], ["b", "22"]], "a1b22".scan(/([a-z])(\d+)/)
  assert_equal "heLLo", "hello".gsub("l", "L")
  assert_equal "heLLo", "hello".gsub(/l/) { |m| m.upcase }
  assert_equal "he<l><l>o", "hello".gsub(/(l)/, '<\1>')
  assert_equal "he[l][l]o", "hello".gsub(/(?<x>l)/, '[\k<x>]')
  assert_equal "he11o", "hello".gsub(/l/, "l" => "1")
  assert_equal "heLlo", "hello".sub("l", "L")
  assert_equal "hlelo", "hello".sub(/(e)(l)/, '\2\1')
  assert_equal "hello", "hello".sub(/x/, "y")
  assert_equal "a-b", "a.b".gsub(".", "-")
  assert_equal "hellllo", "hello".gsub(/l/, '\0\0')
  assert_equal "-h-e-l-l-o-", "hello".gsub("", "-")
  s = +"hello"
  assert_equal "heLlo", s.sub!(/l/, "L")
  assert_equal nil, s.sub!(/z/, "L")
  assert_equal "heLLo", s.gsub!(/l/, "L")
  assert_equal nil, s.gsub!(/z/, "L")
  assert_equal "heLLo", s
  assert_equal ["l", "l"], "hello".gsub(/l/).to_a
end

test "tr delete squeeze count" do
  assert_equal "hippo", "hello".tr("el", "ip")
  assert_equal "ifmmp", "hello".tr("a-y", "b-z")
  assert_equal "**ll*", "hello".tr("^l", "*")
  assert_equal "hexxx", "hello".tr("lo", "x")
  assert_equal "hello", "hello".tr("", "x")
  assert_equal "", "hello".tr("a-z", "")
  assert_equal "hello", "hello".tr("\\-", "x")
  assert_equal "123", "a-b".tr("a\\-b", "123")
  assert_equal "habbc", "hello".tr("elo", "a-c")
  assert_equal "hello", "héllo".tr("é", "e")
  assert_equal "hero", "hello".tr_s("l", "r")
  assert_equal "x", "aabbcc".tr_s("a-c", "x")
  assert_equal "heo", "hello".delete("l")
  assert_equal "ello", "hello".delete("a-k", "^e")
  assert_equal "ll", "hello".delete("^l")
  assert_equal "hello", "he-llo".delete("-")
  assert_equal "abc", "aaabbbccc".squeeze
  assert_equal "abbbccc", "aaabbbccc".squeeze("a")
  assert_equal "abccc", "aaabbbccc".squeeze("a-b")
  assert_equal 5, "hello world".count("lo")
  assert_equal 2, "hello world".count("lo", "o")
  assert_equal 8, "hello world".count("^l")
  assert_equal 10, "hello world".count("a-z")
  assert_equal 1, "héllo".count("é")
  # ASCII-only receivers are counted byte by byte through a table.
  assert_equal 3, "a^b^c^".count("\\^")
  assert_equal 3, "a-b-c\\d".count("-\\\\")
  assert_equal 0, "hello".count("é")
  assert_equal 0, "hello".count("")
  assert_equal 5, "hello".count("^é")
  assert_equal 2, ("x" * 10_000 + "DD").count("D")
  assert_equal 10_000, ("x" * 10_000 + "DD").count("^D")
  assert_equal 1, "hello\x00\x7f".b.count("\x00-\x1f", "^a")
  assert_raise(ArgumentError, "wrong number of arguments (given 0, expected 1+)") { "hello".count }
  s = +"hello"
  assert_equal "heLLo", s.tr!("l", "L")
  assert_equal nil, s.tr!("z", "L")
  assert_equal "heo", s.delete!("L")
  assert_equal nil, s.delete!("z")
  assert_equal nil, s.squeeze!
  assert_equal "jeo", s.tr_s!("h", "j")
  assert_equal "jeo", s
end

test "justify" do
  assert_equal "  ab   ", "ab".center(7)
  assert_equal "*+ab*+*", "ab".center(7, "*+")
  assert_equal "ab121", "ab".ljust(5, "12")
  assert_equal "121ab", "ab".rjust(5, "12")
  assert_equal "ab", "ab".center(1)
  assert_equal "**日本**", "日本".center(6, "*")
  assert_raise(ArgumentError, "zero width padding") { "ab".center(5, "") }
  assert_equal "ab", "ab".ljust(-5)
end

test "succ and upto" do
  assert_equal "ba", "az".succ
  assert_equal "aaa", "zz".succ
  assert_equal "b0", "a9".succ
  assert_equal "AAa", "Zz".succ
  assert_equal "b", "a".succ
  assert_equal "Ba", "Az".succ
  assert_equal "aaa00", "zz99".succ
  assert_equal "a-10", "a-9".succ
  assert_equal "2.0", "1.9".succ
  assert_equal "-10", "-9".succ
  assert_equal "", "".succ
  assert_equal "\x01\x00", "\xff".b.succ
  assert_equal Encoding::ASCII_8BIT, ("\xff".b.succ).encoding
  assert_equal "**+", "***".succ
  assert_equal "b!", "a!".succ
  assert_equal "<<koalb>>", "<<koala>>".succ
  assert_equal "2000aaa", "1999zzz".succ
  assert_equal "AAAA0000", "ZZZ9999".succ
  assert_equal "ぃ", "あ".succ
  assert_equal "10", "9".succ
  assert_equal "AAa", "Zz".next
  assert_equal ["a", "b", "c", "d", "e"], "a".upto("e").to_a
  assert_equal ["9", "10", "11"], "9".upto("11").to_a
  assert_equal [], "25".upto("5").to_a
  assert_equal ["07", "08", "09", "10", "11"], "07".upto("11").to_a
  assert_equal ["a", "b", "c", "d"], "a".upto("e", true).to_a
  assert_equal ["az", "ba", "bb", "bc"], "az".upto("bc").to_a
  assert_equal [], "b".upto("a").to_a
  assert_equal 702, "a".upto("zz").to_a.size
  s = +"az"
  assert_equal "ba", s.succ!
  assert_equal "ba", s
end

test "conversions to numbers" do
  assert_equal 123, "123".to_i
  assert_equal 12, " 12abc".to_i
  assert_equal -12, "-12".to_i
  assert_equal 12, "+12".to_i
  assert_equal 1000, "1_000".to_i
  assert_equal 1, "1__000".to_i
  assert_equal 0, "_1".to_i
  assert_equal 0, "0x1A".to_i
  assert_equal 26, "0x1A".to_i(16)
  assert_equal 26, "1A".to_i(16)
  assert_equal 5, "0b101".to_i(0)
  assert_equal 15, "0o17".to_i(0)
  assert_equal 15, "017".to_i(0)
  assert_equal 31, "0x1f".to_i(0)
  assert_equal 35, "z".to_i(36)
  assert_equal 1, "12".to_i(2)
  assert_raise(ArgumentError, "invalid radix 1") { "12".to_i(1) }
  assert_raise(ArgumentError, "invalid radix 37") { "12".to_i(37) }
  assert_equal 0, "".to_i
  assert_equal 0, "abc".to_i
  assert_equal 99999999999999999999999, "99999999999999999999999".to_i
  assert_equal -3, "  -0b11".to_i(0)
  assert_equal 100000.0, "1e5".to_f
  assert_equal 1.5, "1.5".to_f
  assert_equal 1.5, " 1.5xyz".to_f
  assert_equal 1000.5, "1_000.5".to_f
  assert_equal 0.5, ".5".to_f
  assert_equal 5.0, "5.".to_f
  assert_equal -0.5, "-.5".to_f
  assert_equal 1.0, "1e".to_f
  assert_equal 0.0, "abc".to_f
  assert_equal 0.0, "Infinity".to_f
  assert_equal "Infinity", ("1e400".to_f).inspect
  assert_equal 0.0, "0x1A".to_f
  assert_equal 1.2, "1.2.3".to_f
  assert_equal 1.0, "1__0".to_f
  assert_equal 120000000000.0, "12e1_0".to_f
  assert_equal 0.001, "0.1e-2".to_f
  assert_equal 325.0, "  3.25e+2".to_f
  assert_equal "(1/3)", ("1/3".to_r).inspect
  assert_equal "(3/4)", ("0.75".to_r).inspect
  assert_equal "(3/4)", ("1.5/2".to_r).inspect
  assert_equal "(0/1)", ("abc".to_r).inspect
  assert_equal "(2/1)", (" 2 ".to_r).inspect
  assert_equal "(-1/2)", ("-3/6".to_r).inspect
  assert_equal "(1000/1)", ("1_000".to_r).inspect
  assert_equal (1+2i), "1+2i".to_c
  assert_equal (0+3i), "3i".to_c
  assert_equal (0-1i), "-i".to_c
  assert_equal (1.5-2.5i), "1.5-2.5i".to_c
  assert_equal (0+0i), "abc".to_c
  assert_equal (2+0i), "2".to_c
  assert_equal (-0.4161468365471424+0.9092974268256817i), "1@2".to_c
  assert_equal 255, "ff".hex
  assert_equal -255, "-0xff".hex
  assert_equal 255, "0Xff".hex
  assert_equal 0, "zz".hex
  assert_equal 511, "777".oct
  assert_equal 31, "0x1f".oct
  assert_equal 3, "0b11".oct
  assert_equal -15, "-017".oct
  assert_equal 15, "0o17".oct
  assert_equal 0, "89".oct
  assert_equal 97, "a".ord
  assert_equal 233, "é".ord
  assert_raise(ArgumentError, "empty string") { "".ord }
  assert_equal 294, "abc".sum
  assert_equal 6, "abc".sum(4)
  assert_equal "abFZSxKKdq5s6", "abc".crypt("ab")
  assert_raise(ArgumentError, "salt too short (need >=2 bytes)") { "abc".crypt("a") }
end

test "conversions to strings and symbols" do
  assert_equal "abc", "abc".to_s
  assert_equal "abc", "abc".to_str
  assert_equal :abc, "abc".to_sym
  assert_equal :"a b", "a b".to_sym
  assert_equal :abc, "abc".intern
  assert_equal :"", "".to_sym
end

test "inspect and dump" do
  assert_equal "\"abc\"", "abc".inspect
  assert_equal "\"a\\\"b\"", "a\"b".inspect
  assert_equal "\"a\\\\b\"", "a\\b".inspect
  assert_equal "\"\\n\\t\\r\\e\\a\\b\\f\\v\\u0000\"", "\n\t\r\e\a\b\f\v\0".inspect
  assert_equal "\"\\u0001\\u007F\"", "\x01\x7f".inspect
  assert_equal "\"é\"", "é".inspect
  assert_equal "\"\\xC3\\xA9\"", "\u00e9".b.inspect
  assert_equal "\"\\xFF\"", "\xff".inspect
  assert_equal "\"\\xE3\\x81\"", "\xe3\x81".inspect
  assert_equal "\"1#\"", "#{1}#".inspect
  assert_equal "\"\\\#{x}\"", "\#{x}".inspect
  assert_equal "\"\\\#$x \\\#@y #x\"", "\#$x \#@y \#x".inspect
  assert_equal "\"​\"", "\u200b".inspect
  assert_equal "\"\"", "\u0085".inspect
  assert_equal "\" \"", "\u00a0".inspect
  assert_equal "\"日本\"", "日本".inspect
  assert_equal "\"😀\"", "\u{1F600}".inspect
  assert_equal "\"\\u6261\\x63\"", "abc".force_encoding("UTF-16LE").inspect
  assert_equal "\"ab\\xFF\"", "ab\xff".force_encoding("US-ASCII").inspect
  assert_equal "\"abc\"", "abc".dump
  assert_equal "\"\\u00E9\"", "é".dump
  assert_equal "\"\\u{1F600}\"", "\u{1F600}".dump
  assert_equal "\"\\n\\e\\x7F\"", "\n\e\x7f".dump
  assert_equal "\"\\xFF\"", "\xff".dump
  assert_equal "\"\\\#{x}\"", "\#{x}".dump
  assert_equal "\"\\xC3\\xA9\"", "é".b.dump
  assert_equal Encoding::ASCII_8BIT, ("é".b.dump).encoding
  assert_equal "\ab\né", "\"\\ab\\n\\u00e9\"".undump
  assert_equal "é", "é".dump.undump
  assert_equal "\"\\xFF\\x00\"", "\xff\x00".b.dump
  assert_equal Encoding::ASCII_8BIT, ("\xff\x00".b.dump).encoding
  assert_equal "\"\\xFF\\x00\"", ("\xff\x00".b.dump.undump).inspect
  assert_raise(RuntimeError, "invalid dumped string; not wrapped with '\"' nor '\"...\".force_encoding(\"...\")' form") { "abc".undump }
  assert_raise(RuntimeError, "invalid hex escape") { "\"\\xZZ\"".undump }
end

test "freeze and mutability" do
  assert_equal false, "abc".frozen?
  assert_equal false, String.new("abc").frozen?
  assert_equal false, "abc".dup.frozen?
  assert_equal false, (+"abc").frozen?
  assert_equal true, (-"abc").frozen?
  assert_equal true, (-"abc").equal?(-"abc")
  s = "lit".dup.freeze
  assert_equal true, s.frozen?
  assert_raise(FrozenError, "can't modify frozen String: \"lit\"") { s << "x" }
  assert_raise(FrozenError, "can't modify frozen String: \"lit\"") { s.upcase! }
  assert_raise(FrozenError, "can't modify frozen String: \"lit\"") { s.clear }
  assert_equal false, (+s).frozen?
  assert_equal "lity", (+s) << "y"
  assert_equal false, s.dup.frozen?
  assert_equal true, s.clone.frozen?
  assert_equal false, s.clone(freeze: false).frozen?
  assert_equal false, :sym.to_s.frozen?
  assert_equal false, 1.to_s.frozen?
  assert_equal true, nil.to_s.frozen?

end

test "encodings" do
  assert_equal "#<Encoding:UTF-8>", ("abc".encoding).inspect
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", ("abc".b.encoding).inspect
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", ("abc".force_encoding("ASCII-8BIT").encoding).inspect
  assert_equal "#<Encoding:US-ASCII>", ("abc".force_encoding(Encoding::US_ASCII).encoding).inspect
  assert_raise(ArgumentError, "unknown encoding name - bogus") { "abc".force_encoding("bogus") }
  assert_equal true, "é".valid_encoding?
  assert_equal false, "\xff".valid_encoding?
  assert_equal true, "\xff".b.valid_encoding?
  assert_equal false, "\xff".force_encoding("US-ASCII").valid_encoding?
  assert_equal true, "abc".ascii_only?
  assert_equal false, "é".ascii_only?
  assert_equal "\"\\xC3\\xA9\"", ("é".b).inspect
  assert_equal 2, "é".b.length
  assert_equal "#<Encoding:UTF-8>", (("é" + "a".b).encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (("a".b + "é").encoding).inspect
  assert_raise(Encoding::CompatibilityError, "incompatible character encodings: BINARY (ASCII-8BIT) and UTF-8") { ("é".b + "é") }
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", (("\xff".b + "a").encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (("é" + "a".force_encoding("US-ASCII")).encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (("a".force_encoding("US-ASCII") + "é").encoding).inspect
  assert_equal "#<Encoding:US-ASCII>", (("a".force_encoding("US-ASCII") + "b".b).encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (("".b + "é").encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (("é" + "".b).encoding).inspect
  assert_equal [233, 0], "é".encode("UTF-16LE").bytes
  assert_equal [0, 233], "é".encode("UTF-16BE").bytes
  assert_equal [233], "é".encode("ISO-8859-1").bytes
  assert_raise(Encoding::UndefinedConversionError, "U+00E9 from UTF-8 to US-ASCII") { "é".encode("US-ASCII") }
  assert_equal "?", "é".encode("US-ASCII", undef: :replace)
  assert_equal Encoding::US_ASCII, ("é".encode("US-ASCII", undef: :replace)).encoding
  assert_equal "?!", "é".encode("US-ASCII", undef: :replace, replace: "?!")
  assert_equal Encoding::US_ASCII, ("é".encode("US-ASCII", undef: :replace, replace: "?!")).encoding
  assert_equal "e", "é".encode("US-ASCII", fallback: {"é" => "e"})
  assert_equal Encoding::US_ASCII, ("é".encode("US-ASCII", fallback: {"é" => "e"})).encoding
  assert_raise(Encoding::InvalidByteSequenceError, "\"\\xFF\" on UTF-8") { "\xff".encode("UTF-16LE") }
  assert_equal [253, 255], "\xff".encode("UTF-16LE", invalid: :replace).bytes
  assert_equal "é", "\xe9".force_encoding("ISO-8859-1").encode("UTF-8")
  assert_equal "#<Encoding:UTF-8>", ("abc".encode("UTF-8").encoding).inspect
  assert_equal "a\nb", "a\nb".encode(universal_newline: true)
  assert_equal "a\nb", "a\r\nb".encode(universal_newline: true)
  assert_equal "a\r\nb", "a\nb".encode(crlf_newline: true)
  assert_equal "&lt;a&amp;'\"&gt;", "<a&'\">".encode(xml: :text)
  assert_equal "\"&lt;a&amp;&apos;&quot;&gt;\"", "<a&'\">".encode(xml: :attr)
  assert_raise(Encoding::UndefinedConversionError, "U+00E9 from UTF-8 to ASCII-8BIT") { "é".encode("ASCII-8BIT") }
  assert_raise(Encoding::UndefinedConversionError, "\"\\xC3\" from ASCII-8BIT to UTF-8") { "é".b.encode("UTF-8") }
  assert_equal "abc", "abc".b.encode("UTF-8")
  assert_equal "��", "é".force_encoding("ASCII-8BIT").encode("UTF-8", invalid: :replace, undef: :replace)
  s = +"é"
  assert_equal "\"\\u00E9\"", (s.encode!("UTF-16LE")).inspect
  assert_equal "#<Encoding:UTF-16LE>", (s.encoding).inspect
  assert_equal 2, s.bytesize
  assert_equal "abc�", "abc\xff".scrub
  assert_equal "abc?", "abc\xff".scrub("?")
  assert_equal "abc<ff>def<fe>", "abc\xffdef\xfe".scrub { |b| "<#{b.bytes.map { |x| x.to_s(16) }.join}>" }
  assert_equal "abc", "abc".scrub
  assert_equal "�", "\xe3\x81".scrub
  assert_equal "��", "\xe3\x81\xff".scrub
  s = +"a\xff"
  assert_equal "a�", s.scrub!
  assert_equal "a�", s
  assert_equal "abc", "abc".unicode_normalize
  assert_equal true, "abc".unicode_normalized?
  assert_equal "é", "é".unicode_normalize(:nfc)
  assert_equal "UTF-8", "é".encoding.name
  assert_equal Encoding::US_ASCII, ("é".encoding.name).encoding
  assert_equal "#<Encoding:UTF-8>", (Encoding.default_external).inspect
  assert_equal 2, "abc".force_encoding("UTF-16LE").length
  assert_equal "UTF-8", Encoding::UTF_8.name
  assert_equal Encoding::US_ASCII, (Encoding::UTF_8.name).encoding
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", Encoding::BINARY.inspect
  assert_equal Encoding::US_ASCII, (Encoding::BINARY.inspect).encoding
  assert_equal true, Encoding::UTF_8.names.include?("CP65001")
  assert_equal "#<Encoding:UTF-8>", (Encoding.find("utf-8")).inspect
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", (Encoding.find("binary")).inspect
  assert_raise(ArgumentError, "unknown encoding name - xyz") { Encoding.find("xyz") }
  assert_equal "#<Encoding:UTF-8>", (Encoding.compatible?("a", "b".b)).inspect
  assert_equal nil, Encoding.compatible?("é", "\xff".b)
  assert_equal false, "é".force_encoding("BINARY") == "é"
  assert_equal true, "a".force_encoding("BINARY") == "a"
  assert_equal false, "é".force_encoding("BINARY").eql?("é")
end

test "misc methods" do
  assert_equal "olleh", "hello".reverse
  assert_equal "olléh", "héllo".reverse
  assert_equal ["hello", " ", "world"], "hello world".partition(" ")
  assert_equal ["hello world", "", ""], "hello world".partition("x")
  assert_equal ["hell", "o", " world"], "hello world".partition(/o/)
  assert_equal ["hello w", "o", "rld"], "hello world".rpartition("o")
  assert_equal ["", "", "hello world"], "hello world".rpartition("x")
  assert_equal ["hello w", "o", "rld"], "hello world".rpartition(/o/)
  assert_equal ["", "b", "cc"], "abc".each_char.with_index.map { |c, i| c * i }
  assert_equal 97, "abc".getbyte(0)
  assert_equal 99, "abc".getbyte(-1)
  assert_equal nil, "abc".getbyte(3)
  s = +"abc"
  assert_equal 66, s.setbyte(0, 66)
  assert_equal 323, s.setbyte(-1, 0x143)
  assert_equal "BbC", s
  assert_raise(IndexError, "index 3 out of string") { s.setbyte(3, 0) }
  assert_equal "hello bob", "hello %s" % "bob"
  assert_equal true, "ab".between?("aa", "ac")
  assert_equal 97, "abc".ord
  assert_equal ["A", "B", "C"], "a".upto("c").map(&:upcase)
  assert_equal "hellohello", "hello"*2
  assert_equal 4, "test".then { |x| x.size }
  assert_equal [97, 98], "ab".each_char.map(&:ord)
  assert_equal "ab   |", "%-5s|" % "ab"
  assert_equal "abc", "abc".squeeze("")
  assert_equal "aaa", "aaa".squeeze("")
  assert_equal "hELLO", "Hello".swapcase!
  assert_equal nil, "hello"=~/xyz/
  assert_equal "_camel_case_string", "CamelCaseString".gsub(/([A-Z])/) { "_" + $1.downcase }
  assert_equal "SnakeCaseHere", "snake_case_here".split("_").map(&:capitalize).join
  assert_raise(ArgumentError, "too few arguments") { "a%b" % [] }
  assert_raise(ArgumentError, "incomplete format specifier; use %% (double %) instead") { "%" % [] }
  assert_equal "aBc", "abc".sub("b") { |m| m.upcase }
  assert_equal NoMethodError, "ab".zip rescue NoMethodError
  assert_equal "ell", "hello"[1..-2]
  assert_equal "llo", "hello"[-3..]
  assert_equal "abe", "abc".succ.succ
  assert_equal "xab|", "x".ljust(3, "ab") + "|"
end

test "bytes level" do
  assert_equal 2, "abc".byteindex("c")
  assert_equal 3, "héllo".byteindex("l")
  assert_equal 4, "héllo".byteindex("l", 4)
  assert_nil "héllo".byteindex("z")
  assert_equal 2, "hello".byteindex(/l+/)
  assert_raise(IndexError, "offset 2 does not land on character boundary") { "héllo".byteindex("l", 2) }
  assert_equal [104, 101], "hello".bytes.first(2)
  assert_equal [195, 169], "é".bytes
  assert_equal 4, "héllo".byterindex("l")
  assert_equal 3, "héllo".byterindex("l", 3)
  assert_equal 3, "hello".byterindex(/l/)
  s = +"hello"
  assert_same s, s.bytesplice(1, 2, "EY")
  assert_equal "hEYlo", s
  assert_equal "hXlo", s.bytesplice(1..2, "X")
  assert_equal "hXYZlo", (+"hXlo").bytesplice(1, 1, "WXYZ", 1, 3)
  assert_raise(IndexError, "offset 2 does not land on character boundary") { (+"héllo").bytesplice(2, 1, "x") }
  assert_equal "\"ab\\xFF\"", (+"ab").append_as_bytes(255).inspect
  assert_equal "abcd", (+"ab").append_as_bytes("c", "d")
end


test "implicit conversions find to_str/to_int through respond_to? and method_missing" do
  obj = Object.new
  def obj.respond_to?(name, *) = name == :to_int || name == :to_str
  def obj.method_missing(name, *) = name == :to_int ? 1 : "t"
  assert_equal 1, "str".rindex("t", obj)
  assert_equal "s", "str"[0, obj]
  assert_equal "at", "a" + obj
  bad = Object.new
  def bad.to_str = 1
  assert_raise(TypeError, "can't convert Object into String (Object#to_str gives Integer)") { "a" + bad }
  nil_str = Object.new
  def nil_str.to_str = nil
  assert_equal nil, String.try_convert(nil_str)
  bad_int = Object.new
  def bad_int.to_int = "x"
  assert_raise(TypeError, "can't convert Object into Integer (Object#to_int gives String)") { [1][bad_int] }
end

class StderrCollector
  attr_reader :text

  def initialize = @text = +""

  def write(*parts)
    parts.each { |x| @text << x.to_s }
    parts.sum { |x| x.to_s.bytesize }
  end
end

def capture_stderr
  saved = $stderr
  $stderr = StderrCollector.new
  yield
  $stderr.text
ensure
  $stderr = saved
end

test "chilled string literals and Symbol#to_s results (Ruby 3.4)" do
  old = Warning[:deprecated]
  Warning[:deprecated] = true
  begin
    s = "chilled"
    assert_equal false, s.frozen?
    assert_equal false, s.equal?(+s)
    assert_equal true, (-s).frozen?
    warned = capture_stderr { s << "!" }
    assert_match(/literal string will be frozen in the future/, warned)
    assert_equal "chilled!", s
    assert_equal "", capture_stderr { s << "?" }
    t = :chilled.to_s
    assert_match(/string returned by :chilled\.to_s will be frozen in the future/, capture_stderr { t << "x" })
    c = "c".clone
    assert_match(/will be frozen/, capture_stderr { c.instance_variable_set(:@a, 1) })
    f = "f"
    f.freeze
    assert_raise(FrozenError) { f << "x" }
  ensure
    Warning[:deprecated] = old
  end
end

test "paragraph chomp, UTF-16 grapheme clusters, \\+ in replacements" do
  assert_equal ["hello\nworld", "and\nuniverse", "dog"], "hello\nworld\n\n\nand\nuniverse\n\n\n\n\ndog".each_line("", chomp: true).to_a
  flag = "\u{1F3F3}\uFE0F\u200D\u{1F308}"
  assert_equal ["a", flag], ("a" + flag).encode("UTF-16LE").grapheme_clusters.map { |g| g.encode("UTF-8") }
  assert_equal "el!", "hello!".gsub(/(.)(.)/, '\+')
  assert_equal "<h><e><l><l><o><!>", "hello!".gsub(/(.)(.{20})?/, '<\+>')
end

test "scan, gsub and index over many matches in a long string keep character offsets right" do
  # Long enough to use the cached code range and the frozen snapshot (>= 128 bytes).
  s = "ab" * 2_000 + "é" + "ab" * 10
  assert_equal 2_010, s.scan("ab").size
  assert_equal 2_010, s.scan(/a(b)/).size
  assert_equal "xb" * 2_000 + "é" + "xb" * 10, s.gsub("a", "x")
  assert_equal 4_000, s.index("é")
  assert_equal 4_001, s.index("ab", 4_000)
  offsets = []
  s.scan(/b/) { offsets << $~.begin(0) if $~.begin(0) > 3_990 }
  assert_equal [3_991, 3_993, 3_995, 3_997, 3_999, 4_002, 4_004], offsets.take(7)
  t = +"x" * 200
  t.scan(/x/)
  t << "é"
  assert_equal 201, t.length
  assert_equal ["é"], t.scan(/é/)
end

test "sub!/gsub! raise when the block changes the receiver; scan and gsub set $~ to the last match" do
  str = +"hello"
  assert_raise(RuntimeError, "string modified") { str.sub!(//) { str << "x" } }
  str = +"hello"
  assert_raise(RuntimeError, "string modified") { str.gsub!(/l/) { str << "x"; "L" } }
  str = +"hello"
  assert_equal "xhello", str.sub(//) { str[0] = "x" }
  assert_equal "xello", str
  assert_equal "heLLo", (+"hello").gsub!(/l/) { "L" }
  assert_equal ["1", "22", "333"], "a1b22c333d".scan(/\d+/)
  assert_equal 6, $~.begin(0)
  "a1" =~ /a/
  assert_equal [], "abc".scan(/\d/)
  assert_equal nil, $~
  assert_equal "aXbXc", "a-b-c".gsub("-", "X")
  assert_equal 3, $~.begin(0)
  assert_equal "a[-]b[-]c", "a-b-c".gsub("-", "[\\0]")
  assert_equal "héllo wörld", "héllo wörld".gsub("o", "o")
  assert_equal "hé11o wör1d", "héllo wörld".gsub("l", "1")
  assert_equal 9, $~.begin(0)
  # One Oniguruma region serves all the matches of a call: unmatched groups stay unmatched.
  assert_equal [["a", "b"], ["a", nil], ["a", "b"]], "ab a ab".scan(/(a)(b)?/)
  assert_equal "<ab> <a> <ab>", "ab a ab".gsub(/(a)(b)?/) { "<#{$1}#{$2}>" }
  assert_equal "[ba] [a] [ba]", "ab a ab".gsub(/(a)(b)?/, '[\2\1]')
end
