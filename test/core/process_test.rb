require_relative "../assert"

# Forked children inherit this file's at_exit reporter, so children here leave with
# exit! unless the test runs its program in a separate carmine process.

test "fork with a block runs it in a child; wait2 returns its pid and status" do
  pid = fork { exit! 3 }
  got, status = Process.wait2(pid)
  assert_equal pid, got
  assert_equal 3, status.exitstatus
  assert_same status, $?
end

test "a forked block ends like a program: at_exit handlers, then status 0, exit's, or 1" do
  out, _err, status = run_carmine(<<~RUBY)
    at_exit { puts "parent handler in \#{Process.pid == $parent ? 'parent' : 'child'}" }
    $parent = Process.pid
    Process.wait(fork {})
    puts $?.exitstatus
    Process.wait(fork { at_exit { puts "child handler" }; exit 5 })
    puts $?.exitstatus
    Process.wait(fork { $stderr.reopen(File::NULL); raise "boom" })
    puts $?.exitstatus
    Process.wait(fork { at_exit { puts "skipped" }; exit! 6 })
    puts $?.exitstatus
  RUBY
  assert_equal 0, status.exitstatus
  assert_equal ["parent handler in child", "0", "child handler", "parent handler in child", "5",
                "parent handler in child", "1", "6", "parent handler in parent"], out.lines.map(&:chomp)
end

test "fork without a block returns nil in the child" do
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_fork_test_#{Process.pid}"
  child = fork
  if child.nil?
    File.write(path, "child")
    Process.exit!(0)
  end
  Process.wait(child)
  assert_equal "child", File.read(path)
  File.delete(path)
end

test "Process.wait without children raises Errno::ECHILD; waitall returns pairs" do
  assert_raise(Errno::ECHILD) { Process.wait }
  a = fork { exit! 1 }
  b = fork { exit! 2 }
  all = Process.waitall.sort_by { |pid, _| pid }
  assert_equal [a, b].sort, all.map(&:first)
  assert_equal({ a => 1, b => 2 }, all.to_h { |pid, st| [pid, st.exitstatus] })
end

test "Process.kill sends signals by number or name" do
  pid = fork { sleep 10; exit! 0 }
  assert_equal 1, Process.kill(:KILL, pid)
  Process.wait(pid)
  assert_true $?.signaled?
  assert_equal 9, $?.termsig
  assert_equal 1, Process.kill("SIGCONT", Process.pid)
  assert_equal 1, Process.kill(0, Process.pid)
  assert_raise(ArgumentError) { Process.kill("NOPE", Process.pid) }
end

test "fork is a private Kernel method and a public module function" do
  assert Kernel.private_instance_methods(false).include?(:fork)
  assert Kernel.public_methods(false).include?(:fork)
  assert Process.respond_to?(:fork)
end

class CalleeProbe
  def f = __callee__
  alias g f
  def in_block = [1].map { __callee__ }
end

test "__callee__ is the name a method was called by" do
  assert_equal :f, CalleeProbe.new.f
  assert_equal :g, CalleeProbe.new.g
  assert_equal [:in_block], CalleeProbe.new.in_block
  assert_nil __callee__
end

test "spawn runs argv without a shell, a string with metacharacters through the shell" do
  r, w = IO.pipe
  pid = spawn("echo", "a  *", out: w)
  Process.wait(pid)
  pid = spawn("echo $((1 + 2))", out: w)
  Process.wait(pid)
  w.close
  assert_equal "a  *\n3\n", r.read
  r.close
end

test "spawn: env Hash with nil, unsetenv_others, chdir, [cmd, argv0], umask, file redirects" do
  ENV["CARMINE_SPAWN_TEST"] = "parent"
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_spawn_test_#{Process.pid}"
  Process.wait spawn({"A" => "1", "CARMINE_SPAWN_TEST" => nil}, "echo ${A}-${CARMINE_SPAWN_TEST}-", out: path)
  assert_equal "1--\n", File.read(path)
  Process.wait spawn({"B" => "2"}, "/usr/bin/env", unsetenv_others: true, out: [path, "w"])
  assert_equal "B=2\n", File.read(path)
  Process.wait spawn("pwd", chdir: "/", out: [path, File::WRONLY | File::TRUNC])
  assert_equal "/\n", File.read(path)
  Process.wait spawn(["sh", "named"], "-c", "echo $0; umask", umask: 0o027, out: path)
  assert_equal "named\n0027\n", File.read(path)
  Process.wait spawn("ls /carmine-nope", [:out, :err] => [path, "w"])
  assert_match(/carmine-nope/, File.read(path))
  Process.wait spawn("echo appended", out: [path, "a"])
  assert_match(/appended\n\z/, File.read(path))
ensure
  ENV.delete("CARMINE_SPAWN_TEST")
  File.delete(path) if path && File.exist?(path)
end

