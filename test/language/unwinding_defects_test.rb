require_relative "../assert"

# Regression tests for non-local exits (return/break/next/redo) reaching odd places.

test "return from a top-level proc called inside a lambda's class body raises LocalJumpError" do
  out, err, status = run_carmine(<<~'RUBY')
    $p = proc { return }
    begin
      lambda { class A; $p.call; end }.call
    rescue LocalJumpError => e
      puts "rescued: #{e.message}"
    end
    puts 1
  RUBY
  assert_equal "rescued: unexpected return\n1\n", out, err
  assert_equal 0, status.exitstatus
end

test "redo in a for loop re-runs the body without re-assigning the variable" do
  seen = []
  for i in 1..3
    seen << i
    i -= 1
    redo if i > 0 && seen.size < 20
  end
  assert_equal [1, 2, 1, 3, 2, 1], seen
end

test "break from an orphan proc raises LocalJumpError" do
  pr = Proc.new { break }
  e = assert_raise(LocalJumpError) { pr.call }
  assert_equal "break from proc-closure", e.message
end

test "return from a proc nested in a proc inside a method returns from the method" do
  def nested_proc_return
    proc { proc { return 7 }.call }.call
    8
  end
  assert_equal 7, nested_proc_return
end

test "break and next inside a class body inside a block" do
  r = [1, 2].each { class DefectsBreakInClassBody; break 5; end }
  assert_equal 5, r
  r = [1, 2].map { |x| class DefectsNextInClassBody; next 6; end }
  assert_equal [6, 6], r
end

test "ensure runs once when it raises after break" do
  a = []
  begin
    [1].each do
      begin
        break
      ensure
        a << :ensure
        raise "boom"
      end
    end
  rescue => e
    a << e.message
  end
  assert_equal [:ensure, "boom"], a
end

test "at_exit blocks see $! of the uncaught exception before the report is printed" do
  out, err, status = run_carmine(<<~'RUBY')
    at_exit { puts "at_exit: #{$!.inspect}"; $stdout.flush }
    raise "bang"
  RUBY
  assert_equal "at_exit: #<RuntimeError: bang>\n", out
  assert_match(/bang \(RuntimeError\)/, err)
  assert_equal 1, status.exitstatus
end

test "a closed stderr or stdout pipe does not crash the VM" do
  path = Support.carmine_path
  # The shell reports the status of the last pipeline element; ask for carmine's.
  status = `bash -c '#{path} -e "raise %(a) * 100000" 2>&1 | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}'`.to_i
  assert_equal 1, status
  status = `bash -c '#{path} -e "loop { puts 1 }" | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}'`.to_i
  assert_equal 141, status
  status = `bash -c '#{path} -e "100000.times { warn 1 }" 2>&1 | head -c 10 >/dev/null; echo ${PIPESTATUS[0]}'`.to_i
  assert_equal 0, status # warn ignores write errors on the standard error stream
end

test "exit! while other threads run ends the process with the status" do
  _out, _err, status = run_carmine("Thread.new { loop {} }; sleep 0.01; exit!(3)")
  assert_equal 3, status.exitstatus
end

test "an ensure run inline by next, break or return runs once when it raises" do
  a = []
  begin; [1].each { begin; next; ensure; a << :next; raise "n"; end }; rescue => e; a << e.message; end
  begin; while true; begin; break; ensure; a << :while; raise "w"; end; end; rescue => e; a << e.message; end
  pr = proc { begin; next 1; ensure; a << :proc; raise "p"; end }
  begin; pr.call; rescue => e; a << e.message; end
  obj = Object.new
  def obj.m(a)
    begin
      begin; return; ensure; a << :in; raise "x"; end
    ensure
      a << :out
    end
  end
  begin; obj.m(a); rescue => e; a << e.message; end
  assert_equal [:next, "n", :while, "w", :proc, "p", :in, :out, "x"], a
end

test "return in a singleton class body returns from the enclosing method" do
  o = Object.new
  def o.direct
    class << Object.new; return :inner; end
    :outer
  end
  def o.through_block_and_ensure(log)
    [1].each { class << self; begin; return :blk; ensure; $unwinding_log << :ensure; end; end }
    :no
  end
  $unwinding_log = []
  assert_equal [:inner, :blk, [:ensure]], [o.direct, o.through_block_and_ensure(nil), $unwinding_log]
end
