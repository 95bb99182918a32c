require_relative "../assert"
require "socket"
require "timeout"
require "carmine/scheduler"

# Records every hook call and suspends the calling fiber (with Fiber.yield), so a test sees
# exactly which hooks a blocking operation calls, with which arguments.
class RecordingScheduler
  attr_reader :events

  def initialize
    @events = []
  end

  def block(*args) = record(:block, args)
  def unblock(*args) = @events << [:unblock, args]
  def kernel_sleep(*args) = record(:kernel_sleep, args)
  def io_wait(*args) = record(:io_wait, args)
  def process_wait(*args) = record(:process_wait, args)
  def close = @events << [:close]

  private

  def record(name, args)
    @events << [name, args]
    Fiber.yield
  end
end

def with_scheduler(s)
  Fiber.set_scheduler(s)
  yield s
ensure
  Fiber.set_scheduler(nil)
end

test "set_scheduler checks the four required hooks and returns the scheduler" do
  %i[block unblock kernel_sleep io_wait].each do |missing|
    s = Object.new
    (%i[block unblock kernel_sleep io_wait] - [missing]).each { |m| s.define_singleton_method(m) { |*| } }
    e = assert_raise(ArgumentError) { Fiber.set_scheduler(s) }
    assert_equal "Scheduler must implement ##{missing}", e.message
  end
  s = RecordingScheduler.new
  assert_same s, Fiber.set_scheduler(s)
  assert_same s, Fiber.scheduler
  assert_nil Fiber.current_scheduler, "the root fiber is blocking"
  assert_same s, Fiber.new { Fiber.current_scheduler }.resume
  assert_nil Fiber.new(blocking: true) { Fiber.current_scheduler }.resume
  assert_nil Fiber.set_scheduler(nil)
  assert_equal [[:close]], s.events, "a replaced scheduler is closed"
  assert_nil Fiber.scheduler
end

test "Fiber.schedule without a scheduler raises" do
  e = assert_raise(RuntimeError) { Fiber.schedule {} }
  assert_equal "No scheduler is available!", e.message
end

test "sleep in a non-blocking fiber calls kernel_sleep with the duration as given" do
  with_scheduler(RecordingScheduler.new) do |s|
    Fiber.new { sleep(0.25) }.resume
    Fiber.new { sleep }.resume
    Fiber.new(blocking: true) { sleep(0.001) }.resume
    Fiber.new { Fiber.blocking { sleep(0.001) } }.resume
    assert_equal [[:kernel_sleep, [0.25]], [:kernel_sleep, []]], s.events
  end
end

test "a read that would block calls io_wait(io, IO::READABLE, nil); ready data does not" do
  r, w = IO.pipe
  with_scheduler(RecordingScheduler.new) do |s|
    reader = Fiber.new { r.read(5) }
    reader.resume
    assert_equal 1, s.events.size
    name, (io, events, timeout) = s.events[0]
    assert_equal :io_wait, name
    assert_equal r.fileno, io.fileno
    assert_equal IO::READABLE, events
    assert_nil timeout
    w.write("hello")
    assert_equal "hello", reader.resume
    assert_equal 1, s.events.size
  end
ensure
  r&.close
  w&.close
end

test "a contended Mutex and an empty Queue call block(blocker, nil); Process.wait calls process_wait" do
  with_scheduler(RecordingScheduler.new) do |s|
    q = Thread::Queue.new
    Fiber.new { q.pop }.resume
    assert_equal [:block, [q, nil]], s.events.last
    m = Thread::Mutex.new
    m.lock
    Fiber.new { m.lock }.resume
    assert_equal [:block, [m, nil]], s.events.last
    m.unlock
    assert_equal :unblock, s.events.last[0]
    assert_equal m, s.events.last[1][0]
    Fiber.new { Process.wait(12345) }.resume
    assert_equal [:process_wait, [12345, 0]], s.events.last
  end
end