test "spawn: [:child, fd], :close and close_others" do
  r, w = IO.pipe
  Process.wait spawn("echo to-err >&2", err: [:child, :out], out: w)
  Process.wait spawn("echo closed >&2 || echo failed", err: :close, out: w)
  w.close
  assert_equal "to-err\nfailed\n", r.read
  r.close
end

test "spawn, system and exec errors" do
  assert_raise(Errno::ENOENT, "No such file or directory - carmine-no-such-command") { spawn("carmine-no-such-command") }
  assert_equal 127, $?.exitstatus
  assert_raise(Errno::ENOENT, "No such file or directory - ") { spawn("") }
  assert_raise(Errno::ENOENT, "No such file or directory - /carmine-nodir") { spawn("true", chdir: "/carmine-nodir") }
  assert_raise(ArgumentError, "string contains null byte") { spawn("a\0b") }
  assert_raise(ArgumentError, "expected true or false as unsetenv_others: 1") { spawn("true", unsetenv_others: 1) }
  assert_equal nil, system("carmine-no-such-command")
  assert_equal false, system("exit 3")
  assert_equal 3, $?.exitstatus
  assert_equal true, system("true")
  assert_raise(RuntimeError, "Command failed with exit 3: exit 3") { system("exit 3", exception: true) }
  assert_raise(Errno::ENOENT) { system("carmine-no-such-command", exception: true) }
  assert_raise(Errno::ENOENT, "No such file or directory - carmine-no-such-command") { exec("carmine-no-such-command") }
end

test "Process.detach reaps the child in a thread whose value is its Status" do
  pid = spawn("exit 3")
  t = Process.detach(pid)
  assert_equal pid, t.pid
  assert_equal pid, t[:pid]
  assert_equal 3, t.value.exitstatus
  assert_equal pid, t.value.pid
  assert_raise(Errno::ECHILD) { Process.waitpid(pid) }
  assert_equal nil, Process.detach(2**30).value
end

test "Process::Status.wait leaves $? alone; no child gives pid -1; last_status is $?" do
  system("exit 2")
  before = $?
  assert_same before, Process.last_status
  pid = spawn("exit 5")
  st = Process::Status.wait(pid)
  assert_equal 5, st.exitstatus
  assert_same before, $?
  assert_equal(-1, Process::Status.wait.pid)
end

test "clock_getres and clock_gettime units; Process.times" do
  assert_equal 1, Process.clock_getres(Process::CLOCK_MONOTONIC, :nanosecond)
  assert_kind_of Float, Process.clock_getres(Process::CLOCK_REALTIME)
  assert_kind_of Integer, Process.clock_gettime(Process::CLOCK_MONOTONIC, :millisecond)
  assert_raise(ArgumentError, "unexpected unit: bogus") { Process.clock_gettime(Process::CLOCK_MONOTONIC, :bogus) }
  assert_raise(Errno::EINVAL) { Process.clock_gettime(12345) }
  t = Process.times
  assert_kind_of Process::Tms, t
  assert_kind_of Float, t.utime
  assert_equal [:utime, :stime, :cutime, :cstime], Process::Tms.members
end

test "Process.wait runs trap handlers while it waits" do
  pid = fork { sleep 5; exit! 0 }
  old = trap("USR1") { Process.kill(:KILL, pid) }
  begin
    Thread.new { sleep 0.2; Process.kill(:USR1, Process.pid) }
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    assert_equal pid, Process.wait(pid)
    assert_true $?.signaled?
    assert Process.clock_gettime(Process::CLOCK_MONOTONIC) - started < 3, "the wait was not interrupted"
  ensure
    trap("USR1", old)
  end
end

test "Thread#raise interrupts a thread in Process.wait" do
  pid = fork { sleep 5; exit! 0 }
  t = Thread.new { Process.wait(pid) rescue $! }
  sleep 0.1 until t.status == "sleep"
  t.raise(IOError, "stop")
  assert_kind_of IOError, t.value
  Process.kill(:KILL, pid)
  Process.wait(pid)
end

test "a forked child runs its own trap handlers" do
  r, w = IO.pipe
  pid = fork do
    r.close
    trap("TERM") { w.write "trapped"; w.close; exit! 7 }
    w.write "ready"
    sleep 5
    exit! 0
  end
  w.close
  assert_equal "ready", r.read(5)
  Process.kill(:TERM, pid)
  Process.wait(pid)
  assert_equal "trapped", r.read
  assert_equal 7, $?.exitstatus
end

test "a child forked without a block ends the process with its status" do
  out, _err, status = run_carmine("c = fork; exit 3 if c.nil?; Process.wait(c); puts $?.exitstatus")
  assert_equal ["3\n", 0], [out, status.exitstatus]
end

