require_relative "helper"
StdlibTest.require_libs("optparse")

def parser(opts)
  OptionParser.new do |o|
    o.banner = "Usage: tool [options] FILE..."
    o.version = "1.2"
    o.on("-v", "--[no-]verbose", "Talk more") { |v| opts[:verbose] = v }
    o.on("-l", "--level N", Integer, "Level (integer)") { |v| opts[:level] = v }
    o.on("-n", "--name NAME", "Repeatable") { |v| (opts[:names] ||= []) << v }
    o.on("--mode MODE", [:fast, :slow], "fast or slow") { |v| opts[:mode] = v }
    o.on("-r", "--ratio R", Float) { |v| opts[:ratio] = v }
    o.on("--tags A,B", Array) { |v| opts[:tags] = v }
    o.on("-o", "--output [FILE]", "Optional argument") { |v| opts[:output] = v }
  end
end

test "parse options of every kind and return the operands" do
  opts = {}
  rest = parser(opts).parse(%w[-v --level 3 -n a --name=b --mode fast -r 1.5 --tags x,y -o file1 file2])
  assert_equal({verbose: true, level: 3, names: %w[a b], mode: :fast, ratio: 1.5, tags: %w[x y], output: "file1"}, opts)
  assert_equal ["file2"], rest
end

test "short options combine, --no- negates, -- ends options" do
  opts = {}
  rest = parser(opts).parse(%w[-vl7 --no-verbose -- -n])
  assert_equal({verbose: false, level: 7}, opts)
  assert_equal ["-n"], rest
end

test "parse! removes what it parsed and into: collects values" do
  argv = %w[-a -b 2 keep]
  h = {}
  OptionParser.new { |o| o.on("-a"); o.on("-b VAL", Integer) }.parse!(argv, into: h)
  assert_equal({a: true, b: 2}, h)
  assert_equal ["keep"], argv
end

test "bad input raises OptionParser errors with their messages" do
  e = assert_raise(OptionParser::InvalidArgument) { parser({}).parse(%w[--level abc]) }
  assert_equal "invalid argument: --level abc", e.message
  e = assert_raise(OptionParser::InvalidOption) { parser({}).parse(%w[--bogus]) }
  assert_equal "invalid option: --bogus", e.message
  assert_raise(OptionParser::MissingArgument) { parser({}).parse(%w[--level]) }
  assert_raise(OptionParser::InvalidArgument) { parser({}).parse(%w[--mode medium]) }
end

test "help lists the banner and each option" do
  help = parser({}).help
  assert_match(/\AUsage: tool \[options\] FILE\.\.\./, help)
  assert_match(/^\s+-v, --\[no-\]verbose\s+Talk more$/, help)
  assert_match(/^\s+-l, --level N\s+Level \(integer\)$/, help)
  assert_equal "tool 1.2", parser({}).ver.sub(/^\S+/, "tool")
end

test "abbreviated long options are completed" do
  opts = {}
  parser(opts).parse(%w[--verb --lev 2])
  assert_equal({verbose: true, level: 2}, opts)
end

Assert.report
