require_relative "../assert"

# String literals and __ENCODING__ follow the source's magic comment.

test "a UTF-8 source" do
  assert_equal Encoding::UTF_8, "abc".encoding
  assert_equal Encoding::UTF_8, __ENCODING__
  assert_equal Encoding::UTF_8, "\xff".encoding
  assert_equal Encoding::US_ASCII, defined?(x = 1).encoding
end

test "a US-ASCII source" do
  code = "# encoding: us-ascii\n[\"abc\".encoding, __ENCODING__, \"a\#{1}b\".encoding, \"\\u00e9\".encoding]"
  assert_equal [Encoding::US_ASCII, Encoding::US_ASCII, Encoding::US_ASCII, Encoding::UTF_8], eval(code)
end
