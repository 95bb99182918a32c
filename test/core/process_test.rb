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
  path = "/tmp/carmine_fork_test_#{Process.pid}"
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
