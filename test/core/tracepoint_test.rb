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
