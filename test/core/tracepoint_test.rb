require_relative "../assert"

def traced_add(a)
  a + 1
end

test "call, line, c_call and return events of a method, in order" do
  events = []
  tp = TracePoint.new(:call, :return, :line, :c_call) { |t| events << [t.event, t.method_id] if t.method_id == :traced_add || t.event == :c_call && t.method_id == :+ }
  tp.enable
  traced_add(1)
  tp.disable
  assert_equal [[:call, :traced_add], [:line, :traced_add], [:c_call, :+], [:return, :traced_add]], events
  assert_false tp.enabled?
end

test "return values, raised exceptions, block events and the hook's view" do
  values = []
  TracePoint.new(:return, :b_return) { |t| values << t.return_value }.enable { traced_add(41) }
  assert_true values.include?(42)
  raised = []
  TracePoint.new(:raise) { |t| raised << t.raised_exception.message }.enable do
    begin
      raise ArgumentError, "boom"
    rescue ArgumentError
    end
  end
  assert_equal ["boom"], raised
  blocks = 0
  TracePoint.new(:b_call) { blocks += 1 }.enable { [1, 2, 3].each { |x| x } }
  assert_true blocks >= 3
  tp = TracePoint.new(:line) {}
  assert_raise(RuntimeError, "access from outside") { tp.lineno }
  assert_raise(ArgumentError, "unknown event: nope") { TracePoint.new(:nope) {} }
end

test "enable(target:) reports only the target's events; hooks do not trace themselves" do
  lines = []
  m = method(:traced_add)
  tp = TracePoint.new(:line) { |t| lines << t.lineno; traced_add(0) }
  tp.enable(target: m) do
    traced_add(1)
    [1].map { |x| x }
  end
  assert_equal [4], lines
  bindings = []
  TracePoint.new(:call) { |t| bindings << t.binding.local_variable_get(:a) if t.method_id == :traced_add }.enable { traced_add(7) }
  assert_equal [7], bindings
end

test ":rescue reports the exception a rescue handler receives" do
  rescued = []
  TracePoint.new(:rescue) { |t| rescued << t.raised_exception }.enable do
    begin
      raise IndexError, "caught"
    rescue IndexError => e
      assert_same e, rescued.last
    end
  end
  assert_equal ["caught"], rescued.map(&:message)
end

test ":script_compiled gives eval's source; nil for other events" do
  scripts = []
  TracePoint.new(:script_compiled) { |t| scripts << t.eval_script }.enable { eval("1 + 2") }
  assert_equal ["1 + 2"], scripts
  TracePoint.new(:line) { |t| assert_raise(RuntimeError) { t.eval_script } }.enable { 1 }
end

test "targeted hooks run after global ones, the last enabled first" do
  order = []
  outer = TracePoint.new(:b_call) { order << :outer }
  inner = TracePoint.new(:b_call) { order << :inner }
  target = -> {}
  outer.enable(target: target) do
    inner.enable(target: target) { target.call }
  end
  assert_equal [:inner, :outer], order
  order.clear
  glob = TracePoint.new(:b_call) { order << :global }
  outer.enable(target: target) do
    glob.enable(target_thread: Thread.current)
    target.call
    glob.disable
  end
  assert_equal [:global, :outer], order
end

test "enable(target:) refuses what it cannot do" do
  tp = TracePoint.new(:call) {}
  assert_raise(ArgumentError, "can not enable any hooks") { tp.enable(target: proc {}) {} }
  tp = TracePoint.new(:b_call) {}
  assert_raise(ArgumentError) { tp.enable { tp.enable(target: -> {}) {} } }
  assert_raise(TypeError) { TracePoint.new(Object.new) {} }
end

test "thread_begin and thread_end with target_thread: nil see other threads" do
  seen = []
  t = nil
  lock = Mutex.new
  TracePoint.new(:thread_begin, :thread_end) { |tp| lock.synchronize { seen << [tp.event, Thread.current] } }.enable(target_thread: nil) do
    t = Thread.new {}
    t.join
  end
  assert_equal [[:thread_begin, t], [:thread_end, t]], seen.select { |_, th| th == t }
end