test "Carmine::Scheduler runs readers, writers, sleepers, queues, mutexes and joins together" do
  order = []
  r, w = IO.pipe
  q = Thread::Queue.new
  m = Thread::Mutex.new
  cv = Thread::ConditionVariable.new
  signalled = false
  t = Thread.new { sleep 0.02; :thread_value }
  with_scheduler(Carmine::Scheduler.new) do
    Fiber.schedule { order << [:read, r.gets] }
    Fiber.schedule { sleep 0.03; order << :slept_30ms }
    Fiber.schedule { sleep 0.01; order << :slept_10ms; w.puts "line" }
    Fiber.schedule { order << [:popped, q.pop] }
    Fiber.schedule { sleep 0.015; q << 42 }
    Fiber.schedule { m.synchronize { sleep 0.005; order << :first_holder } }
    Fiber.schedule { m.synchronize { order << :second_holder } }
    Fiber.schedule { m.synchronize { cv.wait(m) until signalled; order << :signalled } }
    Fiber.schedule { sleep 0.005; m.synchronize { signalled = true; cv.signal } }
    Fiber.schedule { order << [:joined, t.value] }
  end
  # Only causal orders are checked: timings stretch under GC.stress.
  assert_equal [:first_holder, :second_holder, :signalled], order.select { |x| %i[first_holder second_holder signalled].include?(x) }
  assert order.index(:slept_10ms) < order.index([:read, "line\n"])
  assert_equal [[:joined, :thread_value], [:popped, 42], [:read, "line\n"], :first_holder, :second_holder, :signalled, :slept_10ms, :slept_30ms].sort_by(&:to_s), order.sort_by(&:to_s)
ensure
  r&.close
  w&.close
end

test "Carmine::Scheduler: timeouts, IO#wait_readable with a timeout, Timeout.timeout, Process.wait" do
  got = {}
  r, w = IO.pipe
  with_scheduler(Carmine::Scheduler.new) do
    Fiber.schedule { got[:wait] = r.wait_readable(0.01) }
    Fiber.schedule do
      got[:timeout] = begin
        Timeout.timeout(0.01) { sleep 1 }
      rescue Timeout::Error => e
        e.message
      end
    end
    Fiber.schedule do
      pid = spawn("exit 3")
      Process.wait(pid)
      got[:status] = $?.exitstatus
    end
    Fiber.schedule { got[:queue] = Thread::Queue.new.pop(timeout: 0.01) }
  end
  assert_equal({ wait: nil, timeout: "execution expired", status: 3, queue: nil }, got)
ensure
  r&.close
  w&.close
end

test "Carmine::Scheduler serves TCP connections, one fiber each" do
  server = TCPServer.new("127.0.0.1", 0)
  port = server.addr[1]
  replies = []
  with_scheduler(Carmine::Scheduler.new) do
    Fiber.schedule do
      8.times do
        c = server.accept
        Fiber.schedule do
          while (line = c.gets)
            c.write(line.upcase)
          end
          c.close
        end
      end
    end
    8.times do |i|
      Fiber.schedule do
        s = TCPSocket.new("127.0.0.1", port)
        20.times { |j| s.puts("m#{i}-#{j}"); replies << s.gets }
        s.close
      end
    end
  end
  assert_equal 160, replies.size
  assert_equal "M7-19\n", replies.max_by { |x| x.scan(/\d+/).map(&:to_i) }
ensure
  server&.close
end

test "a thread's scheduler runs its fibers to the end when the thread ends" do
  done = []
  Thread.new do
    Fiber.set_scheduler(Carmine::Scheduler.new)
    3.times { |i| Fiber.schedule { sleep 0.001 * (3 - i); done << i } }
  end.join
  assert_equal [0, 1, 2], done.sort
end

test "fibers scheduled from a scheduled fiber all run" do
  seen = []
  with_scheduler(Carmine::Scheduler.new) do
    Fiber.schedule do
      Fiber.schedule { sleep 0.002; seen << :inner }
      seen << :outer
    end
  end
  assert_equal [:outer, :inner], seen
