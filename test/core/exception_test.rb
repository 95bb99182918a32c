require_relative "../assert"

test "detailed_message decorates the message with the class name" do
  assert_equal "new error (RuntimeError)", RuntimeError.new("new error").detailed_message
  assert_equal "unhandled exception", RuntimeError.new("").detailed_message
  assert_equal "StandardError", StandardError.new("").detailed_message
  assert_equal "message", Class.new(RuntimeError).new("message").detailed_message
  assert_equal "\e[1mnew error (\e[1;4mRuntimeError\e[m\e[1m)\e[m", RuntimeError.new("new error").detailed_message(highlight: true)
  assert_raise(ArgumentError) { StandardError.new("").detailed_message(highlight: 0) }
end

test "full_message: first line, backtrace, order, causes and a redefined detailed_message" do
  e = RuntimeError.new("Some runtime error")
  e.set_backtrace(["a.rb:1", "b.rb:2"])
  assert_equal "a.rb:1: Some runtime error (RuntimeError)\n\tfrom b.rb:2\n", e.full_message(highlight: false)
  assert_equal "Traceback (most recent call last):\n\t1: from b.rb:2\na.rb:1: Some runtime error (RuntimeError)\n", e.full_message(highlight: false, order: :bottom)
  assert_raise(ArgumentError) { e.full_message(order: :middle) }
  def e.detailed_message(**) = "DETAILED"
  assert_equal "a.rb:1: DETAILED\n\tfrom b.rb:2\n", e.full_message(highlight: false)
  begin
    begin
      raise "the cause"
    rescue
      raise "main"
    end
  rescue => outer
    msg = outer.full_message(highlight: false)
    assert_match(/main \(RuntimeError\)/, msg)
    assert_match(/the cause \(RuntimeError\)/, msg)
  end
end

test "a bare raise records the caller's backtrace, not raise's own frame" do
  def bare_raise
    raise
  rescue RuntimeError => e
    e.backtrace
  end
  assert_match(/in '.*bare_raise'/, bare_raise.first)
end

test "SystemCallError.new picks the Errno class and formats 'strerror @ func - message'" do
  assert_equal Errno::EINVAL, SystemCallError.new(Errno::EINVAL::Errno).class
  e = SystemCallError.new("custom", Errno::EINVAL::Errno, "loc")
  assert_equal [Errno::EINVAL, "Invalid argument @ loc - custom"], [e.class, e.message]
  assert_equal "Invalid argument @ f - m", Errno::EINVAL.new("m", "f").message
  assert_equal SystemCallError, SystemCallError.new(-1).class
  assert_nil SystemCallError.new("message").errno
  assert_raise(ArgumentError) { SystemCallError.new }
  assert_raise(TypeError) { SystemCallError.new(:foo, 1) }
  assert_true Errno::EINVAL === SystemCallError.new("x", Errno::EINVAL::Errno)
  assert_same Errno::EAGAIN, Errno::EWOULDBLOCK
  assert_equal "No such file or directory - custom", (Class.new(Errno::ENOENT).new("custom").message)
  begin
    File.open("/carmine/no/such/file")
  rescue Errno::ENOENT => err
    assert_equal "No such file or directory @ rb_sysopen - /carmine/no/such/file", err.message
  end
end

test "SignalException, Interrupt, SystemExit, LoadError#path" do
  e = SignalException.new("INT")
  assert_equal [2, "SIGINT", "SIGINT"], [e.signo, e.signm, e.message]
  assert_equal [2, "name"], [SignalException.new(2, "name").signo, SignalException.new(2, "name").message]
  assert_raise(ArgumentError) { SignalException.new("NONEXISTENT") }
  assert_raise(ArgumentError) { SignalException.new(100000) }
  assert_equal [2, "Interrupt"], [Interrupt.new.signo, Interrupt.new.message]
  assert_equal "SystemExit", SystemExit.new(3).message
  assert_nil LoadError.new.path
  begin
    require "carmine_no_such_library_x"
  rescue LoadError => le
    assert_equal "carmine_no_such_library_x", le.path
  end
  assert_true IO::EAGAINWaitReadable.ancestors.include?(IO::WaitReadable)
  assert_equal Errno::EAGAIN, IO::EAGAINWaitReadable.superclass
end

test "an uncaught SignalException ends the process by its signal after at_exit" do
  require_relative "../support/process"
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_sigexc_#{Process.pid}.rb"
  begin
    File.write(path, "at_exit { puts 'ae' }\nraise SignalException, 'TERM'")
    out = IO.popen([Support.carmine_path, path], &:read)
  ensure
    File.delete(path) if File.exist?(path)
  end
  assert_equal ["ae\n", true, 15], [out, $?.signaled?, $?.termsig]
end
