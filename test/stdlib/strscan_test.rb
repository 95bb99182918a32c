# StringScanner is native (stdlib/strscan.rs): no CRuby standard library needed.
require_relative "helper"
require "strscan"

def tokenize(src)
  ss = StringScanner.new(src)
  toks = []
  until ss.eos?
    next if ss.skip(/\s+/)
    if ss.scan(/\d+(\.\d+)?/) then toks << [:num, ss.matched]
    elsif ss.scan(/(?<id>[a-z_]\w*)/) then toks << [:id, ss[:id]]
    elsif ss.scan(/[-+*\/()=]/) then toks << [:op, ss.matched]
    elsif ss.scan(/"((?:[^"\\]|\\.)*)"/) then toks << [:str, ss[1]]
    else raise "unexpected #{ss.peek(5).inspect} at #{ss.pos}"
    end
  end
  toks
end

test "a tokenizer" do
  assert_equal [[:id, "x"], [:op, "="], [:num, "3.14"], [:op, "*"], [:op, "("], [:id, "foo"], [:op, "-"], [:num, "2"], [:op, ")"], [:str, "a\\\"b"]],
    tokenize('x = 3.14 * (foo - 2) "a\"b"')
  assert_raise(RuntimeError) { tokenize("x ? y") }
end

test "scan, check, skip, match?, and their _until forms" do
  s = StringScanner.new("Fri Dec 12 1975 14:39")
  assert_equal "Fri", s.check(/\w+/)
  assert_equal 0, s.pos
  assert_equal "Fri", s.scan(/\w+/)
  assert_nil s.scan(/\w+/)
  assert_equal 1, s.skip(/\s+/)
  assert_equal 3, s.match?(/\w+/)
  assert_equal "Dec 12", s.scan_until(/12/)
  assert_equal " 1975", s.check_until(/1975/)
  assert_equal 5, s.skip_until(/1975/)
  assert_equal 6, s.exist?(/39/)
  assert_equal " 14:39", s.rest
  assert_equal 6, s.rest_size
  s.terminate
  assert s.eos?
  assert_nil s.getch
end

test "matched, pre_match, post_match, [], captures, values_at, named_captures" do
  s = StringScanner.new("key: value; rest")
  s.scan(/(?<k>\w+): (?<v>\w+)/)
  assert_equal "key: value", s.matched
  assert_equal 10, s.matched_size
  assert_equal "", s.pre_match
  assert_equal "; rest", s.post_match
  assert_equal ["key", "value", "key"], [s[1], s[:v], s["k"]]
  assert_equal "value", s[-1]
  assert_equal %w[key value], s.captures
  assert_equal ["key: value", "value"], s.values_at(0, 2)
  assert_equal({"k" => "key", "v" => "value"}, s.named_captures)
  assert_equal 3, s.size
  e = assert_raise(IndexError) { s[:nope] }
  assert_equal "undefined group name reference: nope", e.message
  s.scan(/xyz/)
  assert_nil s.matched
  assert_nil s[0]
end

test "getch, get_byte, peek, unscan, pos=, charpos, string patterns" do
  s = StringScanner.new("héllo")
  assert_equal "h", s.getch
  assert_equal "é", s.getch
  assert_equal 3, s.pos
  assert_equal 2, s.charpos
  s.unscan
  assert_equal 1, s.pos
  assert_equal "\xC3".b, s.get_byte.b
  s.pos = -2
  assert_equal "lo", s.peek(10)
  s.reset
  assert_equal "hé", s.scan("hé")
  assert_nil s.scan("x")
  assert_raise(ScanError) { StringScanner.new("a").unscan }
  assert_raise(RangeError) { s.pos = 100 }
end

test "string=, concat, beginning_of_line?, fixed_anchor?, inspect" do
  s = StringScanner.new("ab\ncd")
  s.scan(/ab\n/)
  assert s.beginning_of_line?
  s << "ef"
  assert_equal "cdef", s.rest
  s.string = "new"
  assert_equal 0, s.pos
  assert_equal "#<StringScanner 0/3 @ \"new\">", s.inspect
  s.scan(/n/)
  assert_equal "#<StringScanner 1/3 \"n\" @ \"ew\">", s.inspect
  assert !s.fixed_anchor?
  f = StringScanner.new("ab", fixed_anchor: true)
  f.pos = 1
  assert_nil f.scan(/^b/)
  assert_equal "b", StringScanner.new("ab").tap { |x| x.pos = 1 }.scan(/^b/)
end

Assert.report
