require_relative "../assert"

# Fiber and external iteration. Expected values and messages are CRuby's.

def fiber_error(&blk)
  assert_raise(FiberError, &blk).message
end

test "resume and yield pass values both ways with splat rules" do
  f = Fiber.new { |a, b| x = Fiber.yield(a + b); y = Fiber.yield(x, 1); [x, y] }
  assert_equal 3, f.resume(1, 2)
  assert_equal [:a, 1], f.resume(:a)
  assert_equal [:a, nil], f.resume
  assert_false f.alive?
  assert_equal [1, 2], Fiber.new { |a, b| [a, b] }.resume([1, 2])
  assert_equal [1, 2], Fiber.new { |*a| Fiber.yield(*a) }.resume(1, 2)
  assert_nil Fiber.new { Fiber.yield }.resume
end

test "FiberError for dead fibers, double resume, root yield and transfers" do
  f = Fiber.new { 1 }
  f.resume
  assert_equal "attempt to resume a terminated fiber", fiber_error { f.resume }
  assert_equal "attempt to yield on a not resumed fiber", fiber_error { Fiber.yield }
  assert_equal "attempt to resume the current fiber", fiber_error { Fiber.current.resume }
  outer = Fiber.new { Fiber.new { outer.resume }.resume }
  assert_equal "attempt to resume a resumed fiber (double resume)", fiber_error { outer.resume }
  y = Fiber.new { Fiber.yield }
  y.resume
  assert_equal "attempt to transfer to a yielding fiber", fiber_error { y.transfer }
  assert_equal "cannot raise exception on unborn fiber", fiber_error { Fiber.new { 1 }.raise("x") }
  assert_equal "dead fiber called", fiber_error { f.transfer }
  assert_equal "tried to create Proc object without a block", assert_raise(ArgumentError) { Fiber.new }.message
end

test "exceptions propagate to the resumer; raise injects one at the yield" do
  e = assert_raise(ArgumentError) { Fiber.new { raise ArgumentError, "boom" }.resume }
  assert_equal "boom", e.message
  f = Fiber.new { begin; Fiber.yield 1; rescue => x; [:rescued, x.message]; end }
  assert_equal 1, f.resume
  assert_equal [:rescued, "hey"], f.raise(RuntimeError, "hey")
  log = []
  g = Fiber.new { 3.times { |i| begin; Fiber.yield i; rescue => x; log << x.message; end }; :fin }
  assert_equal 0, g.resume
  assert_equal 1, g.raise("a")
  assert_equal 2, g.raise("b")
  assert_equal :fin, g.raise("c")
  assert_equal %w[a b c], log
end

test "break, return and throw cannot leave a fiber" do
  assert_equal "break from proc-closure", assert_raise(LocalJumpError) { Fiber.new { break }.resume }.message
  assert_equal "unexpected return", assert_raise(LocalJumpError) { Fiber.new { return 1 }.resume }.message
  assert_equal "uncaught throw :x", assert_raise(UncaughtThrowError) { catch(:x) { Fiber.new { throw :x }.resume } }.message
end

test "yield from inside blocks called by builtins (deep suspension)" do
  f = Fiber.new { [10, 20, 30].each { |x| Fiber.yield x * 2 }; :end }
  assert_equal [20, 40, 60, :end], 4.times.map { f.resume }
  h = Fiber.new { {a: 1}.each { |k, v| Fiber.yield [k, v] }; 5.times { |i| Fiber.yield i if i == 3 }; loop { Fiber.yield :l; break } }
  assert_equal [[:a, 1], 3, :l, nil], 4.times.map { h.resume }
end

test "nested fibers and transfer" do
  outer = Fiber.new do
    inner = Fiber.new { Fiber.yield :in1; :in_done }
    a = inner.resume
    Fiber.yield [a, :out1]
    [inner.resume, :out2]
  end
  assert_equal [:in1, :out1], outer.resume
  assert_equal [:in_done, :out2], outer.resume
  t = Fiber.new { Fiber.current.transfer(5) }
  assert_equal 5, t.resume
  assert_equal :done, Fiber.new { :done }.transfer
  back = Fiber.current
  ping = Fiber.new { |x| back.transfer(x + 1) }
  assert_equal 11, ping.transfer(10)
end

test "kill runs ensure clauses and ends the fiber" do
  log = []
  k = Fiber.new { begin; Fiber.yield; ensure; log << :ensure; end }
  k.resume
  assert_same k, k.kill
  assert_false k.alive?
  assert_equal [:ensure], log
  c = Fiber.new { log << :never }
  c.kill
  assert_false c.alive?
  assert_equal [:ensure], log
end

