# YAML through CRuby's psych.rb on Carmine's psych.so (libyaml via unsafe-libyaml).
CRUBY_LIB = "/usr/lib/ruby/3.1.0"
unless File.exist?("#{CRUBY_LIB}/psych.rb")
  puts "skipped: #{CRUBY_LIB}/psych.rb is absent (psych's Ruby half comes from CRuby)"
  exit 0
end
$LOAD_PATH.push(CRUBY_LIB) unless $LOAD_PATH.include?(CRUBY_LIB)
begin
  require "strscan"
rescue LoadError
  puts "skipped: psych.rb requires strscan, which this build does not provide"
  exit 0
end
require "yaml"
require_relative "../assert"

test "load of plain data" do
  assert_equal({"a" => [1, 2]}, YAML.load("a: [1, 2]"))
  assert_equal [1000, 31, 1.5, nil, true, false, "1.5e3"], YAML.load("[1_000, 0x1f, 1.5, ~, true, no, 1.5e3]")
  assert_equal({"a" => {"b" => ["c", {"d" => "e"}]}}, YAML.load("a:\n  b:\n    - c\n    - d: e\n"))
  assert_equal "lit\neral\n", YAML.load("|\n  lit\n  eral\n")
  assert_equal "fol ded\n", YAML.load(">\n  fol\n  ded\n")
  assert_equal "x\n", YAML.load("\"x\\n\"")
  assert_equal Encoding::UTF_8, YAML.load("héllo").encoding
  assert_equal "héllo", YAML.load("héllo")
  assert_nil YAML.load("")
end

test "dump of plain data" do
  assert_equal "---\nx:\n- 1\n- two\n-\n", {"x" => [1, "two", nil]}.to_yaml
  assert_equal "--- 'x: y'\n", YAML.dump("x: y")
  assert_equal "--- '123'\n", YAML.dump("123")
  assert_equal "--- |\n  multi\n  line\n", YAML.dump("multi\nline\n")
  assert_equal "--- :sym\n", YAML.dump(:sym)
  assert_equal "---\na: b\n", YAML.dump({"a" => "b"}, indentation: 4)
  assert_equal "--- !binary |-\n  //4=\n", YAML.dump("\xff\xfe".b)
  assert_equal "--- héllo\n", YAML.dump("héllo")
end

test "round trips" do
  data = {"s" => "x: y", "list" => [1, 2.5, nil, true, false, "  lead", "true", "", "a\nb"],
          "n" => {"deep" => [[1], {"c" => "d"}]}, 3 => -1.0e20, "big" => 2**70}
  assert_equal data, YAML.load(YAML.dump(data))
  assert_equal [:a, {b: 1}], YAML.load(YAML.dump([:a, {b: 1}]), permitted_classes: [Symbol])
  assert_equal "x" * 100 + " " + "y" * 100, YAML.load(YAML.dump("x" * 100 + " " + "y" * 100))
  assert_equal 1..3, YAML.unsafe_load(YAML.dump(1..3))
  assert_equal Time.at(0).utc, YAML.unsafe_load(YAML.dump(Time.at(0).utc))
end

YamlPoint = Struct.new(:x, :y)
class YamlBox
  attr_reader :items
  def initialize(items) = @items = items
end

test "objects and structs through !ruby tags" do
  assert_equal "--- !ruby/struct:YamlPoint\nx: 1\ny: two\n", YAML.dump(YamlPoint.new(1, "two"))
  assert_equal YamlPoint.new(1, "two"), YAML.unsafe_load(YAML.dump(YamlPoint.new(1, "two")))
  box = YAML.unsafe_load(YAML.dump(YamlBox.new([1, "a"])))
  assert_equal [YamlBox, [1, "a"]], [box.class, box.items]
  assert_raise(Psych::DisallowedClass) { YAML.load(YAML.dump(YamlBox.new([]))) }
  e = YAML.unsafe_load("--- !ruby/exception:RuntimeError\nmessage: boom\n")
  assert_equal [RuntimeError, "boom"], [e.class, e.message]
  assert_raise(ArgumentError, "undefined class/module NoSuchYamlClass") { YAML.unsafe_load("--- !ruby/object:NoSuchYamlClass {}\n") }
end

test "aliases and anchors" do
  shared = [1, 2]
  y = YAML.dump({"a" => shared, "b" => shared})
  assert_equal "---\na: &1\n- 1\n- 2\nb: *1\n", y
  h = YAML.unsafe_load(y)
  assert_same h["a"], h["b"]
  assert_equal ["x", "x"], YAML.safe_load("- &a x\n- *a\n", aliases: true)
  assert_raise(Psych::BadAlias) { YAML.safe_load("- &a x\n- *a\n") }
