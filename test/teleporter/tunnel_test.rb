require_relative "../assert"
require_relative "support"
require "teleporter"

T = Teleporter::Tunnel

test "send and recv copy objects in order (immediates, small and large dumps)" do
  t = T.new(capacity: 1 << 20)
  objs = [1, -(2**62), 2.5, 1e300, nil, true, false, :sym, :"with space", "hello", [1, 2.5, "abc"],
          "x" * 1000, "y" * 100_000, 2**100, [[1, [2, [3]]], "z" * 60]]
  objs.each { |o| assert_equal t, t.send(o) }
  assert_equal objs.size, t.size
  objs.each { |o| assert_equal o, t.recv }
  assert t.empty?
  assert_equal 0, t.stats[:used_blocks]
end

test "a received string is a new, unfrozen copy with its encoding" do
  t = T.new(capacity: 1 << 20)
  s = "héllo"
  t << s << "b".b
  r = t.recv
  assert_equal s, r
  assert_equal Encoding::UTF_8, r.encoding
  assert !r.frozen?
  assert !r.equal?(s)
  assert_equal Encoding::BINARY, t.recv.encoding
end

test "recv(timeout:) returns nil when nothing comes, recv_nonblock raises or returns :wait_readable" do
  t = T.new(capacity: 1 << 20)
  assert_nil t.recv(timeout: 0)
  assert_nil t.recv(timeout: 0.02)
  assert_raise(Teleporter::EmptyError, "tunnel empty") { t.recv_nonblock }
  assert_equal :wait_readable, t.recv_nonblock(exception: false)
  t.send 7
  assert_equal 7, t.recv_nonblock
  assert_raise(ArgumentError) { t.recv(timeout: -1) }
  assert_raise(ArgumentError, "unknown keyword: :wait") { t.recv(wait: 1) }
end

test "close: queued messages are still delivered, then ClosedError (a StopIteration)" do
  t = T.new(capacity: 1 << 20)
  t.send 1
  t.send "two"
  assert !t.closed?
  assert_equal t, t.close
  assert t.closed?
  assert_raise(Teleporter::ClosedError, "tunnel closed") { t.send 3 }
  assert_equal 1, t.recv
  assert_equal "two", t.recv
  assert_raise(Teleporter::ClosedError) { t.recv }
  assert_raise(Teleporter::ClosedError) { t.recv_nonblock }
  assert_raise(Teleporter::ClosedError) { t.recv(timeout: 1) }
  assert Teleporter::ClosedError < StopIteration
  got = []
  t2 = T.new(capacity: 1 << 20)
  3.times { |i| t2.send i }
  t2.close
  loop { got << t2.recv }
  assert_equal [0, 1, 2], got
end

test "a full queue makes send wait; send(timeout:) returns nil then" do
  t = T.new(capacity: 1 << 20, slots: 4)
  4.times { |i| t.send i }
  assert_nil t.send(4, timeout: 0.02)
  assert_equal 4, t.size
  assert_equal 0, t.recv
  assert_equal t, t.send(4, timeout: 0.02)
  assert_equal [1, 2, 3, 4], Array.new(4) { t.recv }
end

test "messages larger than the tunnel raise Teleporter::Error and change nothing" do
  t = T.new(capacity: 256 * 1024)
  t.send "before"
  e = assert_raise(Teleporter::Error) { t.send("x" * 300_000) }
  assert_match(/does not fit in the tunnel/, e.message)
  assert_equal 1, t.size
  assert_equal "before", t.recv
  # Memory held by messages nobody receives: a send that cannot wait for it raises too.
  big = "y" * 60_000
  n = 0
  loop do
    break unless t.send(big, timeout: 0.01)
    n += 1
  end
  assert n >= 2
  n.times { assert_equal big, t.recv }
  assert_equal 0, t.stats[:used_blocks]
end

test "unsupported objects raise TypeError naming the class, and the tunnel goes on" do
  t = T.new(capacity: 1 << 20)
  e = assert_raise(TypeError) { t.send(Thread.current) }
  assert_match(/Thread/, e.message)
  assert_raise(TypeError) { t.send([1, proc {}]) }
  assert_equal 0, t.size
  t.send [1, 2]
  assert_equal [1, 2], t.recv
  assert_equal 0, t.stats[:used_blocks]
end

# Minor page faults of this process so far (field 10 of /proc/self/stat).
def minor_faults = File.read("/proc/self/stat").split(") ").last.split[7].to_i

