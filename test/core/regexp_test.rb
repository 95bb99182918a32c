require_relative "../assert"

class WarningCollector
  attr_reader :text

  def initialize = @text = +""

  def write(*parts)
    parts.each { |x| @text << x.to_s }
    parts.sum { |x| x.to_s.bytesize }
  end
end

def capture_warnings(verbose: false)
  saved, saved_verbose = $stderr, $VERBOSE
  $stderr = WarningCollector.new
  $VERBOSE = verbose
  yield
  $stderr.text
ensure
  $stderr = saved
  $VERBOSE = saved_verbose
end

test "Regexp.union joins parts under one encoding" do
  assert_equal(/(?!)/, Regexp.union)
  assert_equal(/skiing|sledding/, Regexp.union("skiing", "sledding"))
  assert_equal(/n|\./, Regexp.union("n", "."))
  assert_equal(/(?-mix:dogs)|(?i-mx:cats)/, Regexp.union(/dogs/, /cats/i))
  assert_equal Encoding::US_ASCII, Regexp.union("a", "b".encode("SJIS")).encoding
  assert_equal Encoding::UTF_16LE, Regexp.union("a".encode("UTF-16LE")).encoding
  assert_equal Encoding::UTF_16LE, Regexp.union("a".encode("UTF-16LE"), "b".encode("UTF-16LE")).encoding
  assert_equal Encoding::ISO_8859_1, Regexp.union("\u00A9".encode("ISO-8859-1"), "a").encoding
  assert_equal Encoding::BINARY, Regexp.union(/abc/, /[\x00-\x7f]/n, /[\x80-\xBF]/n).encoding
  assert_equal Encoding::UTF_8, Regexp.union(/probl[éeè]me/i, /help/i).encoding
  assert_raise(ArgumentError, "incompatible encodings: UTF-16LE and UTF-16BE") do
    Regexp.union("a".encode("UTF-16LE"), "b".encode("UTF-16BE"))
  end
  assert_raise(ArgumentError, "incompatible encodings: UTF-8 and ISO-8859-1") do
    Regexp.union(Regexp.new("a", Regexp::FIXEDENCODING), "\u00A9".encode("ISO-8859-1"))
  end
  assert_raise(ArgumentError, "ASCII incompatible encoding: UTF-16LE") do
    Regexp.union("a".encode("UTF-16LE"), "b")
  end
  obj = Object.new
  def obj.to_regexp = /foo/
  assert_equal(/foo/, Regexp.union(obj))
  assert_equal(/foo/, Regexp.union(:foo))
  assert_equal 0, Regexp.union("a.c".encode("UTF-16LE"), "x".encode("UTF-16LE")) =~ "a.c".encode("UTF-16LE")
  assert_nil Regexp.union("a.c".encode("UTF-16LE"), "x".encode("UTF-16LE")) =~ "abc".encode("UTF-16LE")
end

test "Regexp.escape works by character and reports US-ASCII for ASCII text" do
  assert_equal Encoding::US_ASCII, Regexp.escape("abc".dup.force_encoding("EUC-JP")).encoding
  assert_equal Encoding::UTF_8, Regexp.escape("あ.").encoding
  assert_equal "あ\\.", Regexp.escape("あ.")
  assert_equal "a\\.c".encode("UTF-16LE"), Regexp.escape("a.c".encode("UTF-16LE"))
  sjis = "\x95\x5c".dup.force_encoding("Shift_JIS") # a character whose second byte is "\\"
  assert_equal sjis, Regexp.escape(sjis)
end

test "Regexp.try_convert" do
  assert_equal(/x/, Regexp.try_convert(/x/))
  assert_nil Regexp.try_convert("x")
  obj = Object.new
  def obj.to_regexp = "no"
  assert_raise(TypeError, "can't convert Object into Regexp (Object#to_regexp gives String)") { Regexp.try_convert(obj) }
end

test "timeouts" do
  assert_nil Regexp.timeout
  Regexp.timeout = 3
  assert_equal 3.0, Regexp.timeout
  assert_nil(/a/.timeout)
  Regexp.timeout = 0.01
  e = assert_raise(Regexp::TimeoutError, "regexp match timeout") { /^(a*)*$/ =~ "a" * 100_000 + "x" }
  assert_kind_of RegexpError, e
  Regexp.timeout = nil
  re = Regexp.new("^a*b?a*$", timeout: 0.01)
  assert_equal 0.01, re.timeout
  assert_raise(Regexp::TimeoutError) { re =~ "a" * 100_000 + "x" }
  assert_equal 0, re =~ "aaa"
  assert_equal 0.01, re.dup.timeout
  assert_raise(ArgumentError, "invalid timeout: 0") { Regexp.timeout = 0 }
  assert_raise(ArgumentError, "invalid timeout: -1") { Regexp.new("a", timeout: -1) }
ensure
  Regexp.timeout = nil
end

test "Regexp.linear_time? holds for patterns of bounded match length" do
  assert_true Regexp.linear_time?(/a/)
  assert_true Regexp.linear_time?("a", Regexp::IGNORECASE)
  assert_true Regexp.linear_time?(/[\x80-\xff]/n)
  assert_true Regexp.linear_time?(/a{2,5}(b|cd)?[*+]\*/)
  assert_true Regexp.linear_time?(/(?<a>a){0}\g<a>/)
  assert_false Regexp.linear_time?(/(a)\1/)
  assert_false Regexp.linear_time?(/a*/)
  assert_false Regexp.linear_time?(/a{2,}/)
  assert_false Regexp.linear_time?(/(?<a>a\g<a>?)/)
  assert_false Regexp.linear_time?(/(?~abc)/)
  assert_match(/warning: flags ignored/, capture_warnings { Regexp.linear_time?(/a/, Regexp::IGNORECASE) })
