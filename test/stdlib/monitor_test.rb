require_relative "helper"
StdlibTest.require_libs("monitor")

test "Monitor is reentrant and reports its owner" do
  m = Monitor.new
  assert !m.mon_locked?
  m.synchronize do
    m.synchronize { assert m.mon_owned? }
    assert m.mon_locked?
  end
  assert !m.mon_locked?
  assert m.try_enter
  assert m.try_enter
  m.exit
  m.exit
  e = assert_raise(ThreadError) { m.exit }
  assert_equal "current fiber not owner", e.message
end

test "ownership is per fiber" do
  m = Monitor.new
  m.enter
  assert_false Fiber.new { m.try_enter }.resume
  assert_false Fiber.new { m.mon_owned? }.resume
  m.exit
end

test "Monitor serializes threads" do
  m = Monitor.new
  count = 0
  4.times.map do
    Thread.new { 50.times { m.synchronize { c = count; Thread.pass; count = c + 1 } } }
  end.each(&:join)
  assert_equal 200, count
end

test "MonitorMixin condition variables: a bounded buffer" do
  buf = Class.new do
    include MonitorMixin
    def initialize
      super()
      @items = []
      @not_empty = new_cond
      @not_full = new_cond
    end

    def put(x)
      synchronize do
        @not_full.wait_while { @items.size >= 2 }
        @items << x
        @not_empty.signal
      end
    end

    def take
      synchronize do
        @not_empty.wait_while { @items.empty? }
        x = @items.shift
        @not_full.signal
        x
      end
    end
  end.new
  consumer = Thread.new { 10.times.map { buf.take } }
  10.times { |i| buf.put(i) }
  assert_equal (0...10).to_a, consumer.value
end

test "wait with a timeout returns and re-enters as deeply" do
  m = Monitor.new
  c = m.new_cond
  m.synchronize do
    m.synchronize do
      c.wait(0.01)
      assert m.mon_owned?
    end
    assert m.mon_owned?
  end
  assert !m.mon_locked?
  assert_raise(ThreadError) { c.signal }
end

test "extend MonitorMixin on an object" do
  o = Object.new.extend(MonitorMixin)
  o.mon_enter
  assert o.mon_owned?
  o.mon_exit
  assert_equal 3, o.mon_synchronize { 3 }
end

Assert.report
