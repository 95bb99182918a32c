# Libraries that are small to use: benchmark, English, securerandom, set, stringio,
# timeout, io/wait, io/nonblock, etc, socket, racc's runtime, rbconfig, and what a
# require of a CRuby C extension says.
require_relative "helper"
StdlibTest.require_libs("benchmark", "English", "securerandom", "set", "stringio", "timeout",
                        "io/wait", "io/nonblock", "etc", "socket", "racc/parser", "rbconfig")

test "benchmark" do
  assert_kind_of Float, Benchmark.realtime { 100.times { } }
  t = Benchmark.measure { 100.times { } }
  assert t.real >= 0
  assert_match(/\A +\d+\.\d{6} +\d+\.\d{6} +\d+\.\d{6} \( +\d+\.\d{6}\)\n\z/, t.format)
  r, w = IO.pipe
  old = $stdout
  $stdout = w
  begin
    Benchmark.bm(7) { |x| x.report("loop:") { 10.times { } } }
  ensure
    $stdout = old
  end
  w.close
  assert_match(/user +system +total +real\nloop: +\d/, r.read)
end

test "English names" do
  "hello" =~ /l+/
  assert_equal ["ll", "he", "o"], [$MATCH, $PREMATCH, $POSTMATCH]
  assert_equal $$, $PID
  assert_equal $0, $PROGRAM_NAME
  "ab" =~ /(a)(b)/
  assert_equal "b", $LAST_PAREN_MATCH
end

test "securerandom" do
  assert_equal 16, SecureRandom.hex(8).size
  assert_match(/\A\h{8}-\h{4}-4\h{3}-[89ab]\h{3}-\h{12}\z/, SecureRandom.uuid)
  assert_equal 10, SecureRandom.random_bytes(10).bytesize
  assert_equal 5, SecureRandom.alphanumeric(5).size
  100.times do
    n = SecureRandom.random_number(10)
    assert (0...10).cover?(n)
    f = SecureRandom.random_number
    assert f >= 0 && f < 1
    assert (3..4).cover?(SecureRandom.random_number(3..4))
  end
  assert_kind_of Integer, SecureRandom.random_number(2**100)
  assert_raise(ArgumentError) { SecureRandom.random_number(Object.new) }
end

test "set and stringio" do
  assert_equal Set[1, 2, 3], Set[1, 2] | Set[3]
  io = StringIO.new(+"")
  io.puts "x"
  io.print 1, 2
  assert_equal "x\n12", io.string
  assert_equal ["a\n", "b"], StringIO.new("a\nb").readlines
end

test "timeout" do
  assert_raise(Timeout::Error) { Timeout.timeout(0.05) { sleep 2 } }
  assert_equal :done, Timeout.timeout(1) { :done }
end

test "io/wait and io/nonblock" do
  r, w = IO.pipe
  assert_nil r.wait_readable(0.01)
  assert_equal 0, r.nread
  w.write "xyz"
  assert_same r, r.wait_readable(1)
  assert_equal 3, r.nread
  assert r.ready?
  assert_same w, w.wait_writable(1)
  assert_equal "xyz", r.nonblock { r.read_nonblock(10) }
  r.nonblock = true
  assert r.nonblock?
end

test "etc" do
  me = Etc.getpwuid(Process.uid)
  assert_kind_of Etc::Passwd, me
  assert_equal me.name, Etc.getpwnam(me.name).name
  assert_equal 0, Etc.getgrnam(Etc.getgrgid(0).name).gid
  assert Etc.nprocessors >= 1
  assert_equal "Linux", Etc.uname[:sysname]
  assert Etc.sysconf(Etc::SC_PAGESIZE) >= 4096
  assert_raise(ArgumentError) { Etc.getpwnam("no-such-user-carmine") }
  names = []
  Etc.passwd { |pw| names << pw.name }
  assert names.include?(me.name)
end

test "socket: a TCP echo on 127.0.0.1" do
  srv = TCPServer.new("127.0.0.1", 0)
  th = Thread.new { c = srv.accept; c.puts c.gets.upcase; c.close }
  reply = TCPSocket.open("127.0.0.1", srv.addr[1]) { |s| s.puts "ping"; s.gets }
  assert_equal "PING\n", reply
  th.join
  srv.close
  assert_equal "127.0.0.1", Addrinfo.tcp("127.0.0.1", 80).ip_address
end

test "a racc parser runs on racc's runtime" do
  require_relative "fixtures/calc_parser"
  assert_equal 11, Calc.new.parse("2+3*(4-1)")
  assert_equal 2, Calc.new.parse("10/2-3")
  assert_raise(Racc::ParseError) { Calc.new.parse("2+*3") }
end

test "rbconfig and the C extensions Carmine lacks" do
  c = RbConfig::CONFIG
  assert_equal RUBY_VERSION.split(".")[0, 2], [c["MAJOR"], c["MINOR"]]
  assert File.directory?(c["rubylibdir"])
  if RUBY_ENGINE == "carmine"
    assert_equal "carmine", c["ruby_install_name"]
    assert_equal File.realpath(RbConfig.ruby), File.realpath("/proc/self/exe")
    e = assert_raise(LoadError) { require "nkf.so" }
    assert_match(/nkf\.so .*C extension.*not available in Carmine/, e.message)
  end
end

Assert.report
