require_relative "helper"
StdlibTest.require_libs("net/http", "socket", "uri")

# A small HTTP/1.1 server on 127.0.0.1 (a port the system picks) that answers each
# request with its method, path, and body, keeping the connection open.
class TinyServer
  attr_reader :port, :requests

  def initialize
    @server = TCPServer.new("127.0.0.1", 0)
    @port = @server.addr[1]
    @requests = Queue.new
    @thread = Thread.new { serve }
  end

  def serve
    loop do
      client = @server.accept
      Thread.new(client) { |c| handle(c) }
    end
  rescue IOError, Errno::EBADF
    nil
  end

  def handle(c)
    while (head = c.gets("\r\n\r\n"))
      line, *headers = head.split("\r\n")
      verb, path, = line.split(" ")
      h = headers.to_h { |x| x.split(": ", 2) }
      body = h["Content-Length"] ? c.read(Integer(h["Content-Length"])) : ""
      @requests << [verb, path, h["Content-Type"], body]
      reply = "#{verb} #{path} #{body}"
      status = path == "/missing" ? "404 Not Found" : "200 OK"
      c.write "HTTP/1.1 #{status}\r\nContent-Type: text/plain\r\nContent-Length: #{reply.bytesize}\r\nX-Test: yes\r\n\r\n#{reply}"
    end
  ensure
    c.close
  end

  def close
    @server.close
    @thread.join
  end
end

server = TinyServer.new
base = "http://127.0.0.1:#{server.port}"

test "Net::HTTP.get and get_response" do
  assert_equal "GET /hello ", Net::HTTP.get(URI("#{base}/hello"))
  res = Net::HTTP.get_response(URI("#{base}/missing"))
  assert_kind_of Net::HTTPNotFound, res
  assert_equal "404", res.code
  assert_equal "yes", res["x-test"]
end

test "POST a form and a raw body" do
  res = Net::HTTP.post_form(URI("#{base}/form"), "a" => "1", "b" => "x y")
  assert_equal "POST /form a=1&b=x+y", res.body
  res = Net::HTTP.post(URI("#{base}/raw"), '{"k":1}', "Content-Type" => "application/json")
  assert_equal 'POST /raw {"k":1}', res.body
  seen = []
  seen << server.requests.pop until server.requests.empty?
  assert_equal ["POST", "/raw", "application/json", '{"k":1}'], seen.last
end

test "a persistent connection carries several requests" do
  Net::HTTP.start("127.0.0.1", server.port) do |http|
    assert http.started?
    r1 = http.request(Net::HTTP::Get.new("/one"))
    r2 = http.request_post("/two", "body")
    r3 = http.head("/three")
    assert_equal "GET /one ", r1.body
    assert_equal "POST /two body", r2.body
    assert_equal "200", r3.code
  end
end

test "URI parsing, building and encoding" do
  u = URI.parse("http://user@example.com:8080/a/b?x=1&y=2#frag")
  assert_equal ["http", "user", "example.com", 8080, "/a/b", "x=1&y=2", "frag"], [u.scheme, u.userinfo, u.host, u.port, u.path, u.query, u.fragment]
  assert_equal "http://a/d", URI.join("http://a/b/c", "../d").to_s
  assert_equal "a=1&b=x+y", URI.encode_www_form(a: 1, b: "x y")
  assert_equal [["a", "1"], ["b", "x y"]], URI.decode_www_form("a=1&b=x+y")
  assert_equal "https://h/p?q", URI::HTTPS.build(host: "h", path: "/p", query: "q").to_s
  assert_kind_of URI::HTTPS, URI("https://x.org")
  assert_equal 443, URI("https://x.org").port
  assert_equal %w[http://a.com/x https://b.org], URI.extract("see http://a.com/x and https://b.org ok")
  assert_raise(URI::InvalidURIError) { URI.parse("http://bad host/") }
  assert_equal "caf%C3%A9", URI.encode_www_form_component("café")
end

server.close
Assert.report