test "kill of a fiber that is resuming another: the killer unwinds, then the killed fiber when control returns to it" do
  log = []
  parent = Fiber.new do
    child = Fiber.new do
      parent.kill
      log << parent.alive?
      :child_done
    end
    begin
      log << child.resume
      log << :not_reached
    ensure
      log << :ensure
    end
  end
  assert_nil parent.resume
  assert_false parent.alive?
  assert_equal [:ensure], log
  # The killer does not carry on either, through any number of resumes in between.
  log = []
  top = Fiber.new do
    Fiber.new do
      Fiber.new { top.kill; log << :killer_continued }.resume
      log << :middle_continued
    end.resume
    log << :top_continued
  ensure
    log << :top_ensure
  end
  assert_nil top.resume
  assert_false top.alive?
  assert_equal [:top_ensure], log
end

test "killing the main fiber ends the program quietly, after ensure clauses and at_exit" do
  out = run_carmine(<<~RUBY)
    at_exit { puts :at_exit }
    root = Fiber.current
    begin
      Fiber.new { root.kill; puts :killer }.resume
      puts :main_continued
    ensure
      puts :ensure
    end
  RUBY
  out, err, status = out
  assert_equal ["ensure\nat_exit\n", "", 0], [out, err, status.exitstatus]
  out = run_carmine(<<~RUBY)
    back = Fiber.current
    Fiber.new { back.transfer }.transfer
    Fiber.new { back.kill }.resume
    puts :not_reached
  RUBY
  out, err, status = out
  assert_equal ["", "", 0], [out, err, status.exitstatus]
end

test "storage is per fiber and inherited as a copy" do
  Fiber[:req] = 1
  assert_equal 1, Fiber[:req]
  assert_equal 1, Fiber.new { Fiber[:req] }.resume
  assert_equal 1, Fiber.new { Fiber[:req] = 2; Fiber[:req] }.resume.then { Fiber[:req] }
  assert_equal({b: 2}, Fiber.new(storage: {b: 2}) { Fiber.current.storage }.resume)
  assert_nil Fiber.new(storage: nil) { Fiber[:req] }.resume
  # Ruby 3.4: a String key (or anything with to_str) names the Symbol of its text.
  assert_equal 1, Fiber["req"]
  key = Object.new
  def key.to_str = "req"
  assert_equal 1, Fiber[key]
  assert_raise(TypeError) { Fiber[12] }
  assert_raise(FrozenError) { Fiber.new(storage: {a: 1}.freeze) {} }
  assert_raise(FrozenError) { Fiber.current.storage = {a: 1}.freeze }
  Fiber[:req] = nil
end