end

test "streams, files and the node tree" do
  assert_equal [1, 2, ["a"]], YAML.load_stream("--- 1\n--- 2\n...\n--- [a]\n")
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_yaml_test_#{$$}.yml"
  File.write(path, "k: [v]\n")
  assert_equal({"k" => ["v"]}, YAML.load_file(path))
  File.write(path, "a: b: c")
  e = assert_raise(Psych::SyntaxError) { YAML.load_file(path) }
  assert_equal "(#{path}): mapping values are not allowed in this context at line 1 column 5", e.message
  File.delete(path)
  doc = Psych.parse_stream("%YAML 1.1\n%TAG !e! tag:example.com,2000:\n--- !e!foo\nbar\n").children[0]
  assert_equal [[1, 1], [["!e!", "tag:example.com,2000:"]]], [doc.version, doc.tag_directives]
  node = Psych.parse("a: &x [1, !!str 2]")
  assert_equal({"a" => [1, "2"]}, node.to_ruby)
  seq = node.children[0].children[1]
  assert_equal ["x", 0, 3, 0, 18], [seq.anchor, seq.start_line, seq.start_column, seq.end_line, seq.end_column]
end

test "syntax errors carry libyaml's problem and context" do
  e = assert_raise(Psych::SyntaxError) { YAML.load("a:\n  - b\n c: d") }
  assert_equal "(<unknown>): did not find expected key while parsing a block mapping at line 1 column 1", e.message
  assert_equal [nil, 1, 1, "did not find expected key", "while parsing a block mapping"], [e.file, e.line, e.column, e.problem, e.context]
  e = assert_raise(Psych::SyntaxError) { YAML.load("{a") }
  assert_equal "(<unknown>): did not find expected ',' or '}' while parsing a flow mapping at line 1 column 1", e.message
  e = assert_raise(Psych::SyntaxError) { YAML.load("\x00") }
  assert_equal "(<unknown>): control characters are not allowed at line 1 column 1", e.message
end

class YamlEvents < Psych::Handler
  attr_reader :events
  def initialize = @events = []
  %i[start_stream start_document end_document alias scalar start_sequence end_sequence start_mapping end_mapping end_stream].each do |m|
    define_method(m) { |*a| @events << [m, *a] }
  end
end

test "parser events and the emitter" do
  h = YamlEvents.new
  parser = Psych::Parser.new(h)
  assert_same parser, parser.parse("--- !foo &a 'x'\n")
  assert_equal [[:start_stream, Psych::Parser::UTF8], [:start_document, [], [], false],
                [:scalar, "x", "a", "!foo", false, false, Psych::Nodes::Scalar::SINGLE_QUOTED],
                [:end_document, true], [:end_stream]], h.events
  assert_equal [0, 2, 5], Psych.libyaml_version
  io = StringIO.new
  em = Psych::Emitter.new(io)
  assert_equal [false, 2, 0], [em.canonical, em.indentation, em.line_width]
  em.start_stream(Psych::Parser::UTF8)
  em.start_document([], [], true)
  em.start_sequence(nil, nil, true, Psych::Nodes::Sequence::FLOW)
  em.scalar("a b", nil, nil, true, false, Psych::Nodes::Scalar::ANY)
  em.alias("x")
  em.end_sequence
  em.end_document(true)
  em.end_stream
  assert_equal "[a b, *x]\n", io.string
  assert_raise(TypeError, "wrong argument type Integer (expected String)") { em.scalar(1, nil, nil, true, false, 0) }
end

class YamlChunks
  attr_reader :calls
  def initialize(s) = (@s = s; @calls = 0)
  def external_encoding = nil
  def read(n)
    @calls += 1
    r = @s.byteslice(0, [n, 3].min)
    @s = @s.byteslice(r.size..)
    r.empty? ? nil : r
  end
end

test "IO input is read with read(size) while parsing" do
  src = YamlChunks.new("a: [1, 2]\nb: x\n")
  assert_equal({"a" => [1, 2], "b" => "x"}, YAML.load(src))
  assert_true src.calls > 3
  assert_equal({"x" => ["é"]}, YAML.load(StringIO.new("x: [é]")))
  bad = Object.new
  def bad.external_encoding = nil
  def bad.read(n) = raise(IOError, "gone")
  assert_raise(IOError, "gone") { YAML.load(bad) }
end
