# cgi/escape is native (stdlib/cgi_escape.rs); with the standard library's cgi/util it
# takes the place of the Ruby versions.
require_relative "helper"
require "cgi/escape"

test "URL escaping" do
  assert_equal "%27Stop%21%27+said+Fred+%C3%BC~", CGI.escape("'Stop!' said Fred ü~")
  assert_equal "'Stop!' said Fred ü", CGI.unescape("%27Stop%21%27+said+Fred+%C3%BC")
  assert_equal "a%20b%2Bc", CGI.escapeURIComponent("a b+c")
  assert_equal "a+b c", CGI.unescapeURIComponent("a+b%20c")
  assert_equal "%zz%4", CGI.unescape("%zz%4")
  assert_equal Encoding::ISO_8859_1, CGI.unescape("%E9", "ISO-8859-1").encoding
  assert_equal Encoding::UTF_8, CGI.unescape("%FF").encoding
  e = assert_raise(TypeError) { CGI.escape(nil) }
  assert_equal "no implicit conversion of nil into String", e.message
end

test "HTML escaping keeps the encoding" do
  assert_equal "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;", CGI.escapeHTML(%q{<a href="x">'&'</a>})
  assert_equal Encoding::ISO_8859_1, CGI.escapeHTML("é<".encode("ISO-8859-1")).encoding
  assert_equal %q{& < > " ' c c &copy; &#; é}, CGI.unescapeHTML("&amp; &lt; &gt; &quot; &apos; &#99; &#x63; &copy; &#; &#233;")
  assert_equal "&#233;", CGI.unescapeHTML("&#233;".encode("US-ASCII"))
end

if RbConfig::CONFIG["ruby_stdlib_dir"] != ""
  test "with cgi/util, CGI::Util's methods are these" do
    require "cgi"
    assert CGI::Util.ancestors.index(CGI::Escape) < CGI::Util.ancestors.index(CGI::Util)
    obj = Object.new.extend(CGI::Util)
    assert_equal "&lt;", obj.escapeHTML("<")
    assert_equal "a&lt;b", CGI.escapeHTML("a<b".encode("UTF-16LE")).encode("UTF-8")
  end
end

Assert.report
