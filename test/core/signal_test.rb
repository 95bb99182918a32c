require_relative "../assert"

test "trap returns the previous command and Process.kill to itself runs the handler before returning" do
  got = []
  assert_equal "DEFAULT", trap("USR1") { |signo| got << signo }
  Process.kill(:USR1, Process.pid)
  assert_equal [Signal.list["USR1"]], got
  handler = trap("USR1", "IGNORE")
  assert_equal Proc, handler.class
  Process.kill("SIGUSR1", Process.pid)
  assert_equal 1, got.size
  assert_equal "IGNORE", trap("USR1", "SIG_DFL")
  assert_equal "DEFAULT", trap("USR1", "")
  assert_equal "IGNORE", trap("USR1", nil)
  assert_equal nil, Signal.trap(:USR1, "SYSTEM_DEFAULT")
  assert_equal "SYSTEM_DEFAULT", Signal.trap(:USR1, "DEFAULT")
  assert_equal "SYSTEM_DEFAULT", Signal.trap("PROF", "DEFAULT")
end

test "a signal sent from another thread runs the handler on the main thread" do
  main = Thread.current
  ran_on = nil
  trap("USR2") { ran_on = Thread.current }
  Thread.new { Process.kill("USR2", Process.pid) }.join
  sleep 0.01 until ran_on
  assert_same main, ran_on
  trap("USR2", "DEFAULT")
end

test "any object with call is a handler, looked up when the signal arrives" do
  late = Object.new
  trap(:HUP, late)
  assert_raise(NoMethodError) { Process.kill(:HUP, Process.pid) }
  seen = nil
  late.define_singleton_method(:call) { |n| seen = n }
  Process.kill(:HUP, Process.pid)
  assert_equal Signal.list["HUP"], seen
  trap(:HUP, "DEFAULT")
end

test "trap errors: reserved, uncatchable, unknown and badly typed signals" do
  assert_raise(ArgumentError, "can't trap reserved signal: SIGSEGV") { trap("SEGV") {} }
  assert_raise(ArgumentError, "can't trap reserved signal: SIGVTALRM") { trap(:VTALRM) {} }
  assert_raise(Errno::EINVAL, "Invalid argument - SIGKILL") { trap("KILL") {} }
  assert_raise(ArgumentError, "unsupported signal 'SIGFOO'") { trap("FOO") {} }
  assert_raise(ArgumentError, "negative signal name: -HUP") { trap("-HUP") {} }
  assert_raise(ArgumentError, "invalid signal number (99)") { trap(99) {} }
  assert_raise(ArgumentError, "bad signal type NilClass") { trap(nil) {} }
end

test "Signal.signame and Signal.list" do
  assert_equal "INT", Signal.signame(2)
  assert_equal "EXIT", Signal.signame(0)
  assert_equal nil, Signal.signame(99)
  assert_equal 15, Signal.list["TERM"]
  assert_equal nil, Signal.list["STKFLT"]
end

test "trap EXIT runs before at_exit handlers; trap TERM with EXIT raises SystemExit" do
  out, _err, status = run_carmine(<<~RUBY)
    at_exit { print 1 }
    Signal.trap(:EXIT, proc { print 2 })
    at_exit { print 3 }
    trap("TERM", "EXIT")
    begin
      Process.kill("TERM", Process.pid)
    rescue SystemExit
      print "x"
    end
  RUBY
  assert_equal 0, status.exitstatus
  assert_equal "x231", out
end

test "a trap handler interrupts a sleeping main thread" do
  out, _err, status = run_carmine(<<~RUBY)
    trap("USR1") { puts "handled"; exit 4 }
    Thread.new { sleep 0.05; Process.kill("USR1", Process.pid) }
    sleep
  RUBY
  assert_equal 4, status.exitstatus
  assert_equal "handled\n", out
end
