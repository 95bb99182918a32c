# encoding: utf-8
require_relative "../assert"

test "quantified anchors and look-arounds match as in Onigmo" do
  assert_equal "ab", /a^?b/.match("ab")[0]
  assert_equal "ab", /a$*b/.match("ab")[0]
  assert_equal "", /(?:(?=a)|a)*/.match("aaa")[0]
  assert_equal ["x"], "x".scan(/\b?x/)
  assert_equal "a{,}", /a{,}/.match("a{,}")[0]
end

test "(?a), (?d) and (?u) choose ASCII or Unicode character ranges" do
  assert_equal "a", /(?a)[[:alpha:]]+/.match("a\u3042")[0]
  assert_equal "a\u3042", /(?d)[[:alpha:]]+/.match("a\u3042")[0]
  assert_equal "a", /(?d)\w+/.match("a\u3042")[0]
  assert_equal "a\u3042", /(?u)\w+/.match("a\u3042")[0]
  assert_equal "a", /\w+/.match("a\u3042")[0]
  assert_equal nil, /\d/.match("\uFF11")
  assert_equal nil, /\s/.match("\u3000")
  assert_equal "\u3042", /[[:word:]]/.match("\u3042")[0]
end

test "escapes: \\u{...}, \\x, and letters Oniguruma would read as escapes" do
  assert_equal 1, /\u{3042}/ =~ "x\u3042"
  assert_equal 0, /\u{61 62}/ =~ "ab"
  assert_equal 0, /[\u{2a}]/ =~ "*"
  assert_equal ["y"], /\y/.match("y").to_a
  assert_equal 1, /\xE3\x81\x82/ =~ "x\u3042"
  assert_raise(SyntaxError) { eval('/\xG/') }
  assert_raise(RegexpError, "invalid multibyte escape: /\\xff/") { Regexp.new("\\xff") }
  assert_raise(RegexpError) { Regexp.new("(?<a>a)(?(a)a|b)") }
end

test "literal encodings and flags" do
  assert_equal [Encoding::US_ASCII, 0, false], [/a/.encoding, /a/.options, /a/.fixed_encoding?]
  assert_equal [Encoding::UTF_8, 16], [/é/.encoding, /é/.options]
  assert_equal [Encoding::UTF_8, 16], [/\u3042/.encoding, /\u3042/.options]
  assert_equal [Encoding::US_ASCII, 32], [/a/n.encoding, /a/n.options]
  assert_equal [Encoding::BINARY, 48], [/\xff/n.encoding, /\xff/n.options]
  assert_equal Encoding::EUC_JP, /a/e.encoding
  assert_equal Encoding::Windows_31J, /a/s.encoding
  assert_equal [Encoding::UTF_8, true], [/a/u.encoding, /a/u.fixed_encoding?]
  assert_equal Encoding::EUC_JP, /#{/./}/e.encoding
  assert_equal [Encoding::UTF_8, true], [/#{"é"}/.encoding, /#{"é"}/.fixed_encoding?]
  assert_equal [Encoding::US_ASCII, false], [/#{"a"}/.encoding, /#{"a"}/.fixed_encoding?]
  assert_equal "/a/", /a/u.inspect
  assert_equal "/\\xff/n", /\xff/n.inspect
  assert_equal true, /a/ == /a/n
  assert_equal false, /a/ == /a/u
end

test "Regexp.new picks the encoding from the string" do
  assert_equal [Encoding::US_ASCII, 0], [Regexp.new("a".b).encoding, Regexp.new("a".b).options]
  assert_equal [Encoding::BINARY, 16], [Regexp.new("\xff".b).encoding, Regexp.new("\xff".b).options]
  assert_equal "/\\xFF/", Regexp.new("\xff".b).inspect
  assert_equal Encoding::EUC_JP, Regexp.new("a".encode("EUC-JP"), Regexp::FIXEDENCODING).encoding
  assert_equal Encoding::BINARY, Regexp.allocate.encoding
  assert_raise(TypeError) { Regexp.allocate.source }
end

test "matching adapts a non-fixed regexp to the subject; fixed ones must be compatible" do
  euc = "\xa4\xa2".dup.force_encoding("EUC-JP")
  assert_equal [euc], /./.match(euc).to_a
  assert_equal ["\xa4".b], /./n.match("\xa4\xa2".b).to_a
  win = "\xc3\xa9".dup.force_encoding("Windows-31J")
  assert_equal ["\xc3".dup.force_encoding("Windows-31J")], /./s.match(win).to_a
  assert_equal 0, /a/e =~ "a"
  assert_raise(Encoding::CompatibilityError, "incompatible encoding regexp match (UTF-8 regexp with EUC-JP string)") { /a/u =~ euc }
  assert_raise(Encoding::CompatibilityError) { /\A\s*\z/ =~ " ".encode("UTF-16LE") }
  assert_raise(ArgumentError, "invalid byte sequence in UTF-8") { "\x80".dup.force_encoding("UTF-8") =~ /./ }
end

test "/o builds an interpolated regexp once" do
  seen = []
  2.times { |i| seen << /#{i}/o }
  assert_equal [/0/, /0/], seen
  assert_same seen[0], seen[1]
end

test "dup and clone copy a regexp" do
  r = /ab/i
  d = r.dup
  assert_equal r, d
  assert_equal 0, d =~ "AB"
  assert_false d.frozen?
  assert_true r.clone.frozen?
end
