# encoding: utf-8
require_relative "../assert"

test "the encoding list has CRuby's names, aliases and flags" do
  assert_equal 103, Encoding.list.size
  assert_true Encoding.name_list.include?("CP932")
  assert_true Encoding.name_list.include?("locale")
  assert_equal "Windows-31J", Encoding.aliases["CP932"]
  assert_equal "Windows-31J", Encoding.aliases["SJIS"]
  assert_same Encoding::Shift_JIS, Encoding::SHIFT_JIS
  assert_same Encoding::Windows_31J, Encoding::CP932
  assert_same Encoding::EUC_JP, Encoding.find("eucJP")
  assert_same Encoding::Windows_1252, Encoding.find("cp1252")
  assert_equal "GB18030", Encoding::GB18030.name
  assert_true Encoding::ISO_2022_JP.dummy?
  assert_true Encoding::UTF_16.dummy?
  assert_false Encoding::UTF_16LE.dummy?
  assert_false Encoding::ISO_2022_JP.ascii_compatible?
  assert_true Encoding::Big5.ascii_compatible?
  assert_equal "#<Encoding:ISO-2022-JP (dummy)>", Encoding::ISO_2022_JP.inspect
  assert_equal ["Big5-HKSCS", "Big5-HKSCS:2008"], Encoding::Big5_HKSCS.names
  assert_raise(ArgumentError, "unknown encoding name - nope") { Encoding.find("nope") }
end

test "multibyte characters are measured per encoding" do
  sjis = "\x82\xA0\x82\xA2a\xB1".force_encoding("Shift_JIS")
  assert_equal 4, sjis.length
  assert_equal ["\x82\xA0", "\x82\xA2", "a", "\xB1"].map { |c| c.force_encoding("Shift_JIS") }, sjis.chars
  assert_true sjis.valid_encoding?
  assert_false "\x82".force_encoding("Shift_JIS").valid_encoding?
  euc = "\xA4\xA2\x8F\xA2\xAF\x8E\xB1".force_encoding("EUC-JP")
  assert_equal [2, 3, 2], euc.chars.map(&:bytesize)
  gb = "\x81\x30\x81\x30\xB0\xA1z".force_encoding("GB18030")
  assert_equal 3, gb.length
  assert_equal 2, "\xB0\xA1\xB0".force_encoding("EUC-KR").length
  assert_false "\xB0\xA1\xB0".force_encoding("EUC-KR").valid_encoding?
  assert_equal 1, "\xA4\x40".force_encoding("Big5").length
  assert_equal 2, "\x00\xD8\x61\x00".force_encoding("UTF-16LE").length
  assert_equal 0x82A0, "\x82\xA0".force_encoding("Shift_JIS").ord
  assert_equal "\x82\xA0".force_encoding("Shift_JIS"), 0x82A0.chr("Shift_JIS")
end

test "encode between Unicode and the table encodings" do
  assert_equal "\x82\xA0".force_encoding("Shift_JIS"), "あ".encode("Shift_JIS")
  assert_equal "あ", "\x82\xA0".force_encoding("Shift_JIS").encode("UTF-8")
  assert_equal "\xA4\xA2".force_encoding("EUC-JP"), "あ".encode("EUC-JP")
  assert_equal "\x87\x40".force_encoding("CP932"), "①".encode("CP932")
  assert_equal "\xB0\xA1".force_encoding("GBK"), "啊".encode("GBK")
  assert_equal "\x81\x30\x81\x30".force_encoding("GB18030"), "\u0080".encode("GB18030")
  assert_equal "\u{10000}", "\x90\x30\x81\x30".force_encoding("GB18030").encode("UTF-8")
  assert_equal "\xB0\xA1".force_encoding("EUC-KR"), "가".encode("EUC-KR")
  assert_equal "\xA4\x40".force_encoding("Big5"), "一".encode("Big5")
  assert_equal "\x80".force_encoding("Windows-1252"), "€".encode("Windows-1252")
  assert_equal "\xE9".force_encoding("ISO-8859-1"), "é".encode("ISO-8859-1")
  assert_equal "\xC1".force_encoding("KOI8-R"), "а".encode("KOI8-R")
  assert_equal "\x82".force_encoding("IBM437"), "é".encode("IBM437")
  assert_equal "é", "\xE9".force_encoding("ISO-8859-1").encode("UTF-16LE").encode("UTF-8")
  assert_equal "\xA4\xA2".force_encoding("EUC-JP"), "\x82\xA0".force_encoding("Shift_JIS").encode("EUC-JP")
  assert_equal "\xFE\xFF\x00a".force_encoding("UTF-16"), "a".encode("UTF-16")
  assert_equal "a", "\xFF\xFEa\x00".force_encoding("UTF-16").encode("UTF-8")
end

test "ISO-2022-JP is stateful" do
  jis = "あいa".encode("ISO-2022-JP")
  assert_equal "\e$B$\"$$\e(Ba".b, jis.b
  assert_equal "あいa", jis.encode("UTF-8")
  assert_equal "あ", "\e$B$\"".force_encoding("ISO-2022-JP").encode("UTF-8")
  assert_equal "\e(I1\e(B".b, "ｱ".encode("CP50221").b
  assert_equal "\e$B%\"\e(B".b, "ｱ".encode("CP50220").b
  assert_equal "\e$B-!\e(B".b, "①".encode("CP50221").b
  assert_equal "ｱ", "\x0e1\x0f".force_encoding("CP50221").encode("UTF-8")
  assert_equal "\x92\xA4\xA2a".b, "あa".encode("stateless-ISO-2022-JP").b
