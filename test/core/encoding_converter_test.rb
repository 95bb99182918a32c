# encoding: binary
require_relative "../assert"

test "constants and construction" do
  assert_equal 0x2, Encoding::Converter::INVALID_REPLACE
  assert_equal 0x10000, Encoding::Converter::PARTIAL_INPUT
  assert_equal 0x100000, Encoding::Converter::XML_ATTR_QUOTE_DECORATOR
  ec = Encoding::Converter.new("UTF-8", "EUC-JP")
  assert_equal Encoding::UTF_8, ec.source_encoding
  assert_equal Encoding::EUC_JP, ec.destination_encoding
  assert_equal "#<Encoding::Converter: UTF-8 to EUC-JP>", ec.inspect
  assert_raise(Encoding::ConverterNotFoundError) { Encoding::Converter.new("UTF-8", "UTF-8") }
  assert_raise(Encoding::ConverterNotFoundError, "code converter not found (UTF-8 to UTF-7)") { Encoding::Converter.new("UTF-8", "UTF-7") }
  assert_equal Encoding::Converter.new("UTF-8", "EUC-JP"), ec
  assert_false Encoding::Converter.new("UTF-8", "EUC-JP", crlf_newline: true) == ec
end

test "convpath and search_convpath" do
  assert_equal [[Encoding::UTF_8, Encoding::EUC_JP], "crlf_newline"], Encoding::Converter.new("UTF-8", "EUC-JP", crlf_newline: true).convpath
  assert_equal [[Encoding::ISO_8859_1, Encoding::UTF_8], [Encoding::UTF_8, Encoding::EUC_JP], "xml_attr_content_escape", "xml_attr_quote", "universal_newline"],
    Encoding::Converter.search_convpath("ISO-8859-1", "EUC-JP", universal_newline: true, xml: :attr)
  assert_equal [[Encoding::Shift_JIS, Encoding::EUC_JP]], Encoding::Converter.search_convpath("Shift_JIS", "EUC-JP")
  assert_equal 3, Encoding::Converter.search_convpath("UTF-8", "ISO-2022-JP").size
  assert_equal Encoding::Stateless_ISO_2022_JP, Encoding::Converter.asciicompat_encoding("ISO-2022-JP")
  assert_equal Encoding::UTF_8, Encoding::Converter.asciicompat_encoding("UTF-16BE")
  assert_nil Encoding::Converter.asciicompat_encoding("UTF-8")
end

test "convert and finish stream stateful output" do
  ec = Encoding::Converter.new("UTF-8", "ISO-2022-JP")
  out = ec.convert("\xE3\x81".dup)
  out << ec.convert("\x82a".dup)
  out << ec.finish
  assert_equal "\e$B$\"\e(Ba", out.b
  assert_equal Encoding::ISO_2022_JP, out.encoding
  ec = Encoding::Converter.new("EUC-JP", "ISO-8859-1")
  ec.convert("\xA4".dup)
  e = assert_raise(Encoding::InvalidByteSequenceError) { ec.finish }
  assert_true e.incomplete_input?
  assert_equal [:incomplete_input, "EUC-JP", "UTF-8", "\xA4", ""], ec.primitive_errinfo
end

test "primitive_convert results" do
  ec = Encoding::Converter.new("UTF-8", "ISO-8859-1")
  src = "\xF1abcd".dup
  dst = "".dup
  assert_equal :invalid_byte_sequence, ec.primitive_convert(src, dst)
  assert_equal "bcd", src
  assert_equal [:invalid_byte_sequence, "UTF-8", "ISO-8859-1", "\xF1", "a"], ec.primitive_errinfo
  assert_equal :finished, ec.primitive_convert(src, dst)
  assert_equal "abcd", dst
  assert_equal Encoding::ISO_8859_1, dst.encoding

  ec = Encoding::Converter.new("UTF-8", "ISO-8859-1")
  assert_equal :undefined_conversion, ec.primitive_convert(s = "\xE9\xA1\xB6abcd".dup, "".dup)
  assert_equal "abcd", s
  assert_equal [:undefined_conversion, "UTF-8", "ISO-8859-1", "\xE9\xA1\xB6", ""], ec.primitive_errinfo
  assert_kind_of Encoding::UndefinedConversionError, ec.last_error

  ec = Encoding::Converter.new("EUC-JP", "ISO-8859-1")
  assert_equal :source_buffer_empty, ec.primitive_convert(s = "\xA4".dup, "".dup, nil, nil, partial_input: true)
  assert_equal "", s

  ec = Encoding::Converter.new("UTF-8", "ISO-8859-1")
  dst = "aa".dup
  assert_equal :destination_buffer_full, ec.primitive_convert("b".dup, dst, nil, 0)
  ec.primitive_convert("b".dup, dst, nil, 1)
  assert_equal :finished, ec.primitive_convert("b".dup, dst, nil, 2)
  assert_equal "aabbb", dst

  ec = Encoding::Converter.new("UTF-8", "EUC-JP")
  dst = "".dup
  assert_equal :after_output, ec.primitive_convert(src = "ab".dup, dst, nil, nil, Encoding::Converter::AFTER_OUTPUT)
  assert_equal "a", dst
  assert_equal "b", src
  assert_raise(ArgumentError) { ec.primitive_convert("".dup, "am".dup, 3) }
end

test "putback, insert_output and replacement" do
  ec = Encoding::Converter.new("UTF-16LE", "ISO-8859-1")
  assert_equal :invalid_byte_sequence, ec.primitive_convert("\x00\xD8\x61\x00".dup, "".dup)
  back = ec.putback
  assert_equal "a\x00", back.b
  assert_equal Encoding::UTF_16LE, back.encoding
  assert_equal "", ec.putback

  ec = Encoding::Converter.new("UTF-8", "ISO-8859-1")
  ec.insert_output("<")
  assert_equal "<x", ec.convert("x")

  ec = Encoding::Converter.new("UTF-8", "US-ASCII", undef: :replace)
  assert_equal "?", ec.replacement
  ec.replacement = "*"
  assert_equal "a*b", ec.convert("a\xC3\xA9b")
  ec = Encoding::Converter.new("US-ASCII", "UTF-8")
  assert_equal "\u{FFFD}".force_encoding("UTF-8"), ec.replacement
end

test "decorators and flags on a converter" do
  ec = Encoding::Converter.new("UTF-8", "US-ASCII", Encoding::Converter::UNDEF_HEX_CHARREF | Encoding::Converter::XML_TEXT_DECORATOR)
  assert_equal "&lt;&#xE9;&gt;", ec.convert("<\xC3\xA9>")
  ec = Encoding::Converter.new("UTF-8", "UTF-16BE", universal_newline: true)
  assert_equal "\x00a\x00\n\x00b\x00\n", (ec.convert("a\r\nb\r") + ec.finish).b
end

test "a converter with decorators only" do
  ec = Encoding::Converter.new("", "", crlf_newline: true)
  assert_equal "#<Encoding::Converter: crlf_newline>", ec.inspect
  assert_nil ec.source_encoding
  assert_equal ["crlf_newline"], ec.convpath
  assert_equal "a\r\nb\xFF", ec.convert("a\nb\xFF")
  assert_equal "#<Encoding::Converter: no-conversion>", Encoding::Converter.new("", "").inspect
  assert_raise(Encoding::ConverterNotFoundError, "code converter not found (UTF-8)") { Encoding::Converter.new("", "UTF-8") }
  assert_equal "\xFFa\r\n", "\xFFa\n".encode(crlf_newline: true).b
end
