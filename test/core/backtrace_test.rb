require_relative "../assert"

# Thread::Backtrace::Location and the labels of backtraces (Ruby 3.4's "Class#method").

module BacktraceTest
  LABEL = -> { caller_locations(1, 1)[0].label }
  ANY_LABEL = proc { caller_locations(1, 1)[0].label }

  class Widget
    def direct = LABEL.call
    def via_brackets = LABEL[]
    def via_yield = LABEL.yield
    def via_eqq = ANY_LABEL === 1
    def original = caller_locations(0, 1)[0].label
    alias_method :aliased, :original

    def in_eval = eval("caller_locations(0, 1)[0].label")
    def in_nested_block_eval
      1.times { 1.times { return eval("caller_locations(0, 1)[0].label") } }
    end
    def self.class_level = LABEL.call
  end
end

test "Proc#call and its aliases leave no frame of their own" do
  w = BacktraceTest::Widget.new
  assert_equal "BacktraceTest::Widget#direct", w.direct
  assert_equal "BacktraceTest::Widget#via_brackets", w.via_brackets
  assert_equal "BacktraceTest::Widget#via_yield", w.via_yield
  assert_equal "BacktraceTest::Widget#via_eqq", w.via_eqq
  assert_equal "BacktraceTest::Widget.class_level", BacktraceTest::Widget.class_level
  bt = proc { caller(0) }.call
  assert(bt.none? { |l| l.include?("Proc#call") }, bt.inspect)
end

test "Method#call keeps its frame" do
  def (o = Object.new).where = caller(0)
  assert_match(/'Method#call'/, o.method(:where).call[1])
end

test "an aliased method is labelled with the name it was defined with" do
  assert_equal "BacktraceTest::Widget#original", BacktraceTest::Widget.new.aliased
end

test "an eval frame has the label of the frame its binding comes from" do
  w = BacktraceTest::Widget.new
  assert_equal "BacktraceTest::Widget#in_eval", w.in_eval
  assert_equal "block (2 levels) in BacktraceTest::Widget#in_nested_block_eval", w.in_nested_block_eval
  here = caller_locations(0, 1)[0].label
  assert_equal here, eval("caller_locations(0, 1)[0]").label
  assert_equal here, binding.eval("caller_locations(0, 1)[0]").label
end

test "absolute_path is the file's real path, nil for eval'd code" do
  loc = caller_locations(0, 1)[0]
  assert_equal File.realpath(__FILE__), loc.absolute_path
  assert_nil eval("caller_locations(0, 1)[0].absolute_path")
  assert_nil eval("caller_locations(0, 1)[0].absolute_path", nil, "/some/file.rb")
  # A builtin's frame has the location (and real path) of its caller.
  tap_loc = nil
  tap { tap_loc = caller_locations(1, 1)[0] }
  assert_equal "Kernel#tap", tap_loc.label
  assert_equal File.realpath(__FILE__), tap_loc.absolute_path
end

test "absolute_path and __dir__ resolve symlinks and survive a chdir" do
  dir = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_bt_test_#{Process.pid}"
  Dir.mkdir(dir) unless File.directory?(dir)
  real = "#{dir}/real.rb"
  link = "#{dir}/link.rb"
  File.write(real, "Dir.chdir('/')\n$bt_result = [__FILE__, caller_locations(0, 1)[0].absolute_path, __dir__]\n")
  File.delete(link) if File.symlink?(link)
  File.symlink(real, link)
  load link
  assert_equal [link, File.realpath(real), File.dirname(File.realpath(real))], $bt_result
ensure
  File.delete(link) if link && File.symlink?(link)
  File.delete(real) if real && File.exist?(real)
  Dir.rmdir(dir) if dir && File.directory?(dir)
end

test "Exception#backtrace_locations stays available after #backtrace and is the same Array" do
  e = begin
    raise "x"
  rescue => ex
    ex
  end
  assert_kind_of Array, e.backtrace
  locs = e.backtrace_locations
  assert_kind_of Array, locs
  assert_same locs, e.backtrace_locations
  assert_equal e.backtrace, locs.map(&:to_s)
end

test "set_backtrace takes Locations; Strings clear the locations" do
  locs = caller_locations(0, 2)
  e = RuntimeError.new("m")
  e.set_backtrace(locs)
  assert_equal locs.map(&:to_s), e.backtrace
  assert_equal locs.map(&:to_s), e.backtrace_locations.map(&:to_s)
  assert_equal locs.map(&:absolute_path), e.backtrace_locations.map(&:absolute_path)
  e.set_backtrace(["a.rb:1"])
  assert_equal ["a.rb:1"], e.backtrace
  assert_nil e.backtrace_locations
  begin
    raise ArgumentError, "with locations", locs
  rescue ArgumentError => r
    assert_equal locs.map(&:to_s), r.backtrace_locations.map(&:to_s)
  end
end

test "--backtrace-limit sets Thread::Backtrace.limit and shortens error reports" do
  assert_equal "-1", run_carmine("print Thread::Backtrace.limit")[0]
  assert_equal "2", run_carmine("print Thread::Backtrace.limit", "--backtrace-limit=2")[0]
  src = "def a = raise('oops')\ndef b = a\ndef c = b\ndef d = c\nd\n"
  _, err, status = run_carmine(src, "--backtrace-limit=1")
  assert_false status.success?
  lines = err.lines
  assert_match(/in 'Object#a': oops \(RuntimeError\)/, lines[0])
  assert_match(/\tfrom .*in 'Object#b'/, lines[1])
  assert_equal "\t ... 3 levels...\n", lines[2]
  assert_equal 3, lines.size
  _, err, = run_carmine("p 1", "--backtrace-limit=x")
  assert_match(/wrong limit for backtrace length/, err)
end
