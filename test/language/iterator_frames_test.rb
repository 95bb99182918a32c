require_relative "../assert"

# Integer#times with a literal block runs as an iterator frame driven by the dispatch loop
# (interp/iter.rs), its block frame restarted in place between iterations. These cases pin
# down that it behaves exactly like the Rust iteration it replaces. Expected values are
# CRuby's.

test "result, argument and iteration count" do
  seen = []
  assert_equal 3, 3.times { |i| seen << i }
  assert_equal [0, 1, 2], seen
  assert_equal 0, 0.times { raise "not called" }
  assert_equal(-4, -4.times { raise "not called" })
  assert_equal [0, 1], 2.times.to_a
  count = 0
  1000.times { count += 1 }
  assert_equal 1000, count
end

test "block parameters: none, one, several, optional, splat, block-local" do
  n = 0
  3.times { n += 1 }
  assert_equal 3, n
  pairs = []
  2.times { |a, b| pairs << [a, b] }
  assert_equal [[0, nil], [1, nil]], pairs
  opts = []
  2.times { |a, b = :d| opts << [a, b] }
  assert_equal [[0, :d], [1, :d]], opts
  rests = []
  2.times { |*r| rests << r }
  assert_equal [[0], [1]], rests
  locals = []
  3.times { |i; x| locals << x; x = i }
  assert_equal [nil, nil, nil], locals
  numbered = []
  2.times { numbered << _1 * 10 }
  assert_equal [0, 10], numbered
end

test "locals of each iteration are fresh" do
  out = []
  3.times do |i|
    v = out.last
    out << (defined?(w) ? :leak : i)
    w = i
    v
  end
  assert_equal [0, 1, 2], out
end

test "break, next and return" do
  assert_equal 30, 5.times { |i| break i * 10 if i == 3 }
  nexts = []
  r = 4.times { |i| next if i.odd?; nexts << i }
  assert_equal 4, r
  assert_equal [0, 2], nexts
  def early
    5.times { |i| return i + 100 if i == 2 }
    :not_reached
  end
  assert_equal 102, early
  def nested_break
    3.times { |i| 3.times { |j| break if j == 1 }; return [:outer, i] if i == 2 }
  end
  assert_equal [:outer, 2], nested_break
  x = [1, 2].map { |e| 3.times { |i| break e * i if i == 2 } }
  assert_equal [2, 4], x
end

test "redo and retry inside the block" do
  tries = 0
  out = []
  2.times do |i|
    tries += 1
    redo if tries == 1
    out << i
  end
  assert_equal [0, 1], out
  attempts = 0
  r = 2.times do |i|
    begin
      attempts += 1
      raise "again" if attempts < 3
    rescue
      retry
    end
  end
  assert_equal 2, r
  assert_equal 4, attempts
end