test "fork goes through Process._fork" do
  out, _err, status = run_carmine(<<~RUBY)
    module Hook
      def _fork
        pid = super
        puts(pid == 0 ? "child" : "parent")
        $stdout.flush
        pid
      end
    end
    Process.singleton_class.prepend(Hook)
    Process.wait(fork { exit!(0) })
  RUBY
  assert_equal 0, status.exitstatus
  assert_equal ["child", "parent"], out.lines.map(&:chomp).sort
end

test "setrlimit takes RLIM_INFINITY, names and to_int objects" do
  cur, max = Process.getrlimit(:CORE)
  assert_nil Process.setrlimit(Process::RLIMIT_CORE, cur, max)
  assert_nil Process.setrlimit("CORE", cur, max)
  int = Object.new
  def int.to_int = Process::RLIMIT_CORE
  assert_nil Process.setrlimit(int, cur, max)
  assert_equal [cur, max], Process.getrlimit(Process::RLIMIT_CORE)
  assert_raise(ArgumentError, /invalid resource name/) { Process.setrlimit(:NOPE, 1) }
end

test "exit statuses convert as CRuby's" do
  assert_equal 5, assert_raise(SystemExit) { exit(Struct.new(:to_int).new(5)) }.status
  assert_equal(-2, assert_raise(SystemExit) { Process.exit(-2.7) }.status)
  assert_equal 1, assert_raise(SystemExit) { exit(false) }.status
  assert_raise(TypeError) { exit("0") }
  assert_raise(TypeError) { exit(nil) }
end

test "exit! in an at_exit handler ends at once, without the report" do
  out, err, status = run_carmine(<<~RUBY)
    $stdout.sync = true
    at_exit { puts "not run" }
    at_exit { puts "handler"; exit! 21 }
    raise "original"
  RUBY
  assert_equal ["handler\n", "", 21], [out, err, status.exitstatus]
end

test "children start from ENV" do
  ENV["CARMINE_SPAWN_TEST"] = "from ENV"
  begin
    r, w = IO.pipe
    Process.wait spawn("echo $CARMINE_SPAWN_TEST", out: w)
    w.close
    assert_equal "from ENV\n", r.read
    assert_equal "from ENV\n", `echo $CARMINE_SPAWN_TEST`
  ensure
    ENV.delete("CARMINE_SPAWN_TEST")
  end
end

test "spawn converts its arguments with to_hash, to_ary and to_io; [:out, :err] share a file" do
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_spawn_conv_#{Process.pid}"
  env = Object.new
  def env.to_hash = { "CONV" => "yes" }
  cmd = Object.new
  def cmd.to_ary = ["/bin/sh", "sh"]
  File.open(path, "w") do |f|
    io = Object.new
    io.define_singleton_method(:to_io) { f }
    Process.wait spawn(env, cmd, "-c", "echo $CONV", out: io)
  end
  assert_equal "yes\n", File.read(path)
  Process.wait spawn("echo out; echo err >&2", [:out, :err] => path)
  assert_equal "out\nerr\n", File.read(path)
ensure
  File.delete(path) if File.exist?(path)
end

test "maxgroups= and Process.daemon's argument checks" do
  n = Process.maxgroups
  Process.maxgroups = n - 1
  assert_equal n - 1, Process.maxgroups
  Process.maxgroups = n
  assert_raise(ArgumentError, /should be positive/) { Process.maxgroups = 0 }
  assert_raise(ArgumentError, /expected true or false as nochdir/) { Process.daemon(1) }
  assert_raise(ArgumentError, /expected true or false as noclose/) { Process.daemon(true, "true") }
end

test "a negative signal number signals the process group" do
  out, _err, status = run_carmine(<<~RUBY)
    $stdout.sync = true
    Process.setsid
    trap("USR2") { puts "group signaled"; exit! 0 }
    Process.kill(-Signal.list["USR2"], Process.getpgrp)
    sleep 5
  RUBY
  assert_equal ["group signaled\n", 0], [out, status.exitstatus]
end

test "the backtick runs a program without the shell when it can; a missing one raises" do
  assert_equal "hi\n", `echo hi`
  assert_equal Encoding.default_external, `echo hi`.encoding
  assert_raise(Errno::ENOENT) { `carmine-no-such-command` }
  assert_equal 127, $?.exitstatus
  `exit 3`
  assert_equal 3, $?.exitstatus
end

test "a script without #! runs with sh; system checks exception:" do
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_noshebang_#{Process.pid}.cmd"
  File.write(path, "echo \"script $1\"\n", perm: 0o700)
  assert_equal "script x\n", `#{path} x`
  assert_raise(ArgumentError, /expected true or false as exception/) { system("true", exception: 1) }
ensure
  File.delete(path) if File.exist?(path)
end

test "at_exit handlers see the exception of an earlier handler as $!" do
  out, _err, status = run_carmine('at_exit { puts "$! = #{$!.message}" }; at_exit { raise "foo" }')
  assert_equal ["$! = foo\n", 1], [out, status.exitstatus]
  assert_raise(ArgumentError, "called without a block") { at_exit }
end
