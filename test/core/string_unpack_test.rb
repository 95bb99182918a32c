require_relative "../assert"

test "strings and bits" do
  assert_equal ["ab"], "ab  \0".unpack("A*")
  assert_equal ["ab", "cd"], "ab\0cd".unpack("Z*a*")
  assert_equal ["ab", "\x00cd"], "ab\0cd".unpack("Z2a*")
  assert_equal ["ab", "c", ""], "abc".unpack("A2A2A2")
  assert_equal ["ab"], "ab".unpack("a3")
  assert_equal "ab", "abc".unpack1("a2")
  assert_equal Encoding::ASCII_8BIT, ("abc".unpack1("a2")).encoding
  assert_equal ["11111111"], "\xff".unpack("b*")
  assert_equal ["111111110000"], "\xff\x0f".unpack("B12")
  assert_equal ["ba", ""], "\xab".unpack("h*H*")
  assert_equal ["a"], "\xab".unpack("H")
  assert_equal ["100", "011", "", ""], "ab".unpack("b3B3h3H3")
  assert_equal "616263", "abc".unpack1("H*")
  assert_equal Encoding::US_ASCII, ("abc".unpack1("H*")).encoding
  assert_equal [104, 233, 108, 108, 111], "héllo".unpack("U*")
  assert_equal [12354], "\xE3\x81\x82".unpack("U")
  assert_raise(ArgumentError, "malformed UTF-8 character") { "\xff".unpack("U") }
  assert_equal ["hello", "world"], "hello world".unpack("a5 x a*")
  assert_equal ["a", "b"], "abc".unpack("a1 # comment\na1")
end

test "integers" do
  assert_equal [nil], "abc".unpack("N")
  assert_equal [nil, nil], "\x01".unpack("n2")
  assert_equal [1633837924], "abcd".unpack("N*")
  assert_equal [1633837924], "abcdef".unpack("N*")
  assert_equal [97, 98, nil, nil, nil], "ab".unpack("C5")
  assert_equal [97, 98, 99], "abc".unpack("C*")
  assert_equal [-1], "\xff\xff".unpack("s")
  assert_equal [65535], "\xff\xff".unpack("S")
  assert_equal [-1, nil], "\xff\xff\xff\xff".unpack("l<L>")
  assert_equal [7523094288207667809, nil, nil], "abcdefgh".unpack("q<Q>j")
  assert_equal [513, nil, nil, nil, nil, nil], "\x01\x02".unpack("S_ s! i I! l_ L!")
  assert_equal [506097522914230528], "\x00\x01\x02\x03\x04\x05\x06\x07".unpack("l!")
  assert_equal [1, 770], "\x00\x01\x02\x03".unpack("nv")
  assert_equal [66051, nil], "\x00\x01\x02\x03".unpack("Nv")
  assert_equal [-128], "\x80".unpack("c")
  assert_equal [129], "\x81\x01".unpack("w")
  assert_equal [2097153, 5], "\x81\x80\x80\x01\x05".unpack("w*")
  assert_equal 255, "\xff".unpack("C*").sum
end

test "floats and codecs" do
  assert_equal [1.5], "\x00\x00\x00\x00\x00\x00\xF8?".unpack("E")
  assert_equal [1.0], "\x00\x00\x80\x3f".unpack("e")
  assert_equal [1.0], "\x3f\x80\x00\x00".unpack("g")
  assert_equal [1.5], "?\xF8\x00\x00\x00\x00\x00\x00".unpack("G")
  assert_equal [1.0, nil], "\x00\x00\x80\x3f".unpack("f2")
  assert_equal ["hello"], "aGVsbG8=".unpack("m")
  assert_equal ["hello"], "aGVsbG8".unpack("m")
  assert_raise(ArgumentError, "invalid base64") { "aGVsbG8".unpack("m0") }
  assert_equal ["hello"], "aGVsbG8=".unpack("m0")
  assert_equal "hello", "aGVs\nbG8=\n".unpack1("m")
  assert_equal Encoding::ASCII_8BIT, ("aGVs\nbG8=\n".unpack1("m")).encoding
  assert_equal ["A"], "=41=\n".unpack("M")
  assert_equal ["abc"], "#86)C\n".unpack("u")
end

test "positioning and options" do
  assert_equal ["c"], "abc".unpack("x2a")
  assert_equal ["bc"], "abc".unpack("@1a*")
  assert_equal ["a", "a"], "abc".unpack("a X a")
  assert_raise(ArgumentError, "x outside of string") { "abc".unpack("x5") }
  assert_raise(ArgumentError, "X outside of string") { "abc".unpack("X") }
  assert_raise(ArgumentError, "@ outside of string") { "abc".unpack1("@5") }
  assert_equal ["b"], "abc".unpack("a", offset: 1)
  assert_raise(ArgumentError, "offset outside of string") { "abc".unpack("a", offset: 4) }
  assert_equal [""], "abc".unpack("a2", offset: 3)
  assert_equal [], "abcd".unpack("p")
  assert_equal [nil], "a".unpack("s_<")
  assert_raise(ArgumentError, "'_' allowed only after types sSiIlLqQjJ") { "a".unpack("a_") }
  r = []
  assert_equal nil, "ab".unpack("C*") { |y| r << y }
  assert_equal [97, 98], r
end

test "unknown directives raise (Ruby 3.3+)" do
  assert_raise(ArgumentError, "unknown unpack directive 'y' in 'y'") { "a".unpack("y") }
  assert_equal Encoding::BINARY, "abc".unpack1("a*").encoding
  assert_equal Encoding::US_ASCII, "abc".unpack1("H*").encoding
end

test "NUL is an unknown directive; '*' is the rest of the string for every directive" do
  assert_raise(ArgumentError, "unknown unpack directive '\\x00' in 'S\\x002'") { "abcd".unpack("S\0002") }
  assert_equal ["ab", ""], "abcdef".unpack("a2x*a")
  assert_equal ["ab", "e"], "abcdef".unpack("a2@*a")
  assert_raise(ArgumentError, "X outside of string") { "abcdef".unpack("a2X*a") }
  assert_equal ["bc", "a"], "abcdef".unpack("a2@a", offset: 1)
  assert_equal ["c"], "abcdef".unpack("@2a", offset: 1)
  assert_raise(ArgumentError, "offset can't be negative") { "a".unpack("C", offset: -1) }
end

test "decoders leave the position where CRuby's do" do
  assert_equal ["abcabc", "a"], "#86)C\n#86)C\nabc".unpack("ua")
  assert_equal ["ab", "="], "YWI=abc".unpack("ma")
  assert_equal ["abc", "d"], "abc\0de".unpack("Z*a")
  assert_equal ["abc", ""], "abc".unpack("Z5a")
  assert_equal ["100", "b"], "abcdef".unpack("b3a")
  assert_equal [97, 98, "c"], "abc".unpack("U2a")
  assert_equal [129, 2], "\x81\x01\x02".unpack("w*")
  assert_equal [97, 98, 99, nil, nil], "abc".unpack("c5")
  assert_equal 97, "abc".unpack1("c5")
end

test "p and P map pointers back to the packed strings" do
  s = "héllo"
  packed = [s].pack("P")
  assert_same s, packed.unpack1("P10")
  assert_equal "h\xC3".b, packed.unpack1("P2")
  assert_equal Encoding::BINARY, packed.unpack1("P2").encoding
  assert_same s, [s].pack("p").unpack1("p")
  assert_equal [nil], [nil].pack("p").unpack("p")
  assert_raise(ArgumentError, /no associated pointer/) { packed.to_sym.to_s.unpack("P5") }
end