test "exceptions leave through the iterator with its backtrace entry" do
  e = assert_raise(RuntimeError) { 4.times { |i| raise "x#{i}" if i == 2 } }
  assert_equal "x2", e.message
  assert e.backtrace.any? { |l| l =~ /in .(Integer#)?times'/ }, e.backtrace.inspect
  caught = 3.times.map { |i| begin; 2.times { raise ArgumentError if i == 1 }; :ok; rescue ArgumentError; :rescued; end }
  assert_equal [:ok, :rescued, :ok], caught
  ens = []
  begin
    3.times { |i| begin; raise "boom" if i == 1; ensure; ens << i; end }
  rescue RuntimeError
  end
  assert_equal [0, 1], ens
  assert_equal :thrown, catch(:t) { 5.times { |i| throw :t, :thrown if i == 2 }; :no }
end

test "procs and blocks made inside an iteration" do
  procs = []
  3.times { |i| procs << proc { i * 2 } }
  assert_equal [0, 2, 4], procs.map(&:call)
  lambdas = []
  2.times { |i| lambdas << -> { i } }
  assert_equal [0, 1], lambdas.map(&:call)
  escaped = nil
  2.times { |i| escaped ||= proc { break :b } }
  assert_raise(LocalJumpError) { escaped.call }
  sums = []
  2.times { |i| sums << [1, 2].sum { |x| x + i } }
  assert_equal [3, 5], sums
  assert_equal 2, 2.times { |i| binding.local_variable_get(:i) }
end

test "a redefined or aliased times, a Bignum and a non-literal block" do
  big = 2**64
  seen = 0
  big.times { |i| seen = i; break if i == 2 }
  assert_equal 2, seen
  blk = proc { |i| seen = i }
  3.times(&blk)
  assert_equal 2, seen
  Integer.class_eval { alias_method :carmine_times_alias, :times }
  got = []
  2.carmine_times_alias { |i| got << i }
  assert_equal [0, 1], got
  Integer.class_eval do
    alias_method :carmine_saved_times, :times
    def times; yield :custom; :redefined; end
  end
  begin
    got = []
    assert_equal :redefined, 3.times { |v| got << v }
    assert_equal [:custom], got
  ensure
    Integer.class_eval do
      alias_method :times, :carmine_saved_times
      remove_method :carmine_saved_times
      remove_method :carmine_times_alias
    end
  end
  got = []
  2.times { |i| got << i }
  assert_equal [0, 1], got
end

test "fibers yield from inside iterator frames" do
  f = Fiber.new do
    3.times { |i| 2.times { |j| Fiber.yield [i, j] } }
    :done
  end
  got = []
  7.times { got << f.resume }
  assert_equal [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [2, 1], :done], got
  e = [1, 2, 3].each_with_index.to_a
  assert_equal [[1, 0], [2, 1], [3, 2]], e
  en = 3.times
  assert_equal [0, 1, 2, :stop], [en.next, en.next, en.next, (en.next rescue :stop)]
end

test "deep nesting and GC during iterations" do
  def nest(d, acc)
    return acc << d if d == 0
    2.times { nest(d - 1, acc) }
    acc
  end
  assert_equal 2**10, nest(10, []).size
  strs = []
  200.times { |i| strs << ("s" * (i % 7)); GC.start if i % 50 == 0 }
  assert_equal 200, strs.size
  assert_equal "ssssss", strs[6]
end

# Kernel#loop with a literal block runs as an iterator frame too.
test "loop: break value, next, return, no block argument" do
  assert_equal 5, loop { break 5 }
  assert_nil(loop { break })
  x = 0
  loop { x += 1; next if x < 5; break }
  assert_equal 5, x
  def loop_return
    loop { return :ret }
  end
  assert_equal :ret, loop_return
  args = []
  loop do |q, *r|
    args << [q, r]
    break if args.size == 2
  end
  assert_equal [[nil, []], [nil, []]], args
end

test "loop: StopIteration ends it with its result; other exceptions pass" do
  e = [1, 2, 3].each
  assert_equal [1, 2, 3], loop { e.next }
  i = 0
  r = loop do
    i += 1
    raise StopIteration, "done" if i > 3
  end
  assert_nil r
  assert_equal 4, i
  err = StopIteration.new("with result")
  assert_equal err.result, loop { raise err }
  n = 0
  assert_equal :manual, loop { n += 1; begin; raise StopIteration if n == 2; rescue StopIteration; end; break :manual if n == 4 }
  ex = assert_raise(ArgumentError) { loop { raise ArgumentError, "boom" } }
  assert ex.backtrace.any? { |l| l =~ /in .(Kernel#)?loop'/ }, ex.backtrace.inspect
  assert_equal 9, catch(:t) { loop { throw :t, 9 } }
  assert_equal Float::INFINITY, loop.size
  inner = []
  loop { 3.times { |k| inner << k }; break }
  assert_equal [0, 1, 2], inner
end

test "while true and until false" do
  i = 0
  while true
    i += 1
    break if i == 3
  end
  assert_equal 3, i
  until false
    i += 1
    break if i == 5
  end
  assert_equal 5, i
end

test "each iteration of a block whose locals are captured gets its own environment" do
  procs = []
  3.times { |i| x = i * 10; procs << proc { [i, x] }; x += 1 }
  assert_equal [[0, 1], [1, 11], [2, 21]], procs.map(&:call)
  lambdas = []
  n = 0
  loop { n += 1; y = n; lambdas << -> { y }; break if n == 3 }
  assert_equal [1, 2, 3], lambdas.map(&:call)
  bindings = []
  2.times { |i| bindings << binding }
  assert_equal [0, 1], bindings.map { |b| b.local_variable_get(:i) }
  fresh = []
  3.times { |i| fresh << defined?(z).inspect; z = i; fresh << [1].map { z } }
  assert_equal ["nil", [0], "nil", [1], "nil", [2]], fresh
end

test "Integer#upto and #downto with a Fixnum limit run as iterator frames" do
  r = []
  1.upto(4) { |i| r << i }
  4.downto(1) { |i| r << i }
  assert_equal [1, 2, 3, 4, 4, 3, 2, 1], r
  assert_equal 3, 3.upto(1) { raise "not called" }
  assert_equal 1, 1.downto(3) { raise "not called" }
  assert_equal 300, (1.upto(10) { |i| break i * 100 if i == 3 })
  s = 0
  (-2).upto(2) { |i| next if i == 0; s += i }
  assert_equal 0, s
  x = []
  1.upto(2.5) { |i| x << i }
  assert_equal [1, 2], x
  m = Object.new
  def m.find = 1.upto(5) { |i| return i if i == 2 }
  assert_equal 2, m.find
  max = 4611686018427387903
  z = []
  (max - 1).upto(max) { |i| z << i }
  assert_equal [max - 1, max], z
  e = []
  2.downto(0) { |i| e << (10 / i rescue $!.class) }
  assert_equal [5, 10, ZeroDivisionError], e
  ex = (1.upto(3) { |i| raise "x#{i}" if i == 2 } rescue $!)
  assert_equal "x2", ex.message
  assert_match(/upto/, ex.backtrace[1])
  assert_equal 1, 1.upto(3, &:to_s)
  y = []
  1.upto(3, &y.method(:push))
  assert_equal [1, 2, 3], y
  procs = []
  1.upto(3) { |i| procs << -> { i } }
  assert_equal [1, 2, 3], procs.map(&:call)
end
