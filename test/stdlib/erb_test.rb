require_relative "helper"
StdlibTest.require_libs("erb")

test "result with a binding sees locals and runs code" do
  items = %w[a b]
  t = ERB.new("<% items.each do |i| %>[<%= i %>]<% end %> <%= 1 + 2 %>")
  assert_equal "[a][b] 3", t.result(binding)
end

test "trim mode '-' removes lines of <%- -%> tags and <%# comments %>" do
  src = "<%# note %>a\n  <%- if true -%>\n  b\n  <%- end -%>\nc\n"
  assert_equal "a\n  b\nc\n", ERB.new(src, trim_mode: "-").result
end

test "trim mode '<>' removes newlines of lines that are a single tag" do
  src = "<% 2.times do |i| %>\nrow <%= i %>\n<% end %>\n"
  assert_equal "row 0\nrow 1\n", ERB.new(src, trim_mode: "<>").result(binding)
end

test "trim mode '>' removes the newline after every %>" do
  assert_equal "ab", ERB.new("<%= 'a' %>\n<%= 'b' %>\n", trim_mode: ">").result
end

test "trim mode '%' runs lines starting with % and %% escapes" do
  src = "% x = 5\nx=<%= x %>\n%% literal\n"
  assert_equal "x=5\n% literal\n", ERB.new(src, trim_mode: "%").result(binding)
end

test "<%% is a literal <%" do
  assert_equal "<% a %>", ERB.new("<%% a %>").result
end

test "result without a binding uses a copy of TOPLEVEL_BINDING" do
  assert_equal "3", ERB.new("<% zz = 3 %><%= zz %>").result
  assert_false TOPLEVEL_BINDING.local_variable_defined?(:zz)
end

test "result_with_hash, def_method and ERB::Util" do
  assert_equal "n=7", ERB.new("n=<%= n %>").result_with_hash(n: 7)
  klass = Class.new { def initialize; @who = "you"; end }
  ERB.new("hi <%= @who %>").def_method(klass, "greet()")
  assert_equal "hi you", klass.new.greet
  assert_equal "&lt;a href=&quot;x&quot;&gt;&amp;&#39;", ERB::Util.html_escape("<a href=\"x\">&'")
  assert_equal "a%20b%26c", ERB::Util.url_encode("a b&c")
end

test "run prints to $stdout" do
  r, w = IO.pipe
  old = $stdout
  $stdout = w
  begin
    ERB.new("<%= 6 * 7 %>").run(binding)
  ensure
    $stdout = old
  end
  w.close
  assert_equal "42", r.read
end

test "a syntax error in the template raises SyntaxError" do
  assert_raise(SyntaxError) { ERB.new("<%= ) %>").result }
end

Assert.report
