require_relative "../assert"
require_relative "stdlib_path"
require "stringio"
require_relative "fixtures/racc_calc_parser"

# The parse of each input by CRuby 3.1's C core (racc/cparse.so): [input, result, errors
# reported to on_error, what yyparse gives when it differs, whether the pure-Ruby core
# agrees]. The cores differ in error recovery (see stdlib/racc_cparse.rs).
EXPECTED = [
  ["1+2*3", [7], [], :same, true],
  ["x = 4; y = x * (2 + 1); y - x", [4, 12, 8], [], :same, true],
  ["-3 * -(2)", [6], [], :same, true],
  ["8/0", [:div0], [], :same, true],
  ["", [nil], [], :same, true],
  [";;", [nil, nil, nil], [], :same, true],
  ["1 + ; 2 * 3", [:error, 6], [["\";\"", ";"]], :same, false],
  ["1 2 3; 4", [:error, 4], [["NUMBER", 2]], :same, true],
  ["(1 + 2; 5", [:error, 5], [["\";\"", ";"]], :same, false],
  ["accept; 1", nil, [], "ArgumentError: extra token after EndOfToken", true],
  ["fail 3; 4", nil, [], :same, false],
  ["1 + + + 2; 3", [:error, 3], [["\"+\"", "+"]], :same, true],
  ["$ 4; 5", [:error, 5], [["NUMBER", 4]], :same, true],
  ["1 +", [:error], [["$end", "$"]], :same, true],
]

def ruby_core_parse(input)
  pr = RaccCalc.new
  pr.setup(input)
  [pr.send(:_racc_do_parse_rb, pr.send(:_racc_setup), false), pr.errors]
end

test "racc/parser.rb picks the native core" do
  assert_equal "c", Racc::Parser.racc_runtime_type
  assert_equal "1.4.15", Racc::Parser::Racc_Runtime_Core_Version_C
  assert Racc::Parser.private_method_defined?(:_racc_do_parse_c)
  assert Racc::Parser.private_method_defined?(:_racc_yyparse_c)
  assert_raise(TypeError) { Racc::CparseParams.new }
end

test "do_parse and yyparse give CRuby's C core results, error recovery included" do
  EXPECTED.each do |input, result, errors, yy, ruby_agrees|
    pr = RaccCalc.new
    assert_equal result, pr.parse(input), input
    assert_equal errors, pr.errors, input
    pr = RaccCalc.new
    yy_result = begin
      pr.parse_yy(input)
    rescue ArgumentError => e
      "#{e.class}: #{e.message}"
    end
    assert_equal yy == :same ? result : yy, yy_result, input
    assert_equal ruby_agrees, ruby_core_parse(input) == [result, errors], input
  end
end

test "the existing fixture parser raises on_error's ParseError through the core" do
  require_relative "fixtures/calc_parser"
  assert_equal 11, Calc.new.parse("2+3*(4-1)")
  assert_raise(Racc::ParseError) { Calc.new.parse("2+*3") }
end

test "tokens of the wrong shape raise as the C core does" do
  klass = Class.new(RaccCalc) do
    attr_accessor :token
    def next_token = token
    def yield_sym = yield(:NUMBER, 1)
    def yield_short = yield([1])
    def yield_nothing; end
  end
  pr = klass.new
  pr.token = 5
  e = assert_raise(TypeError) { pr.do_parse }
  assert_equal "next_token() returned Integer (must be Array[2])", e.message
  pr.token = [1, 2, 3]
  e = assert_raise(ArgumentError) { pr.do_parse }
  assert_equal "next_token() returned wrong size of array (3 for 2)", e.message
  pr.token = nil
  assert_equal [nil], pr.do_parse
  e = assert_raise(TypeError) { pr.yyparse(pr, :yield_sym) }
  assert_equal "yield_sym() yielded Symbol (must be Array[2])", e.message
  e = assert_raise(ArgumentError) { pr.yyparse(pr, :yield_short) }
  assert_equal "yield_short() yielded wrong size of array (1 for 2)", e.message
  e = assert_raise(ArgumentError) { pr.yyparse(pr, :yield_nothing) }
  assert_equal "yield_nothing() is finished before EndOfToken", e.message
  assert_raise(TypeError) { pr.send(:_racc_yyparse_c, pr, "each_token", RaccCalc::Racc_arg, false) }
  e = assert_raise(RuntimeError) { pr.send(:_racc_do_parse_c, [1, 2], false) }
  assert_equal "[Racc Bug] wrong arg.size 2", e.message
end

test "a rejected yyparse leaves the lexer through its ensure clauses" do
  require_relative "fixtures/calc_parser"
  klass = Class.new(Calc) do
    attr_reader :cleaned, :errors
    def lex
      yield [:NUMBER, 1]
      loop { yield [:NUMBER, 2] }
    ensure
      @cleaned = true
    end
    def on_error(_t, val, _vstack) = (@errors ||= []) << val
  end
  pr = klass.new
  assert_nil pr.yyparse(pr, :lex)
  assert_true pr.cleaned
  assert_equal [2], pr.errors
end

test "yyerrok in an action ends error recovery (read back from @racc_error_status)" do
  errok = Class.new(RaccCalc) do
    def _reduce_3(val, _values, result)
      yyerrok
      val[0] + [val[2]]
    end
  end
  plain = RaccCalc.new
  assert_equal [:error, 5], plain.parse("1 2; 3 3; 4 4; 5")
  assert_equal [["NUMBER", 2]], plain.errors
  pr = errok.new
  assert_equal [:error, 5], pr.parse("1 2; 3 3; 4 4; 5")
  assert_equal [["NUMBER", 2], ["NUMBER", 3], ["NUMBER", 4]], pr.errors
  assert_equal 0, pr.instance_variable_get(:@racc_error_status)
end

test "debug hooks report shifts, reductions and states while @yydebug is set" do
  debug = Class.new(RaccCalc) { const_set(:Racc_debug_parser, true) }
  pr = debug.new
  out = StringIO.new
  pr.instance_variable_set(:@yydebug, true)
  pr.instance_variable_set(:@racc_debug_out, out)
  assert_equal [7], pr.parse("1+2*3")
  c_trace = out.string
  assert_match(/^reduce  exp "\*" exp --> exp$/, c_trace)
  assert_match(/^accept$/, c_trace)
  pr = debug.new
  out = StringIO.new
  pr.instance_variable_set(:@yydebug, true)
  pr.instance_variable_set(:@racc_debug_out, out)
  pr.setup("1+2*3")
  pr.send(:_racc_do_parse_rb, pr.send(:_racc_setup), false)
  assert_equal out.string, c_trace
end

test "a long input parses the same with both cores" do
  input = Array.new(300) { |i| "v#{i % 7} = #{i} * (#{i % 5} + 2) - v#{(i + 3) % 7}" }.join("; ")
  pr = RaccCalc.new
  c = pr.parse(input)
  assert_equal 300, c.size
  assert_equal [c, []], ruby_core_parse(input)
end
