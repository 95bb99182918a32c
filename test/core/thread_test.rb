require_relative "../assert"
require_relative "../support/process"

# Threads, Mutex, Queue, SizedQueue and ConditionVariable. Expected values and messages
# are CRuby's.

test "Thread.new runs the block with its arguments; value and join" do
  t = Thread.new(1, 2) { |a, b| a + b }
  assert_equal 3, t.value
  assert_equal t, t.join
  assert_false t.alive?
  assert_false t.status
  assert_equal "must be called with a block", assert_raise(ThreadError) { Thread.new }.message
  assert_raise(ArgumentError) { Thread.start }
  assert_raise(TypeError) { Thread.allocate }
  assert_equal :started, Thread.start { :started }.value
end

test "Thread.current, Thread.main, Thread.list, inspect and names" do
  assert_equal Thread.main, Thread.current
  other = Thread.new { Thread.current }.value
  assert other != Thread.main
  assert_equal [Thread.main], Thread.list
  t = Thread.new { sleep }
  t.name = "worker"
  assert_equal "worker", t.name
  assert_match(/\A#<Thread:0x\h+@worker .*thread_test\.rb:\d+ (run|sleep)>\z/, t.inspect)
  assert_equal 2, Thread.list.size
  assert_equal "string contains null byte", assert_raise(ArgumentError) { t.name = "a\0b" }.message
  t.kill
  t.join
  assert_equal "dead", t.inspect[/(\w+)>\z/, 1]
end

test "an exception ends its thread and is raised again by join and value" do
  t = Thread.new { Thread.current.report_on_exception = false; raise ArgumentError, "boom" }
  e = assert_raise(ArgumentError) { t.join }
  assert_equal "boom", e.message
  assert_raise(ArgumentError) { t.value }
  assert_nil t.status
  assert_equal "Target thread must not be current thread", assert_raise(ThreadError) { Thread.current.join }.message
  t = Thread.new { Thread.current.report_on_exception = false; Thread.main.join }
  assert_equal "Target thread must not be main thread", assert_raise(ThreadError) { t.value }.message
end

test "report_on_exception prints the exception on $stderr" do
  out, err, status = Support.run_carmine(<<~RUBY)
    t = Thread.new { raise "oops" }
    begin
      t.join
    rescue => e
      puts "joined: \#{e.message}"
    end
    Thread.new { Thread.current.report_on_exception = false; raise "quiet" }.join rescue puts "quiet"
  RUBY
  assert_equal "joined: oops\nquiet\n", out
  assert_match(/\A#<Thread:0x\h+ \S+:1 run> terminated with exception \(report_on_exception is true\):\n\S+:1:in 'block in <main>': oops \(RuntimeError\)\n\z/, err)
  assert status.success?
end

test "Mutex serialises increments from many threads" do
  m = Mutex.new
  count = 0
  threads = 4.times.map do
    Thread.new do
      2000.times do
        m.synchronize do
          c = count
          Thread.pass if c % 97 == 0
          count = c + 1
        end
      end
    end
  end
  threads.each(&:join)
  assert_equal 8000, count
  assert_false m.locked?
  m.lock
  assert m.owned?
  assert_equal "deadlock; recursive locking", assert_raise(ThreadError) { m.lock }.message
  assert_false Thread.new { m.try_lock }.value
  t = Thread.new { Thread.current.report_on_exception = false; m.unlock }
  assert_equal "Attempt to unlock a mutex which is locked by another thread/fiber", assert_raise(ThreadError) { t.value }.message
  m.unlock
  assert_equal "Attempt to unlock a mutex which is not locked", assert_raise(ThreadError) { m.unlock }.message
end

test "a thread that ends holding a mutex releases it" do
  m = Mutex.new
  Thread.new { m.lock }.join
  assert_false m.locked?
end

test "Queue passes values between threads in order; close ends the consumers" do
  q = Queue.new
  consumer = Thread.new do
    items = []
    while (v = q.pop)
      items << v
    end
    items
  end
  100.times { |i| q << i }
  q.close
  assert_equal (0...100).to_a, consumer.value
  assert_equal "queue closed", assert_raise(ClosedQueueError) { q.push 1 }.message
  assert_nil q.pop
  q2 = Queue.new([1, 2])
  assert_equal 2, q2.size
  assert_equal 1, q2.pop(true)
  q2.pop
  assert_equal "queue empty", assert_raise(ThreadError) { q2.pop(true) }.message
  if RUBY_VERSION >= "3.2"
    assert_nil q2.pop(timeout: 0.01)
    assert_equal "no implicit conversion of String into Float", assert_raise(TypeError) { q2.pop(timeout: "1") }.message
  end
end

test "SizedQueue blocks producers while full" do
  sq = SizedQueue.new(2)
  log = []
  producer = Thread.new { 5.times { |i| sq << i; log << [:pushed, i] }; sq.close }
  Thread.pass until sq.size == 2 && producer.status == "sleep"
  assert_equal [[:pushed, 0], [:pushed, 1]], log
  items = []
  while (v = sq.pop)
    items << v
  end
  producer.join
  assert_equal [0, 1, 2, 3, 4], items
  assert_equal "queue size must be positive", assert_raise(ArgumentError) { SizedQueue.new(0) }.message
  assert_equal "queue full", assert_raise(ThreadError) { s = SizedQueue.new(1); s << 1; s.push(2, true) }.message
end

test "ConditionVariable wait, signal and broadcast" do
  m = Mutex.new
  cv = ConditionVariable.new
  ready = false
  waiters = 3.times.map { Thread.new { m.synchronize { cv.wait(m) until ready; :woke } } }
  Thread.pass until waiters.all? { |t| t.status == "sleep" }
  m.synchronize { ready = true; cv.broadcast }
  assert_equal [:woke] * 3, waiters.map(&:value)
  m.synchronize { assert_nil cv.wait(m, 0.01) }
end

test "sleep, wakeup, Thread.stop and run" do
  t = Thread.new { sleep; :slept }
  Thread.pass until t.status == "sleep"
  assert t.stop?
  t.wakeup
  assert_equal :slept, t.value
  t = Thread.new { Thread.stop; :resumed }
  Thread.pass until t.status == "sleep"
  t.run
  assert_equal :resumed, t.value
  assert_equal "stopping only thread\n\tnote: use sleep to stop forever", assert_raise(ThreadError) { Thread.stop }.message
  start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  assert_equal 0, sleep(0.01)
  assert Process.clock_gettime(Process::CLOCK_MONOTONIC) - start >= 0.01
end

test "Thread#raise and Thread#kill interrupt a thread; ensure clauses run" do
  t = Thread.new { begin; sleep; rescue => e; [e.class, e.message]; end }
  Thread.pass until t.status == "sleep"
  t.raise(IOError, "wake up")
  assert_equal [IOError, "wake up"], t.value
  ran = []
  t = Thread.new { begin; sleep; ensure; ran << Thread.current.status; end }
  Thread.pass until t.status == "sleep"
  t.kill
  t.join
  assert_equal ["aborting"], ran
  assert_false t.status
  # A busy thread is interrupted at a safepoint.
  n = 0
  t = Thread.new { loop { n += 1 } }
  Thread.pass until n > 0
  t.kill
  t.join
  assert_false t.alive?
  t = Thread.new { Thread.current.kill; :not_reached }
  assert_nil t.value
end

test "Thread#[] and thread variables" do
  t = Thread.new do
    Thread.current[:a] = 1
    Thread.current["b"] = 2
    Thread.current.thread_variable_set(:c, 3)
    [Thread.current[:a], Thread.current[:b], Thread.current.key?(:a), Thread.current.keys.sort,
     Thread.current.thread_variable_get("c"), Thread.current.thread_variable?(:c), Thread.current.fetch(:x, 9)]
  end
  assert_equal [1, 2, true, [:a, :b], 3, true, 9], t.value
  assert_nil Thread.current[:a]
  assert_equal "key not found: :x", assert_raise(KeyError) { Thread.current.fetch(:x) }.message
end

test "the giant lock is handed over: two busy threads both make progress" do
  counts = [0, 0]
  stop = false
  threads = 2.times.map { |i| Thread.new { counts[i] += 1 until stop } }
  Thread.pass until counts.all? { |c| c > 0 }
  stop = true
  threads.each(&:join)
  assert counts.all? { |c| c > 0 }
end

test "the collector marks values held by every thread" do
  threads = 3.times.map do |i|
    Thread.new do
      kept = (0...200).map { |j| "t#{i}-#{j}" }
      200.times { |j| [j.to_s] * 10 }
      GC.start
      Thread.pass
      kept.each_with_index.all? { |s, j| s == "t#{i}-#{j}" }
    end
  end
  GC.start
  assert_equal [true] * 3, threads.map(&:value)
end

test "deadlock: every thread blocked forever raises fatal in the main thread" do
  out, err, status = Support.run_carmine("Queue.new.pop")
  assert_equal "", out
  assert_match(/No live threads left\. Deadlock\? \(fatal\)/, err)
  assert_equal 1, status.exitstatus
end

test "the main thread ending kills the other threads after at_exit, running their ensure" do
  out, _err, status = Support.run_carmine(<<~RUBY)
    at_exit { puts "at_exit" }
    t = Thread.new { begin; sleep; ensure; puts "ensure"; end }
    Thread.pass until t.status == "sleep"
    puts "main"
  RUBY
  assert_equal "main\nat_exit\nensure\n", out
  assert status.success?
end

test "exit in a thread ends the process" do
  out, _err, status = Support.run_carmine("Thread.new { exit 3 }.join; sleep 1; puts :not_reached")
  assert_equal "", out
  assert_equal 3, status.exitstatus
end

test "Thread.handle_interrupt defers interrupts as its mask says" do
  log = []
  begin
    Thread.handle_interrupt(RuntimeError => :never) do
      me = Thread.current
      Thread.new { me.raise "deferred" }.join
      log << Thread.pending_interrupt?
      # (Thread.pending_interrupt?(SomeClass) crashes CRuby 3.1, so it is not checked here.)
    end
  rescue => e
    log << e.message
  end
  assert_equal [true, "deferred"], log
  assert_false Thread.pending_interrupt?
  # :on_blocking: taken in a blocking operation, not between them.
  q = Queue.new
  t = Thread.new do
    Thread.handle_interrupt(RuntimeError => :on_blocking) do
      begin
        q.pop
        :not_interrupted
      rescue => e
        e.message
      end
    end
  end
  Thread.pass until t.status == "sleep"
  t.raise "in pop"
  assert_equal "in pop", t.value
  assert_equal "unknown mask signature", assert_raise(ArgumentError) { Thread.handle_interrupt(RuntimeError => :later) {} }.message
end

test "ThreadGroup: Default, add, list, enclose" do
  assert_equal ThreadGroup::Default, Thread.current.group
  g = ThreadGroup.new
  t = Thread.new { sleep }
  assert_equal ThreadGroup::Default, t.group
  g.add(t)
  assert_equal [t], g.list
  assert_equal g, t.group
  g.enclose
  assert g.enclosed?
  assert_equal "can't move from the enclosed thread group", assert_raise(ThreadError) { ThreadGroup::Default.add(t) }.message
  t.kill
  t.join
  assert_equal [], g.list
end

test "a thread blocked reading a pipe or waiting for a child lets the others run" do
  r, w = IO.pipe
  reader = Thread.new { r.read }
  Thread.pass until reader.status == "sleep" || reader.status == "run"
  w.write "data"
  w.close
  assert_equal "data", reader.value
  r2, _w2 = IO.pipe
  stuck = Thread.new { r2.gets }
  sleep 0.02
  stuck.kill
  stuck.join
  assert_false stuck.status
  shell = Thread.new { `sleep 0.2; echo done` }
  ticks = 0
  5.times { sleep 0.01; ticks += 1 }
  assert_equal 5, ticks
  assert_equal "done\n", shell.value
end

test "Thread#[] is fiber-local; thread variables are not" do
  Thread.current[:fl] = :root
  Thread.current.thread_variable_set(:tv, :thread)
  f = Fiber.new do
    seen = [Thread.current[:fl], Thread.current.thread_variable_get(:tv)]
    Thread.current[:fl] = :fiber
    Fiber.yield seen
    Thread.current[:fl]
  end
  assert_equal [nil, :thread], f.resume
  assert_equal :root, Thread.current[:fl]
  assert_equal :fiber, f.resume
  Thread.current[:fl] = nil
  Thread.current.thread_variable_set(:tv, nil)
  t = Thread.new { Thread.current[:x] = 5; sleep }
  Thread.pass until t.status == "sleep"
  assert_equal 5, t[:x]
  assert_equal [:x], t.keys
  t.kill
  t.join
end

test "Thread#backtrace of a sleeping thread; Thread.each_caller_location" do
  t = Thread.new { sleep }
  Thread.pass until t.status == "sleep"
  bt = t.backtrace
  assert_match(/in .*sleep'\z/, bt.first)
  assert_match(/thread_test\.rb:\d+:in .block/, bt[1])
  assert_equal bt.first, t.backtrace_locations(0, 1).first.to_s
  t.kill
  t.join
  assert_nil t.backtrace
  if Thread.respond_to?(:each_caller_location)
    locs = []
    Thread.each_caller_location { |l| locs << l.to_s }
    assert_equal caller_locations(0).map(&:to_s).drop(1), locs
  end
end

test "$~ and $_ of the starting scope are per thread and per fiber; $? is per thread" do
  "a" =~ /a/
  $_ = "main line"
  seen = Thread.new { "b" =~ /b/; $_ = "thread line"; [$~[0], $_] }.value
  assert_equal ["b", "thread line"], seen
  assert_equal "a", $~[0]
  assert_equal "main line", $_
  assert_equal "z", Fiber.new { "z" =~ /z/; $~[0] }.resume
  assert_equal "a", $~[0]
  `true`
  assert Thread.new { `false`; $?.success? } .value == false
  assert $?.success?
end

test "Thread#kill unwinds the whole thread through a running fiber" do
  log = []
  t = Thread.new do
    Fiber.new { begin; sleep; ensure; log << :fiber_ensure; end }.resume
    log << :after_fiber
  end
  Thread.pass until t.status == "sleep"
  t.kill
  t.join
  assert_equal [:fiber_ensure], log
  assert_false t.status
end

test "a thread blocked writing a full pipe lets the others run, and can be killed" do
  r, w = IO.pipe
  writer = Thread.new { w.write("a" * 200_000) }
  assert_equal 200_000, r.read(200_000).size
  writer.join
  stuck = Thread.new { w.write("b" * 200_000) }
  Thread.pass until stuck.status == "sleep"
  stuck.kill
  stuck.join
  assert_false stuck.alive?
  r.close
  w.close rescue nil
end

test "thousands of threads spinning on Thread.pass all finish" do
  count = 0
  threads = 2000.times.map { Thread.new { 3.times { Thread.pass }; count += 1 } }
  threads.each(&:join)
  assert_equal 2000, count
end

test "Thread#raise: the target calls #exception again and records where it was interrupted" do
  log = []
  cls = Class.new(StandardError) do
    define_method(:exception) do |*args|
      log << [Thread.current, args]
      super(*args)
    end
  end
  t = Thread.new do
    Thread.current.report_on_exception = false
    sleep
  end
  Thread.pass until t.stop?
  t.raise cls.new, "interrupted"
  e = begin
    t.join
    nil
  rescue cls => err
    err
  end
  assert_equal "interrupted", e.message
  assert_equal [[Thread.current, ["interrupted"]], [t, []]], log
  assert_match(/'Kernel#sleep'/, e.backtrace[0])
end

test "Thread#fetch warns with the caller's location when a block overrides the default" do
  t = Thread.new {}
  t.join
  _, err, = run_carmine("t = Thread.new {}; t.join; p t.fetch(:k, 1) { 2 }", "-W")
  assert_match(/:1: warning: block supersedes default value argument/, err)
end

test "Regexp.escape escapes '#', which starts a comment in extended mode" do
  assert_equal "\\#<a\\ b>", Regexp.escape("#<a b>")
  assert_match(/\A#{Regexp.escape("#x y")}\z/x, "#x y")
end

test "SortedSet says it moved out of the set library" do
  assert_raise(RuntimeError) { SortedSet }
end

test "Thread#kill right after Thread#raise: the raise is taken first" do
  t = Thread.new do
    Thread.current.report_on_exception = false
    sleep
  end
  Thread.pass until t.stop?
  t.raise RuntimeError, "raised before kill"
  t.kill
  Thread.pass while t.alive?
  assert_raise(RuntimeError, "raised before kill") { t.join }
end