end

test "conversion errors have CRuby's messages and details" do
  e = assert_raise(Encoding::UndefinedConversionError, "U+00E9 from UTF-8 to US-ASCII") { "é".encode("US-ASCII") }
  assert_equal "é", e.error_char
  assert_equal "UTF-8", e.source_encoding_name
  assert_equal Encoding::US_ASCII, e.destination_encoding
  assert_raise(Encoding::UndefinedConversionError, "U+20AC to Shift_JIS in conversion from ISO-8859-15 to UTF-8 to Shift_JIS") do
    "\xA4".force_encoding("ISO-8859-15").encode("Shift_JIS")
  end
  assert_raise(Encoding::UndefinedConversionError, "\"\\x85@\" from Shift_JIS to UTF-8") do
    "\x85\x40".force_encoding("Shift_JIS").encode("UTF-8")
  end
  e = assert_raise(Encoding::InvalidByteSequenceError, "\"\\xF1\" followed by \"a\" on UTF-8") { "\xF1abc".encode("ISO-8859-1") }
  assert_equal "\xF1".b, e.error_bytes
  assert_equal "a".b, e.readagain_bytes
  e = assert_raise(Encoding::InvalidByteSequenceError, "incomplete \"\\xE3\\x81\" on UTF-8") { "\xE3\x81".encode("UTF-16LE") }
  assert_true e.incomplete_input?
  e = assert_raise(Encoding::UndefinedConversionError, "U+3042 to WINDOWS-1252 in conversion from UTF-8 to WINDOWS-1252") { "あ".encode("Windows-1252") }
  assert_equal "WINDOWS-1252", e.destination_encoding_name
  assert_raise(Encoding::UndefinedConversionError, "\"\\x81\" to UTF-8 in conversion from Windows-1252 to UTF-8") do
    "\x81".force_encoding("Windows-1252").encode("UTF-8")
  end
  e = assert_raise(Encoding::UndefinedConversionError, "\"\\x8E\\xB1\" to stateless-ISO-2022-JP in conversion from UTF-8 to EUC-JP to stateless-ISO-2022-JP to ISO-2022-JP") do
    "ｱ".encode("ISO-2022-JP")
  end
  assert_equal Encoding::EUC_JP, e.error_char.encoding
  assert_raise(Encoding::InvalidByteSequenceError, "\"\\xE3\\x81\" followed by \"\\r\" on UTF-8") { "\xE3\x81\r".encode("EUC-KR") }
  assert_raise(Encoding::ConverterNotFoundError, "code converter not found (UTF-8 to X-NOPE)") { "é".encode("X-NOPE") }
  assert_raise(Encoding::ConverterNotFoundError, "code converter not found (UTF-8 to UTF-7)") { "é".encode("UTF-7") }
end

def fallback_e(_char) = "E"

test "encode options" do
  assert_equal "?", "あ".encode("ISO-8859-1", undef: :replace)
  assert_equal "Xa", "\xFFa".encode("ISO-8859-1", invalid: :replace, replace: "X")
  assert_equal "\uFFFDa", "\xFFa".encode("UTF-16LE", invalid: :replace).encode("UTF-8")
  assert_equal "\uFFFDa", "\xFFa".encode("UTF-8", invalid: :replace)
  assert_equal "[e9]", "é".encode("US-ASCII", fallback: { "é" => "[e9]" })
  assert_equal "<e9>", "é".encode("US-ASCII", fallback: ->(c) { "<#{c.ord.to_s(16)}>" })
  assert_equal "E", "é".encode("US-ASCII", fallback: method(:fallback_e))
  assert_raise(Encoding::UndefinedConversionError) { "é".encode("US-ASCII", fallback: {}) }
  assert_equal "\"a&lt;&#xE9;&gt;&amp;&quot;\"", "a<é>&\"".encode("US-ASCII", xml: :attr)
  assert_equal "a&lt;é&gt;&amp;\"", "a<é>&\"".encode(xml: :text)
  assert_equal "a\nb\nc\n", "a\r\nb\rc\n".encode(universal_newline: true)
  assert_equal "a\r\nb", "a\nb".encode("UTF-8", crlf_newline: true)
  assert_equal "a\rb", "a\nb".encode(newline: :cr)
  s = +"é"
  s.encode!("ISO-8859-1")
  assert_equal Encoding::ISO_8859_1, s.encoding
  assert_equal "\xE9".b, s.b
end

test "Encoding.compatible?" do
  assert_equal Encoding::UTF_8, Encoding.compatible?("a", "é")
  assert_nil Encoding.compatible?("é", "é".encode("ISO-8859-1"))
  assert_equal Encoding::UTF_8, Encoding.compatible?(Encoding::UTF_8, Encoding::US_ASCII)
  assert_nil Encoding.compatible?(Encoding::UTF_7, Encoding::US_ASCII)
  assert_equal Encoding::UTF_8, Encoding.compatible?(/abc/, "é")
end