test "a process maps the ring in when it takes its slot: messages do not fault on fresh ring pages" do
  t = T.new(capacity: 32 << 20)  # 8,192 entries: 512 KiB of ring, 128 pages
  t.send(0)
  t.recv
  before = minor_faults
  i = 0
  while i < 4_000            # 4,000 entries: 63 pages of the ring not used yet
    t.send(i)
    t.recv
    i += 1
  end
  faults = minor_faults - before
  assert faults < 20, "#{faults} page faults for 4,000 messages through 63 fresh pages of the ring"
end

test "bad arguments" do
  assert_raise(ArgumentError) { T.new(capacity: 10) }
  assert_raise(ArgumentError) { T.new(capacity: 1 << 20, slots: 0) }
  assert_raise(TypeError) { T.new(capacity: "big") }
  assert_raise(ArgumentError) { T.open("a/b") }
  assert_raise(ArgumentError) { T.open("") }
  assert_raise(TypeError) { T.open(nil) }
  assert_raise(Teleporter::Error) { T.new(capacity: 1 << 20).unlink }
  assert_raise(Errno::ENOENT) { T.unlink("carmine-no-such-tunnel-#{$$}") }
end

test "a tunnel is inherited across fork: the child sends, the parent receives" do
  t = T.new(capacity: 1 << 20)
  pids = [TPTest.fork_child { t.send "Hello"; t.send [$$, "x" * 500] }]
  assert_equal "Hello", t.recv
  pid, s = t.recv
  assert_equal pids[0], pid
  assert_equal 500, s.size
ensure
  TPTest.reap(pids || [])
end

test "a sender ahead of a slower receiver in another process waits at the flow limit" do
  # 8 MiB: the flow limit is a sixteenth of the heap, about 512 KiB (8 messages of 64 KiB).
  t = T.new(capacity: 8 << 20)
  n = GC.stress ? 12 : 40
  pids = [TPTest.fork_child do
    n.times { t.recv; sleep 0.005 }
  end]
  t.send "x" * 65_536
  most = 0
  (n - 1).times do
    t.send "x" * 65_536
    most = [most, t.stats[:used_bytes]].max
  end
  # Without the limit the sender is far ahead: n - 2 messages queued, 2.5 MB.
  assert most < 1_500_000, "#{most} bytes queued"
  assert_equal({ pids[0] => 0 }, TPTest.reap(pids).transform_values(&:exitstatus))
  pids = []
  assert_equal 0, t.stats[:used_blocks]
ensure
  TPTest.reap(pids || [])
end

test "a process sending to itself is held back once, not at every send" do
  n = 40
  sends = lambda do |t|
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    n.times { t.send "y" * 65_536 }
    took = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    # Each send over the limit would wait 20 ms for a receive that never comes (GC.stress
    # makes every send slow).
    assert took < 0.4, "#{took} s" unless GC.stress
    assert_equal n, t.size
  end
  # Nobody has received yet.
  t = T.new(capacity: 8 << 20)
  sends.(t)
  n.times { assert_equal 65_536, t.recv.size }
  # Another process received last: the flow limit applies to this one's sends.
  t = T.new(capacity: 8 << 20)
  pids = [TPTest.fork_child { t.recv }]
  t.send 1
  TPTest.reap(pids)
  sends.(t)
  # A send with a timeout is not held back, and does not fail for the limit.
  pids = [TPTest.fork_child { t.recv }]
  TPTest.reap(pids)
  assert_equal t, t.send("z" * 65_536, timeout: 0)
  n.times { assert_equal 65_536, t.recv.size }
  assert_equal 0, t.stats[:used_blocks]
ensure
  TPTest.reap(pids || [])
end

test "many senders and many receivers (a master/worker task queue)" do
  tasks = T.new(capacity: 2 << 20, slots: 64)
  results = T.new(capacity: 2 << 20, slots: 4096)
  n = GC.stress ? 30 : 600
  pids = []
  3.times do
    pids << TPTest.fork_child do
      loop do
        i, payload = tasks.recv
        results.send [i, payload.size, $$]
      end
    end
  end
  senders = 2.times.map do |w|
    TPTest.fork_child do
      (w...n).step(2) { |i| tasks.send [i, "p" * (i % 300)] }
    end
  end
  pids.concat(senders)
  got = Array.new(n) { results.recv }
  assert_equal (0...n).to_a, got.map(&:first).sort
  got.each { |i, size, _| assert_equal i % 300, size }
  assert got.map(&:last).uniq.size >= 1
  tasks.close
  TPTest.reap(pids)
  pids = []
  tasks.reclaim
  assert_equal 0, tasks.stats[:used_blocks]
  assert_equal 0, results.stats[:used_blocks]
