require_relative "../assert"

# Collections for want of slots leave their pages to be swept as the allocator needs
# them (crates/carmine-vm/src/heap/mod.rs, lazy sweeping). This file runs its scenario
# first, in a fresh process whose small heap is mostly left unswept by such a
# collection; dead objects on unswept pages must stay invisible.

def make_dying(klass, n)
  Array.new(n) { klass.new.object_id }
end

def collect_for_slots
  count = GC.count
  junk = nil
  junk = [junk] until GC.count > count
end

test "objects that died stay unseen while their pages wait for the sweep" do
  klass = Class.new
  ids = make_dying(klass, 2_000)
  collect_for_slots
  assert_equal :sweeping, GC.latest_gc_info(:state)
  assert_equal false, GC.latest_gc_info(:immediate_sweep)
  assert ObjectSpace.each_object(klass).count < 20, "dead instances are listed"
  s = GC.stat
  assert_equal s[:heap_available_slots], s[:heap_live_slots] + s[:heap_free_slots]
  found = ids.count do |id|
    ObjectSpace._id2ref(id)
    true
  rescue RangeError
    false
  end
  assert found < 20, "#{found} dead objects found by id"
  GC.start
  assert_equal :none, GC.latest_gc_info(:state)
  assert_equal true, GC.latest_gc_info(:immediate_sweep)
end

test "objects allocated while pages wait for the sweep keep their ivars and ids" do
  collect_for_slots
  objs = Array.new(5_000) { |i| s = "s#{i}"; s.instance_variable_set(:@n, i); s }
  ids = objs.map(&:object_id)
  collect_for_slots
  assert_equal (0...5_000).to_a, objs.map { |s| s.instance_variable_get(:@n) }
  assert_equal ids, objs.map(&:object_id)
  assert_equal objs.first(100), ids.first(100).map { |id| ObjectSpace._id2ref(id) }
end

# A major collection frees old objects and their buffers: it sweeps at once, so that
# the buffers are freed before the program allocates the next ones.
# (Under GC.stress every allocation collects, lazily by design: nothing to check.)
test "major collections for want of slots or memory sweep at once" do
  next if GC.stress
  { malloc: :oldmalloc, newobj: :nofree }.each do |gc_by, major_by|
    majors = GC.stat(:major_gc_count)
    keep = []
    until GC.stat(:major_gc_count) > majors
      # Big buffers (malloc growth), or objects that grow old past their limit.
      gc_by == :malloc ? (keep[0] = "x" * 100_000) : keep << Object.new
    end
    info = GC.latest_gc_info
    assert_equal [gc_by, major_by], [info[:gc_by], info[:major_by]]
    assert_equal :none, info[:state]
    assert_equal true, info[:immediate_sweep]
  end
  collect_for_slots
  assert_nil GC.latest_gc_info(:major_by)
  assert_equal :sweeping, GC.latest_gc_info(:state)
end
