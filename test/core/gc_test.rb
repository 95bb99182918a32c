require_relative "../assert"

test "GC.start and garbage_collect take the keywords and return nil" do
  assert_nil GC.start
  assert_nil GC.start(full_mark: true, immediate_sweep: true)
  assert_nil ObjectSpace.garbage_collect(full_mark: false)
  o = Object.new.extend(GC)
  assert_nil o.garbage_collect
end

test "GC.count and GC.stat count collections" do
  c = GC.count
  GC.start
  assert GC.count > c
  s = GC.stat
  assert_kind_of Hash, s
  assert s.values.all? { |v| v.is_a?(Integer) }
  %i[count heap_allocated_pages heap_live_slots heap_free_slots total_allocated_objects total_freed_objects
     malloc_increase_bytes minor_gc_count major_gc_count heap_available_slots time].each do |k|
    assert s.key?(k), "GC.stat lacks #{k}"
  end
  assert_equal s[:heap_available_slots], s[:heap_live_slots] + s[:heap_free_slots]
  assert s[:total_allocated_objects] >= s[:total_freed_objects] + s[:heap_live_slots] - 1
  assert_equal s[:count], s[:major_gc_count] + s[:minor_gc_count]
end

test "minor collections keep old Strings and what only they reference" do
  strs = Array.new(20_000) { |i| "old #{i}" }
  3.times { GC.start }
  old = strs[123]
  # Promoted Strings gain a singleton class and ivars that are only reachable from them.
  def old.greet = "hi #{self}"
  old.instance_variable_set(:@tag, "tag" + "!" * 30)
  f = 2.0 ** 1000
  minors = GC.stat(:minor_gc_count)
  200_000.times { |i| [i, i.to_s] }
  assert GC.stat(:minor_gc_count) > minors, "no minor collection ran"
  assert_equal "hi old 123", old.greet
  assert_equal "tag" + "!" * 30, old.instance_variable_get(:@tag)
  assert_equal "old 19999", strs[19_999]
  assert_equal 2.0 ** 1000, f
  assert_equal 20_000, strs.count { |x| x.start_with?("old ") }
end

test "total_allocated_objects grows with allocations" do
  before = GC.stat(:total_allocated_objects)
  keep = Array.new(100) { Object.new }
  assert GC.stat(:total_allocated_objects) >= before + 100
  assert_equal 100, keep.size
end

test "GC.stat with a Hash fills it; unknown keys and other arguments raise" do
  h = { count: "x", other: 1 }
  assert_same h, GC.stat(h)
  assert_kind_of Integer, h[:count]
  assert_equal 1, h[:other]
  e = assert_raise(ArgumentError) { GC.stat(:foo) }
  assert_equal "unknown key: foo", e.message
  e = assert_raise(TypeError) { GC.stat(7) }
  assert_equal "non-hash or symbol given", e.message
end

test "GC.latest_gc_info says why the last collection ran" do
  GC.start
  # Read first: under GC.stress the Hash below is allocated by a collection of its own.
  assert_equal :none, GC.latest_gc_info(:state)
  info = GC.latest_gc_info
  assert_equal :method, info[:gc_by]
  assert_equal :force, info[:major_by]
  assert_equal true, info[:immediate_sweep]
  assert_raise(ArgumentError) { GC.latest_gc_info(:nope) }
end

test "GC.enable and GC.disable return the previous state" do
  GC.enable
  assert_equal false, GC.disable
  assert_equal true, GC.disable
  assert_equal true, GC.enable
  assert_equal false, GC.enable
end

test "GC.stress can be read and set" do
  was = GC.stress
  GC.stress = true
  assert_equal true, GC.stress
  GC.stress = was
  assert_equal was, GC.stress
end

test "GC::Profiler records collections while enabled" do
  GC::Profiler.clear
  GC::Profiler.enable
  assert GC::Profiler.enabled?
  GC.start
  GC::Profiler.disable
  data = GC::Profiler.raw_data
  assert data.size >= 1
  rec = data.last
  assert_kind_of Float, rec[:GC_TIME]
  assert rec[:HEAP_TOTAL_OBJECTS] > 0
  assert_equal :method, rec[:GC_FLAGS][:gc_by]
  assert_match(/\AGC \d+ invokes\.\nIndex +Invoke Time/, GC::Profiler.result)
  assert_kind_of Float, GC::Profiler.total_time
  GC::Profiler.clear
  assert_equal "", GC::Profiler.result
  assert_equal [], GC::Profiler.raw_data
end

test "GC.compact collects and moves nothing" do
  info = GC.compact
  assert_equal 0, info[:moved].values.sum
  assert_equal false, GC.auto_compact
  GC.auto_compact = true
  assert_equal true, GC.auto_compact
  GC.auto_compact = false
end

test "GC.config names the collector; GC.total_time and measure_total_time" do
  assert_kind_of String, GC.config[:implementation]
  assert_equal({}, GC.config({}))
  assert_raise(ArgumentError) { GC.config(implementation: "x") }
  assert_raise(ArgumentError) { GC.config(1) }
  assert_kind_of Integer, GC.total_time
  assert_equal true, GC.measure_total_time
  GC.measure_total_time = false
  assert_equal false, GC.measure_total_time
  GC.measure_total_time = true
  assert_kind_of Integer, GC::INTERNAL_CONSTANTS[:RVALUE_SIZE]
end

# Carmine's heap sizing (heap/mod.rs): after a collection that leaves more than 65% of the
# slots free, empty pages go back to the kernel; growing again reuses them.
# (Without GC.stress: a collection per allocation of 300,000 objects would take minutes.)
test "empty heap pages are given back after a large structure dies" do
  stress = GC.stress
  GC.stress = false
  before = GC.stat(:total_freed_pages)
  big = Array.new(300_000) { [1] }
  big = nil
  3.times { GC.start }
  assert_true GC.stat(:total_freed_pages) > before
  again = Array.new(300_000) { [2] }
  assert_equal 300_000, again.size
ensure
  GC.stress = stress
end

test "buffers freed by a collection for want of buffer room are used again, not faulted in anew" do
  # 4,000 Strings of 48 KB: 190 MB of buffers, a dozen collections because of them. Each
  # collection frees the buffers of the Strings before; when those pages went back to the
  # kernel, every new String faulted its 12 pages in again (50,000 faults in all).
  faults = lambda { File.read("/proc/self/stat").split(") ").last.split[7].to_i }
  before = faults.call
  total = 0
  4000.times { |i| total += ("<tr>#{i % 10}</tr>" * 4800).bytesize }
  assert_equal 4000 * 48_000, total
  assert faults.call - before < 25_000, "#{faults.call - before} page faults"
end if File.exist?("/proc/self/stat")

test "buffers allocated past twice the heap's bytes start a minor collection" do
  # Under GC.stress every allocation collects: nothing to check.
  next if GC.stress
  GC.start
  limit = [2 * GC.stat(:heap_allocated_pages) * 65_536, 2 << 20].max
  # Half as much again as the limit, still below malloc_increase_bytes_limit (a major one).
  bytes = limit * 3 / 2
  next if bytes >= GC.stat(:malloc_increase_bytes_limit)
  minor = GC.stat(:minor_gc_count)
  major = GC.stat(:major_gc_count)
  (bytes / 65_536).times { "x" * 65_536 }
  assert GC.stat(:minor_gc_count) > minor, "no minor collection after #{bytes} bytes of buffers"
  assert_equal major, GC.stat(:major_gc_count)
  assert_equal :malloc, GC.latest_gc_info(:gc_by)
end