ensure
  TPTest.reap(pids)
end

test "a named tunnel is opened by an unrelated process and removed by unlink" do
  TPTest.named_tunnel("named", capacity: 1 << 20) do |t, name|
    assert_equal name, t.name
    assert File.exist?("/dev/shm/#{name}")
    assert_equal 0o600, File.stat("/dev/shm/#{name}").mode & 0o777
    out, err, status = run_carmine(<<~RUBY)
      require "teleporter"
      t = Teleporter::Tunnel.open(#{name.inspect})
      t.send [:from, $$, "unrelated"]
    RUBY
    assert status.success?, err
    assert_equal "", out
    msg = t.recv(timeout: 10)
    assert_equal :from, msg[0]
    assert_equal "unrelated", msg[2]
    t.send "reply"
    out, err, status = run_carmine(<<~RUBY)
      require "teleporter"
      p Teleporter::Tunnel.open(#{name.inspect}).recv(timeout: 10)
    RUBY
    assert status.success?, err
    assert_equal "\"reply\"\n", out
    t.unlink
    assert !File.exist?("/dev/shm/#{name}")
    # The mapping stays usable after unlink.
    t.send 1
    assert_equal 1, t.recv
    assert_raise(Errno::ENOENT) { t.unlink }
  end
end

test "a thread blocked in recv leaves the giant lock, and can be killed" do
  t = T.new(capacity: 1 << 20)
  th = Thread.new { t.recv }
  count = 0
  deadline = Time.now + 0.05
  count += 1 while Time.now < deadline
  assert count > 10
  t.send :ok
  assert_equal :ok, th.value
  th2 = Thread.new { t.recv }
  sleep 0.02
  th2.kill
  assert th2.join(5)
  th3 = Thread.new { t.recv }
  th3.report_on_exception = false
  sleep 0.02
  th3.raise(IndexError, "stop")
  assert_raise(IndexError, "stop") { th3.join(5) }
end

test "inspect, capacity, dup" do
  t = T.new(capacity: 1 << 20)
  assert_match(/\A#<Teleporter::Tunnel anonymous capacity=\d+ queued=0>\z/, t.inspect)
  assert t.capacity <= 1 << 20 && t.capacity > 900_000
  d = t.dup
  d.send 5
  assert_equal 5, t.recv
  assert_nil t.name
end

test "under a fiber scheduler, a fiber waiting in recv lets the other fibers run" do
  require "carmine/scheduler"
  t = T.new(capacity: 1 << 20)
  order = []
  begin
    Fiber.set_scheduler(Carmine::Scheduler.new)
    Fiber.schedule { order << [:got, t.recv] }
    Fiber.schedule { order << [:timeout, t.recv(timeout: 0.01)] }
    Fiber.schedule { sleep 0.02; order << :slept; t.send "late" }
  ensure
    Fiber.set_scheduler(nil)
  end
  assert_equal [[:timeout, nil], :slept, [:got, "late"]], order
end

test "63 users at a time: the 64th gets Teleporter::Error and changes nothing" do
  # Each Tunnel object of a mapping takes a slot of its own at its first send/recv, as a
  # process or another VM of the process does, so one process can fill the slots.
  TPTest.named_tunnel("slots", capacity: 256 << 10) do |first, name|
    users = [first] + Array.new(62) { T.open(name) }
    users.each_with_index { |u, i| u.send(i) }
    assert_equal 63, first.stats[:processes]
    extra = T.open(name)
    assert_raise(Teleporter::Error, "too many processes use this tunnel (at most 63)") { extra.send(:x) }
    assert_raise(Teleporter::Error, "too many processes use this tunnel (at most 63)") { extra.recv }
    assert_equal (0...63).to_a, Array.new(63) { first.recv }
    assert_equal [63, 0], [first.stats[:processes], first.stats[:queued]]
    first.unlink
  end
  assert_equal [], TPTest.leftovers
end

test "Fixnums, Floats, nil, true, false and Symbols travel without allocating" do
  t = T.new(capacity: 1 << 20)
  [5, -(2**61), 2.5, 1.0e-5, nil, true, false, :sym].each do |v|
    t.send(v)
    t.recv
    before = GC.stat(:total_allocated_objects)
    i = 0
    while i < 1000
      t.send(v)
      r = t.recv
      assert_equal v, r if i == 0
      i += 1
    end
    assert (GC.stat(:total_allocated_objects) - before) < 10, "#{v.inspect}: #{GC.stat(:total_allocated_objects) - before} objects for 1,000 round trips"
  end
end