test "inspect shows the state" do
  f = Fiber.new { Fiber.yield }
  assert_match(/\A#<Fiber:0x\h+ .*fiber_test\.rb:\d+ \(created\)>\z/, f.inspect)
  f.resume
  assert_match(/\(suspended\)>\z/, f.inspect)
  assert_match(/\(resumed\)>\z/, Fiber.current.inspect)
end

test "deep recursion inside a fiber raises SystemStackError" do
  def fiber_recurse(n) = fiber_recurse(n + 1)
  assert_equal SystemStackError, Fiber.new { begin; fiber_recurse(0); rescue SystemStackError => e; e.class; end }.resume
  def fiber_block_recurse(n) = [1].each { fiber_block_recurse(n + 1) }
  assert_equal SystemStackError, Fiber.new { begin; fiber_block_recurse(0); rescue SystemStackError => e; e.class; end }.resume
end

test "many fibers, more than keep native stacks, suspend and finish" do
  fs = Array.new(2000) { |i| Fiber.new { Fiber.yield i; i * 2 } }
  assert_equal 1999000, fs.sum(&:resume)
  GC.start
  assert_equal 3998000, fs.sum(&:resume)
  assert fs.none?(&:alive?)
end

test "Enumerator#next, peek, rewind and StopIteration#result" do
  e = [1, 2, 3].each
  assert_equal [1, 2, 2, 3], [e.next, e.peek, e.next, e.next]
  stop = assert_raise(StopIteration) { e.next }
  assert_equal "iteration reached an end", stop.message
  assert_equal [1, 2, 3], stop.result
  assert_raise(StopIteration) { e.next }
  e.rewind
  assert_equal 1, e.next
  h = {a: 1, b: 2}.each
  assert_equal [:a, 1], h.next
  assert_equal [[:b, 2]], h.next_values
  t = 5.times
  assert_equal [0, 1], [t.next, t.next]
  assert_equal [:x, :x], Enumerator.new { |y| loop { y << :x } }.then { |g| [g.next, g.next] }
end

test "Enumerator#feed sets the value of the yield" do
  log = []
  en = Enumerator.new { |y| y << 1; log << y.yield(2); y << 3; :ret }
  assert_equal 1, en.next
  assert_equal 2, en.next
  en.feed :hello
  assert_equal 3, en.next
  assert_equal [:hello], log
  assert_equal :ret, assert_raise(StopIteration) { en.next }.result
end

test "exceptions inside the iteration reach next" do
  en = Enumerator.new { |y| y << 1; raise IndexError, "inner" }
  assert_equal 1, en.next
  assert_equal "inner", assert_raise(IndexError) { en.next }.message
end

test "resuming a fiber that waits in resume is an error naming it" do
  root = Fiber.current
  f = Fiber.new { root.resume }
  err = assert_raise(FiberError) { f.resume }
  assert_equal "attempt to resume a resuming fiber", err.message
end

test "a transferred fiber that ends returns to the end of the resume chain" do
  f1 = Fiber.new { :done }
  f2 = Fiber.new { r = f1.transfer; Fiber.yield [10, r]; Fiber.yield 20 }
  assert_equal [10, :done], f2.resume
  assert_equal 20, f2.resume
end

test "raising on a fiber that waits in resume raises where its resumes end" do
  f2 = nil
  f1 = Fiber.new { f2.raise(RuntimeError, "from the child") }
  f2 = Fiber.new { f1.resume }
  assert_equal "from the child", assert_raise(RuntimeError) { f2.resume }.message
end

test "a value fed before the first next is what the first yield returns" do
  log = []
  en = Enumerator.new { |y| log << y.yield(1); log << y.yield(2); :end }
  en.feed :a
  assert_equal 1, en.next
  assert_raise(TypeError) { en.feed :b }
  assert_equal 2, en.next
  assert_equal :end, assert_raise(StopIteration) { en.next }.result
  assert_equal [:a, nil], log
end

test "Enumerator#size calls any callable size" do
  callable = Object.new
  def callable.call = 42
  assert_equal 42, Enumerator.new(callable) {}.size
  assert_equal 7, Enumerator.new(-> { 7 }) {}.size
  assert_equal 3, Enumerator.new(3) {}.size
end

test "Enumerator.new runs initialize, so subclasses can define their own" do
  klass = Class.new(Enumerator) do
    attr_reader :n
    def initialize(n)
      @n = n
      super() { |y| n.downto(1) { |i| y << i } }
    end
  end
  e = klass.new(3)
  assert_equal [3, 2, 1], e.to_a
  assert_equal 3, e.next
  assert_equal 3, e.n
  assert_equal "uninitialized enumerator", assert_raise(TypeError) { Enumerator.allocate.next }.message
  assert_raise(FrozenError) { Enumerator.allocate.freeze.send(:initialize) {} }
  assert_equal 100, Enumerator.allocate.send(:initialize, 100) {}.size
end

test "Fiber#raise without arguments and on a fiber suspended by transfer" do
  f = Fiber.new { Fiber.yield }
  f.resume
  e = assert_raise(RuntimeError) { f.raise }
  assert_equal "", e.message
  # f2 waits in `resume` of f1, which transferred back to the root: the exception reaches f1
  # by a transfer, ends it and f2, and comes back here (CRuby 3.4).
  root = Fiber.current
  f1 = Fiber.new { root.transfer }
  f2 = Fiber.new { f1.resume }
  f2.transfer
  e = assert_raise(RuntimeError) { f2.raise(RuntimeError, "Expected error") }
  assert_equal "Expected error", e.message
  assert_false f1.alive?
end

# A fiber whose Fiber.yield is called from its own loop suspends without a native stack and
# is resumed by running its bytecode on the resumer's stack until it needs more (a call,
# an allocation…), where it continues on a native stack of its own (interp/borrowed.rs).
# (Its first two such yields keep the native stack; resumes after the third are borrowed.)
test "borrowed resumes: plain loops, values both ways, promotion mid-loop" do
  f = Fiber.new { |x| while true; x = Fiber.yield(x); end }
  assert_equal (1..8).to_a, (1..8).map { |i| f.resume(i) }
  counter = Fiber.new do
    i = 0
    while i < 6
      Fiber.yield i
      i += 1
    end
    :done
  end
  assert_equal [0, 1, 2, 3, 4, 5, :done], 7.times.map { counter.resume }
  assert_raise(FiberError) { counter.resume }
  log = []
  mixed = Fiber.new do
    y = 0
    while true
      y = Fiber.yield(y)
      log << "got #{y}" if y.even?
    end
  end
  assert_equal (0..7).to_a, (0..7).map { |i| mixed.resume(i) }
  assert_equal ["got 2", "got 4", "got 6"], log
  locals = Fiber.new do
    a = 1
    5.times { |k| a = Fiber.yield(a + k) }
    a
  end
  assert_equal [1, 11, 22, 33, 44, 50], [locals.resume] + [10, 20, 30, 40, 50].map { |v| locals.resume(v) }
  consts = Fiber.new { loop { Fiber.yield Comparable } }
  assert_equal [Comparable] * 5, 5.times.map { consts.resume }
  several = Fiber.new { a = Fiber.yield(1, 2); b = Fiber.yield; [a, b] }
  assert_equal [[1, 2], nil, [:x, [:y, :z]]], [several.resume, several.resume(:x), several.resume(:y, :z)]
end

test "borrowed resumes: raise, kill, ensure, exceptions and GC" do
  f = Fiber.new do
    begin
      x = 0
      while true
        x = Fiber.yield(x)
      end
    ensure
      $fiber_ensure_ran = true
    end
  end
  4.times { |i| f.resume(i) }
  e = assert_raise(RuntimeError) { f.raise "boom" }
  assert_equal "boom", e.message
  assert_false f.alive?
  assert $fiber_ensure_ran
  g = Fiber.new { n = 0; while true; n = Fiber.yield(n); raise ArgumentError, "bad" if n == :bad; end }
  4.times { |i| g.resume(i) }
  assert_raise(ArgumentError) { g.resume(:bad) }
  assert_false g.alive?
  if Fiber.method_defined?(:kill)
    k = Fiber.new { while true; Fiber.yield; end }
    4.times { k.resume }
    k.kill
    assert_false k.alive?
  end
  many = Array.new(300) { |i| Fiber.new { v = i; while true; v = Fiber.yield(v); end } }
  many.each(&:resume)
  GC.start
  sums = many.each_with_index.map { |fb, i| fb.resume(i * 2) + fb.resume(1) }
  assert_equal (0...300).map { |i| i * 2 + 1 }, sums
end

test "first resume from Ruby code: results, errors and exceptions of fresh fibers" do
  assert_equal 3, Fiber.new { 1 + 2 }.resume
  assert_equal [], Fiber.new { |*a| a }.resume
  assert_equal [1, 2], Fiber.new { |*a| a }.resume(1, 2)
  f = Fiber.new { Fiber.yield :in; :out }
  assert_equal :in, f.resume
  assert_equal :out, f.resume
  assert_raise(FiberError) { f.resume }
  e = assert_raise(ZeroDivisionError) { Fiber.new { 1 / 0 }.resume }
  assert_equal "divided by 0", e.message
  g = Fiber.new { Fiber.current }
  assert_same g, g.resume
  outer = Fiber.new { Fiber.new { :inner }.resume }
  assert_equal :inner, outer.resume
  fibers = Array.new(50) { |i| Fiber.new { i * 3 } }
  assert_equal (0...50).map { |i| i * 3 }, fibers.map(&:resume)
end

test "Fiber.blocking marks the current fiber blocking for the block" do
  if Fiber.respond_to?(:blocking)
    f = Fiber.new(blocking: false) { Fiber.blocking { |x| [x.blocking?, x.equal?(Fiber.current)] } }
    assert_equal [true, true], f.resume
    g = Fiber.new(blocking: false) do
      begin
        Fiber.blocking { raise "inside" }
      rescue RuntimeError
      end
      Fiber.current.blocking?
    end
    assert_false g.resume
    assert_equal 5, Fiber.blocking { break 5 }
    assert Fiber.blocking { |x| x.blocking? }
  end
end

test "a fiber cannot be resumed, transferred to or raised into from another thread" do
  f = Fiber.new { Fiber.yield 1; 2 }
  assert_equal 1, f.resume
  errors = Thread.new do
    [-> { f.resume }, -> { f.transfer }, -> { f.raise("x") }].map do |op|
      begin
        op.call
        :no_error
      rescue FiberError => e
        e.message
      end
    end
  end.value
  assert_equal ["fiber called across threads"] * 3, errors
  assert_equal 2, f.resume
  # Each thread has its own root fiber, and a fiber made in a thread runs there.
  roots = 2.times.map { Thread.new { Fiber.current } }.map(&:value)
  assert roots[0] != roots[1]
  assert roots[0] != Fiber.current
  assert_equal [1, 2, 3], Thread.new { e = [1, 2, 3].each; [e.next, e.next, e.next] }.value
end

test "Fiber#raise gives a backtrace-less exception the fiber's backtrace" do
  e = RuntimeError.new("no backtrace")
  f = Fiber.new { Fiber.yield }
  f.resume
  r = begin
    f.raise(e)
  rescue => err
    err
  end
  assert_same e, r
  assert_match(/'Fiber.yield'/, r.backtrace[0])
end
