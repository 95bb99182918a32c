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
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_sock_test_#{Process.pid}"
  path = "/tmp/carmine_sock_test_#{Process.pid}" if path.bytesize > 100 # sun_path holds 108 bytes
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

test "sendmsg/recvmsg carry data, the sender and SCM_RIGHTS descriptors" do
  a, b = UNIXSocket.pair
  r, w = IO.pipe
  assert_equal 2, a.sendmsg("hi", 0, nil, Socket::AncillaryData.unix_rights(w))
  mesg, from, _flags, ctl = b.recvmsg(scm_rights: true)
  assert_equal "hi", mesg
  assert_equal Addrinfo, from.class
  assert_equal true, ctl.cmsg_is?(:SOCKET, :RIGHTS)
  passed = ctl.unix_rights[0]
  passed.write "via fd"
  passed.close
  w.close
  assert_equal "via fd", r.read
  assert_equal :wait_readable, b.recvmsg_nonblock(exception: false)
  a.close
  assert_equal nil, b.recvmsg(10)
  [b, r].each(&:close)
  u1 = UDPSocket.new
  u1.bind("127.0.0.1", 0)
  u2 = UDPSocket.new
  u2.sendmsg("dgram", 0, u1.local_address)
  mesg, from = u1.recvmsg
  assert_equal ["dgram", u2.local_address.ip_port], [mesg, from.ip_port]
  assert_raise(Errno::EDESTADDRREQ) { u2.sendmsg("x") }
  [u1, u2].each(&:close)
end

test "Socket::AncillaryData and Socket::Option read names with their level's prefix" do
  d = Socket::AncillaryData.new(:INET, :IP, :RECVTTL, "x")
  assert_equal [Socket::AF_INET, Socket::IPPROTO_IP, Socket::IP_RECVTTL], [d.family, d.level, d.type]
  assert_raise(SocketError) { Socket::AncillaryData.new(:UNIX, :IP, :RECVTTL, "") }
  assert_raise(TypeError, "size differ.  expected as sizeof(int)=4 but 1") { d.int }
  info = Socket::AncillaryData.ip_pktinfo(Addrinfo.tcp("127.0.0.1", 80), 4).ip_pktinfo
  assert_equal ["127.0.0.1", 0, 4], [info[0].ip_address, info[0].ip_port, info[1]]
  assert_equal "#<Socket::Option: UNSPEC SOCKET LINGER on 30sec>", Socket::Option.linger(true, 30).inspect
  assert_equal Socket::UDP_CORK, Socket::Option.int(:INET, :UDP, :CORK, 1).optname
  assert_raise(SocketError) { Socket::Option.new(:INET, :SOCKET, :CATS, "") }
end

test "Addrinfo.new checks family, type and protocol like getaddrinfo" do
  sa = ["AF_INET", 80, "host", "127.0.0.1"]
  assert_equal Socket::IPPROTO_UDP, Addrinfo.new(sa, nil, nil, Socket::IPPROTO_UDP).protocol
  assert_raise(SocketError) { Addrinfo.new(sa, nil, nil, Socket::IPPROTO_TCP) }
  assert_equal Socket::IPPROTO_AH, Addrinfo.new(sa, nil, :RAW, Socket::IPPROTO_AH).protocol
  assert_raise(SocketError) { Addrinfo.new(["AF_INET6", 80, "h", "127.0.0.1"]) }
  assert_equal Socket::PF_UNSPEC, Addrinfo.new(Socket.sockaddr_in(80, "127.0.0.1")).pfamily
  assert_equal "127.0.0.1", Addrinfo.ip("::ffff:127.0.0.1").ipv6_to_ipv4.ip_address
  assert_equal true, Addrinfo.ip("ff02::1").ipv6_mc_linklocal?
  assert_equal ["AF_INET", ["127.0.0.1", "80"], "PF_INET", "SOCK_STREAM", "IPPROTO_TCP", nil, nil], Addrinfo.tcp("127.0.0.1", 80).marshal_dump
end

test "name services: getnameinfo, getservbyname/port, gethostbyname, getifaddrs" do
  flags = Socket::NI_NUMERICHOST | Socket::NI_NUMERICSERV
  assert_equal ["127.0.0.1", "3333"], Socket.getnameinfo(Socket.sockaddr_in(3333, "127.0.0.1"), flags)
  assert_equal ["127.0.0.1", "21"], Socket.getnameinfo(["AF_INET", 21, "x", "127.0.0.1"], flags)
  assert_raise(ArgumentError) { Socket.getnameinfo(["AF_INET"]) }
  assert_equal 21, Socket.getservbyname("ftp")
  assert_equal "ftp", Socket.getservbyport(21)
  assert_raise(SocketError) { Socket.getservbyname("no-such-service") }
  assert_equal ["255.255.255.255", [], Socket::AF_INET, "\xFF\xFF\xFF\xFF".b], Socket.gethostbyname("<broadcast>")
  assert_equal "127.0.0.1", TCPSocket.gethostbyname("127.0.0.1")[3]
  assert_equal true, Socket.ip_address_list.any?(&:ipv4_loopback?)
  assert_equal true, Socket.getifaddrs.all? { |i| i.is_a?(Socket::Ifaddr) }
end

test "server helpers and connecting from an Addrinfo" do
  Socket.tcp_server_sockets("127.0.0.1", 0) do |servers|
    port = servers[0].local_address.ip_port
    c = Addrinfo.tcp("127.0.0.1", port).connect_from("127.0.0.1", 0)
    s, addr = servers[0].accept
    assert_equal c.local_address.ip_port, addr.ip_port
    assert_equal Socket, Socket.tcp("127.0.0.1", port) { |t| t.class }
    [c, s].each(&:close)
  end
  sock = Socket.new(:INET, :STREAM)
  assert_raise(SocketError, "unbound IPv4 socket") { sock.connect_address }
  sock.close
end