end

test "to_s folds an option group that covers the whole pattern" do
  assert_equal "(?i-mx:nothing outside)", /(?i:nothing outside)/.to_s
  assert_equal "(?-mix:)", /(?mmmmix-miiiix:)/.to_s
  assert_equal "(?-mix:(?ix:foo)(?m:bar))", /(?ix:foo)(?m:bar)/.to_s
  assert_equal "(?-mix:(?i:a)|(?:b))", /(?i:a)|(?:b)/.to_s
  assert_equal "(?m-ix:a)", /(?m)a/.to_s
end

test "Regexp.new arguments" do
  assert_match(/flags ignored/, capture_warnings { assert_equal 0, Regexp.new(/hi/, Regexp::IGNORECASE).options & Regexp::IGNORECASE })
  warned = capture_warnings(verbose: true) { assert_true Regexp.new("hi", Object.new).casefold? }
  assert_match(/expected true or false as ignorecase/, warned)
  assert_equal "", capture_warnings(verbose: true) { Regexp.new("hi", true) }
  assert_raise(RegexpError, "too short escape sequence: /\\/") { Regexp.new("\\") }
  assert_raise(RegexpError, "invalid Unicode range: /\\u{0ffffff}/") { Regexp.new("\\u{0ffffff}") }
  assert_raise(FrozenError) { //.send(:initialize, "") }
  assert_raise(TypeError) { Regexp.new("").send(:initialize, "") }
  assert_equal Regexp.compile("a", timeout: 1).timeout, 1.0
end

test "\\u escapes of ASCII characters leave a pattern US-ASCII" do
  re = /[\u{20}-\u{7E}]/
  assert_equal Encoding::US_ASCII, re.encoding
  assert_equal Encoding::US_ASCII, re.source.encoding
  assert_false re.fixed_encoding?
  assert_equal Encoding::UTF_8, /\u3042/.encoding
  assert_equal 0, /\u{41}/ =~ "A"
end

test "hash ignores /n" do
  assert_equal(//.hash, //n.hash)
  assert_equal(/cat/ix.hash, /cat/ixn.hash)
  assert_not_equal(/cat/.hash, /cat/ix.hash)
end

test "warnings about nested repeat operators, as Onigmo folds them" do
  w = capture_warnings { Regexp.new("a**") }
  assert_match(/warning: regular expression has redundant nested repeat operator '\*': \/a\*\*\//, w)
  w = capture_warnings { Regexp.new("foo(A{0,1}+)Abar") }
  assert_match(/nested repeat operator '\?' and '\+' was replaced with '\*' in regular expression/, w)
  assert_match(/'\+' and '\*\?' was replaced with '\+ and \?\?'/, capture_warnings { Regexp.new("(?:a+)*?") })
  assert_match(/'\?' and '\*' was replaced/, capture_warnings { Regexp.new("a{2}?*") })
  assert_match(/redundant nested repeat operator '\*'/, capture_warnings { Regexp.new("a{0,}++") })
  %w[(a*)* (?i:a*)* a*+ a{1,3}* (?:a*|b)* a+?* \\** [*]*].each do |quiet|
    assert_equal "", capture_warnings { Regexp.new(quiet) }, quiet
  end
  assert_equal "", capture_warnings { $VERBOSE = nil; Regexp.new("a**") }
  assert_match(/\(eval at .*\):1: warning: regular expression has redundant/, capture_warnings { eval("/a**/") })
  re = nil
  capture_warnings { re = Regexp.new("foo(A{0,1}+)Abar") }
  assert_equal ["fooAAAbar", "AA"], re.match("fooAAAbar").to_a
end

test "[[:word:]] includes the join controls" do
  assert_equal ["\u200C"], "\u200C".match(/[[:word:]]/).to_a
  assert_equal 0, "\u200D" =~ /[[:word:]]/
  assert_nil "\u200D" =~ /[^[:word:]]/
  assert_nil "\u200C" =~ /(?a)[[:word:]]/
  assert_nil "\u200C" =~ /[[:alpha:]]/
end

test "the absent operator over a literal matches as in Onigmo" do
  assert_equal ["fo", "o", ""], "foo".scan(Regexp.new("(?~foo)"))
  assert_equal ["hello"], Regexp.new("(?~foo)").match("hello").to_a
  assert_equal ["xfo"], Regexp.new("(?~foo)").match("xfoo").to_a
  assert_equal ["fofo"], Regexp.new("(?~foo)").match("fofoo").to_a
  assert_equal ["a\nfo"], Regexp.new("(?~foo)").match("a\nfoo").to_a
  assert_equal ["xFO", "Oy", ""], "xFOOy".scan(Regexp.new("(?~foo)", Regexp::IGNORECASE))
  assert_equal ["añ", "éb", ""], "añéb".scan(Regexp.new("(?~ñé)"))
  assert_equal "(?~foo)", Regexp.new("(?~foo)").source
end