end

test "names are resolved through the scheduler's address_resolve" do
  resolver = Class.new(Carmine::Scheduler) do
    attr_reader :asked
    def address_resolve(hostname)
      (@asked ||= []) << hostname
      ["127.0.0.1"]
    end
  end.new
  server = TCPServer.new("127.0.0.1", 0)
  port = server.addr[1]
  peer = nil
  with_scheduler(resolver) do
    Fiber.schedule { c = server.accept; peer = c.gets; c.close }
    Fiber.schedule { s = TCPSocket.new("carmine.invalid", port); s.puts("hi"); s.close }
  end
  assert_equal ["carmine.invalid"], resolver.asked
  assert_equal "hi\n", peer
ensure
  server&.close
end

test "backticks and system wait for the child through process_wait" do
  waits = []
  s = Class.new(Carmine::Scheduler) do
    define_method(:process_wait) { |pid, flags| waits << flags; super(pid, flags) }
  end.new
  out = nil
  ok = nil
  with_scheduler(s) do
    Fiber.schedule { out = `echo hi` }
    Fiber.schedule { ok = system("exit 0") }
  end
  assert_equal "hi\n", out
  assert_equal true, ok
  assert_equal [0, 0], waits
end

test "a write to a full pipe calls io_wait(io, IO::WRITABLE, nil)" do
  r, w = IO.pipe
  nil while w.write_nonblock("x" * 4096, exception: false) != :wait_writable
  with_scheduler(RecordingScheduler.new) do |s|
    writer = Fiber.new { w.write("more") }
    writer.resume
    name, (io, events, timeout) = s.events.last
    assert_equal [:io_wait, w.fileno, IO::WRITABLE, nil], [name, io.fileno, events, timeout]
    r.read_nonblock(1 << 20)
    assert_equal 4, writer.resume
  end
ensure
  r&.close
  w&.close
end

test "Carmine::Scheduler: a descriptor number reused by a new socket or pipe is watched again" do
  got = []
  with_scheduler(Carmine::Scheduler.new) do
    Fiber.schedule do
      3.times do |round|
        # The previous round's pair was closed: the new one usually gets the same numbers.
        a, b = round.even? ? UNIXSocket.pair : IO.pipe
        Fiber.schedule { sleep 0.01; b.write("r#{round}\n") }
        got << [a.fileno, a.gets]
        a.close
        b.close
      end
    end
  end
  assert_equal ["r0\n", "r1\n", "r2\n"], got.map(&:last)
  assert_equal 1, got.map(&:first).uniq.size
end

# Carmine::Scheduler with CRuby 3.4's io_read/io_write hooks, written the way schedulers
# for CRuby write them: the transfer itself in Fiber.blocking through IO::Buffer.
class HookedScheduler < Carmine::Scheduler
  attr_reader :calls

  def initialize
    super
    @calls = []
  end

  def io_read(io, buffer, length, offset)
    @calls << [:io_read, length, offset]
    loop do
      n = Fiber.blocking { buffer.read(io, length, offset) }
      return n unless n == -Errno::EAGAIN::Errno
      io_wait(io, IO::READABLE, nil)
    end
  end

  def io_write(io, buffer, length, offset)
    @calls << [:io_write, length, offset]
    Fiber.blocking { buffer.write(io, length, offset) }
  end
end

test "reads and writes of a non-blocking fiber go through io_read and io_write when defined" do
  r, w = IO.pipe
  r.nonblock = true
  got = nil
  s = HookedScheduler.new
  with_scheduler(s) do
    Fiber.schedule { got = r.gets }
    Fiber.schedule do
      w.write("hello\n")
      w.flush
    end
  end
  assert_equal "hello\n", got
  assert_true s.calls.include?([:io_write, 6, 0])
  assert_true s.calls.any? { |c| c[0] == :io_read }
ensure
  r&.close
  w&.close
end
