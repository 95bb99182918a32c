require_relative "helper"
StdlibTest.require_libs("pp", "prettyprint")

test "pp of nested structures breaks lines at the width" do
  data = {list: (1..30).to_a, nested: {deep: [{x: "y" * 40}]}}
  out = PP.pp(data, +"", 40)
  assert out.lines.size > 5
  assert out.lines.count { |l| l.chomp.size > 40 } <= 1
  assert_equal data, eval(out)
end

test "pp of a small value fits on one line" do
  assert_equal "[1, [2, [3]]]\n", PP.pp([1, [2, [3]]], +"")
  assert_equal "[1,\n [2,\n  [3]]]\n", PP.pp([1, [2, [3]]], +"", 5)
end

test "pp prints objects with their instance variables, and custom pretty_print" do
  klass = Class.new do
    def initialize; @a = 1; @b = "two"; end
  end
  out = PP.pp(klass.new, +"")
  assert_match(/\A#<#<Class:0x\h+>:0x\h+ @a=1, @b="two">\n\z/, out)
  point = Struct.new(:x, :y)
  assert_match(/#<struct +x=1, y=2>/, PP.pp(point.new(1, 2), +""))
  custom = Class.new { def pretty_print(q) = q.text("<custom>") }
  assert_equal "<custom>\n", PP.pp(custom.new, +"")
end

test "Kernel#pp returns its argument and writes to $stdout" do
  r, w = IO.pipe
  old = $stdout
  $stdout = w
  begin
    v = pp({a: 1})
  ensure
    $stdout = old
  end
  w.close
  assert_equal({a: 1}, v)
  assert_match(/a/, r.read)
end

test "PrettyPrint groups and breakables" do
  out = PrettyPrint.format(+"", 10) do |q|
    q.group(1, "[", "]") do
      %w[alpha beta gamma].each_with_index do |w, i|
        if i > 0
          q.text ","
          q.breakable
        end
        q.text w
      end
    end
  end
  assert_equal "[alpha,\n beta,\n gamma]", out
  assert_equal "[a b]", PrettyPrint.format(+"", 10) { |q| q.group(1, "[", "]") { q.text "a"; q.breakable; q.text "b" } }
end

Assert.report
