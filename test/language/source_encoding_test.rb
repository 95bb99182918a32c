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

test "the magic comment counts only at the start of the first line (or after a shebang)" do
  assert_equal Encoding::Big5, eval("# -*- coding: big5 -*-\n__ENCODING__")
  assert_equal Encoding::Big5, eval("# vim: filetype=ruby, fileencoding=big5\n__ENCODING__")
  assert_equal Encoding::Big5, eval("#!/usr/bin/ruby\n# encoding: big5\n__ENCODING__")
  assert_equal Encoding::UTF_8, eval("\n# encoding: big5\n__ENCODING__")
  assert_equal Encoding::UTF_8, eval("1 + 1 # encoding: big5\n__ENCODING__")
end

test "eval takes the source encoding from the evaluated String" do
  assert_equal Encoding::US_ASCII, eval("__ENCODING__".dup.force_encoding("US-ASCII"))
  assert_equal Encoding::BINARY, eval("'a'".b).encoding
end
