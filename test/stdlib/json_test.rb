require_relative "../assert"
require_relative "stdlib_path"
require "json"

test "parse values" do
  assert_equal [1, -2, 1.5, -0.0, 100.0, "x", true, false, nil], JSON.parse('[1, -2, 1.5, -0.0, 1E2, "x", true, false, null]')
  assert_equal({ "a" => { "b" => [] } }, JSON.parse(' { "a" : { "b" : [ ] } } '))
  assert_equal 123456789012345678901234567890, JSON.parse("123456789012345678901234567890")
  assert_equal 1, JSON.parse("1")
  assert_equal "é😀/\b\f\n\t\"\\", JSON.parse('"\u00e9\ud83d\ude00\/\b\f\n\t\"\\\\"')
  assert_equal "aqb", JSON.parse('"a\qb"')
  assert_equal Encoding::UTF_8, JSON.parse('["a"]'.b)[0].encoding
  assert_equal [1, 2], JSON.parse("[/*x*/1/*y*/,//z\n2]")
  assert_equal({ "a" => 2 }, JSON.parse('{"a":1, "a":2}'))
end

test "parse options" do
  assert_equal({ a: 1 }, JSON.parse('{"a":1}', symbolize_names: true))
  h = JSON.parse('{"a":["b"]}', freeze: true)
  assert_true h.frozen? && h["a"].frozen? && h["a"][0].frozen?
  assert_true JSON.parse('{"k":1}').keys[0].frozen?
  assert_false JSON.parse('["v"]')[0].frozen?
  nan, inf, minf = JSON.parse("[NaN, Infinity, -Infinity]", allow_nan: true)
  assert_true nan.nan?
  assert_equal [Float::INFINITY, -Float::INFINITY], [inf, minf]
  assert_equal Rational(3, 2), JSON.parse("1.5", decimal_class: Rational)
  sub = Class.new(Array)
  assert_equal sub, JSON.parse("[1]", array_class: sub).class
  assert_equal JSON::GenericObject, JSON.parse('{"a":1}', object_class: JSON::GenericObject).class
  assert_equal [[[1]]], JSON.parse("[[[1]]]", max_nesting: false)
  assert_equal "ab", JSON.parse('{"json_class":"String","raw":[97,98]}', create_additions: true)
  assert_raise(ArgumentError, "options :symbolize_names and :create_additions cannot be  used in conjunction") do
    JSON::Parser.new("[]", symbolize_names: true, create_additions: true)
  end
end

test "parse errors carry json 2.6's messages" do
  {
    "" => "859: unexpected token at ''",
    "[1] x" => "859: unexpected token at 'x'",
    "[1,]" => "451: unexpected token at ']'",
    '{"a" 1}' => "859: unexpected token at '{\"a\" 1}'",
    "[NaN]" => "225: unexpected token at 'NaN]'",
    "[1, Infinity]" => "232: unexpected token at ' Infinity]'",
    "[-Infinity]" => "249: unexpected token at '-Infinity]'",
    "[01]" => "451: unexpected token at '01]'",
    '"\ud83d"' => "521: incomplete surrogate pair at '\\ud83d\"'",
  }.each do |src, msg|
    assert_raise(JSON::ParserError, msg) { JSON.parse(src) }
  end
  assert_raise(JSON::NestingError, "nesting of 101 is too deep") { JSON.parse("[" * 101 + "]" * 101) }
  assert_raise(TypeError) { JSON.parse(nil) }
end

test "generate" do
  assert_equal '{"1":2,"a":null,"1.5":[true,false]}', JSON.generate({ 1 => 2, :a => nil, 1.5 => [true, false] })
  assert_equal '[1.0e+20,1.0e-05,1180591620717411303424,0.1]', JSON.generate([1e20, 1.0e-5, 2**70, 0.1])
  assert_equal "\"a/b\u2028é\\u0001\\n\\\"\\\\\"", JSON.generate("a/b\u2028é\x01\n\"\\")
  assert_equal '"\\ud83d\\ude00\\u00e9"', JSON.generate("😀é", ascii_only: true)
  assert_equal '"a\\/b"', JSON.generate("a/b", escape_slash: true)
  assert_equal '"é"', JSON.generate("é".encode("ISO-8859-1"))
  assert_equal "{\n  \"a\": [\n    1,\n    {\n    },\n    [\n\n    ]\n  ]\n}", JSON.pretty_generate({ "a" => [1, {}, []] })
  assert_equal '"sym"', JSON.generate(:sym)
  assert_equal '[1,"x",null]', [1, "x", nil].to_json
  assert_equal '{"json_class":"String","raw":[97,98]}', "ab".to_json_raw
end

test "generate errors" do
  assert_raise(JSON::GeneratorError, "1003: NaN not allowed in JSON") { JSON.generate([0.0 / 0]) }
  assert_raise(JSON::GeneratorError, "1000: -Infinity not allowed in JSON") { JSON.generate([-1.0 / 0]) }
  assert_equal "[NaN]", JSON.generate([0.0 / 0], allow_nan: true)
  assert_raise(JSON::GeneratorError, "partial character in source, but hit end") { JSON.generate("\xff") }
  assert_raise(JSON::GeneratorError, "source sequence is illegal/malformed utf-8") { JSON.generate("\x80") }
  a = []
  a << a
  assert_raise(JSON::NestingError, "nesting of 100 is too deep") { JSON.generate(a) }
end

class JsonTestPoint
  def initialize(x) = @x = x
  def to_json(*a) = { "x" => @x }.to_json(*a)
end

test "objects with their own to_json" do
  assert_equal '[{"x":1}]', JSON.generate([JsonTestPoint.new(1)])
  assert_equal "[\n  {\n    \"x\": 2\n  }\n]", JSON.pretty_generate([JsonTestPoint.new(2)])
end

test "State" do
  s = JSON::State.new(indent: "\t", max_nesting: 5)
  assert_equal "\t", s.indent
  assert_equal 5, s.max_nesting
  assert_true s.check_circular?
  s[:foo] = 2
  assert_equal 2, s[:foo]
  assert_equal 2, s.to_h[:foo]
  assert_equal "", s.to_h[:space]
  s2 = s.dup
  s2.indent = "  "
  assert_equal "\t", s.indent
  assert_equal "[1]", JSON::State.new.generate([1])
end

test "round trip with json/add" do
  require "json/add/range"
  require "json/add/symbol"
  r = JSON.parse(JSON.generate(1..3), create_additions: true)
  assert_equal 1..3, r
  assert_equal :sym, JSON.parse(JSON.generate(:sym), create_additions: true)
  assert_equal({ "a" => [1, 2.5, nil] }, JSON.load(JSON.dump({ "a" => [1, 2.5, nil] })))
end
