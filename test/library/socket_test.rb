require_relative "../assert"
require "socket"

# Only 127.0.0.1 and ports the kernel picks (port 0).

def open_fds
  Dir.children("/proc/self/fd").size
end

test "TCPServer and TCPSocket exchange data; addr and peeraddr" do
  srv = TCPServer.new("127.0.0.1", 0)
  port = srv.addr[1]
  assert_equal ["AF_INET", port, "127.0.0.1", "127.0.0.1"], srv.addr
  t = Thread.new do
    c = srv.accept
    line = c.gets
    c.write "echo:#{line}"
    c.close
  end
  s = TCPSocket.new("127.0.0.1", port)
  assert_equal "127.0.0.1", s.peeraddr[3]
  s.puts "hello"
  assert_equal "echo:hello\n", s.read
  s.close
  t.join
  srv.close
end

test "connection and resolution errors have CRuby's classes and messages" do
  srv = TCPServer.new("127.0.0.1", 0)
  port = srv.addr[1]
  srv.close
  assert_raise(Errno::ECONNREFUSED, "Connection refused - connect(2) for \"127.0.0.1\" port #{port}") { TCPSocket.new("127.0.0.1", port) }
  assert_raise(SocketError) { TCPSocket.new("nonexistent.invalid", 80) }
  assert_equal SocketError, Socket::ResolutionError.superclass
  assert_raise(IOError, "closed stream") { srv.accept }
end

test "accept_nonblock and recv_nonblock with and without exceptions" do
  srv = TCPServer.new("127.0.0.1", 0)
  assert_equal :wait_readable, srv.accept_nonblock(exception: false)
  assert_raise(IO::WaitReadable) { srv.accept_nonblock }
  c = TCPSocket.new("127.0.0.1", srv.addr[1])
  IO.select([srv])
  s = srv.accept_nonblock
  assert_equal :wait_readable, s.recv_nonblock(10, exception: false)
  c.send("abc", 0)
  IO.select([s])
  assert_equal "abc", s.recv(10)
  [c, s, srv].each(&:close)
end

test "UNIX sockets: pair, server and client, paths and addresses" do
  a, b = UNIXSocket.pair
  a.write "x"
  assert_equal "x", b.readpartial(10)
  a.close
  b.close
  path = "/tmp/carmine_sock_test_#{Process.pid}"
  File.unlink(path) if File.exist?(path)
  srv = UNIXServer.new(path)
  c = UNIXSocket.new(path)
  s = srv.accept
  c.write "hi"
  assert_equal "hi", s.readpartial(10)
  assert_equal path, srv.path
  assert_equal "", c.path
  assert_equal ["AF_UNIX", path], s.addr
  assert_raise(ArgumentError) { UNIXSocket.new("x" * 200) }
  [c, s, srv].each(&:close)
  File.unlink(path)
end

test "UDP datagrams, Addrinfo and packed addresses" do
  u1 = UDPSocket.new
  u1.bind("127.0.0.1", 0)
  u2 = UDPSocket.new
  u2.send("dgram", 0, "127.0.0.1", u1.addr[1])
  data, from = u1.recvfrom(10)
  assert_equal "dgram", data
  assert_equal "AF_INET", from[0]
  ai = Addrinfo.tcp("127.0.0.1", 80)
  assert_equal "#<Addrinfo: 127.0.0.1:80 TCP>", ai.inspect
  assert_equal [80, "127.0.0.1"], Socket.unpack_sockaddr_in(ai.to_sockaddr)
  assert_equal true, ai.ipv4_loopback?
  assert_equal "/tmp/s", Addrinfo.unix("/tmp/s").unix_path
  assert_equal Socket::SOCK_DGRAM, u1.getsockopt(:SOCKET, :TYPE).int
  [u1, u2].each(&:close)
end

test "low-level Socket: bind, listen, connect, accept returning an Addrinfo" do
  srv = Socket.new(:INET, :STREAM)
  srv.setsockopt(:SOCKET, :REUSEADDR, true)
  srv.bind(Addrinfo.tcp("127.0.0.1", 0))
  srv.listen(5)
  addr = srv.local_address
  c = Socket.new(:INET, :STREAM)
  c.connect(addr)
  s, peer = srv.accept
  assert_equal Addrinfo, peer.class
  c.write "ok"
  assert_equal "ok", s.readpartial(2)
  [c, s, srv].each(&:close)
end

test "sockets opened and dropped in a loop do not leak descriptors" do
  # Under GC stress every allocation collects: a few hundred iterations show the same.
  n = ENV["CARMINE_GC_STRESS"] ? 200 : 100_000
  before = open_fds
  n.times do |i|
    a, b = UNIXSocket.pair
    if i.even?
      a.close
      b.close
    end
  end
  GC.start
  assert_equal true, open_fds - before < 50
end
