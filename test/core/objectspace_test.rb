require_relative "../assert"
require_relative "../support/process"

# Objects made inside a finished fiber are referenced by nothing the collector scans: its
# VM stack is reset and its native stack is no longer scanned, so after GC.start they are
# certainly gone (conservative scanning of this thread's stack never saw them).
def in_finished_fiber(&blk)
  Fiber.new(&blk).resume
end

def finalizer_logging_to(log)
  proc { |id| log << id }
end

class OSTestThing; end

test "each_object with a class yields its live instances and returns the count" do
  klass = Class.new
  a = klass.new
  b = klass.new
  seen = []
  n = ObjectSpace.each_object(klass) { |o| seen << o }
  assert_equal 2, n
  assert_equal [a, b].sort_by(&:object_id), seen.sort_by(&:object_id)
end

test "each_object without a block is an enumerator" do
  klass = Class.new
  x = klass.new
  e = ObjectSpace.each_object(klass)
  assert_kind_of Enumerator, e
  assert_equal [x], e.to_a
end

test "each_object finds classes, modules and singleton classes but no hidden metaclass" do
  m = Module.new
  o = Object.new
  s = o.singleton_class
  meta = Class.new.singleton_class
  mods = ObjectSpace.each_object(Module).to_a
  assert mods.include?(m)
  assert mods.include?(s)
  assert !mods.any? { |c| c.inspect.include?(meta.inspect) && !c.equal?(meta) }
end

test "each_object of a metaclass walks the class and its subclasses" do
  a = Class.new
  b = Class.new(a)
  c = Class.new(b)
  found = ObjectSpace.each_object(a.singleton_class).to_a
  assert_equal [a, b, c].sort_by(&:object_id), found.sort_by(&:object_id)
  assert b.is_a?(a.singleton_class)
end

test "each_object rejects a non-module" do
  assert_raise(TypeError) { ObjectSpace.each_object(3) {} }
end

test "count_objects counts slots by type" do
  h = ObjectSpace.count_objects
  assert h[:TOTAL] > 0
  assert h[:T_STRING] > 0
  assert h[:T_CLASS] > 0
  others = h.reject { |k, _| k == :TOTAL }.values.sum
  assert_equal h[:TOTAL], others
  mine = { T_STRING: -1, FOO: 7 }
  assert_same mine, ObjectSpace.count_objects(mine)
  assert_equal 0, mine[:FOO]
  assert_raise(TypeError) { ObjectSpace.count_objects(1) }
end

test "define_finalizer returns [0, callable] and keeps one of equal callables" do
  o = Object.new
  pr = proc { |id| }
  assert_equal [0, pr], ObjectSpace.define_finalizer(o, pr)
  r = ObjectSpace.define_finalizer(o, pr.dup)
  assert_same pr, r[1]
  blk = ObjectSpace.define_finalizer(o) { |id| }
  assert_kind_of Proc, blk[1]
  ObjectSpace.undefine_finalizer(o)
end

test "define_finalizer errors" do
  e = assert_raise(ArgumentError) { ObjectSpace.define_finalizer(Object.new, 3) }
  assert_equal "wrong type argument Integer (should be callable)", e.message
  e = assert_raise(ArgumentError) { ObjectSpace.define_finalizer(:sym) {} }
  assert_equal "cannot define finalizer for Symbol", e.message
  assert_raise(FrozenError) { ObjectSpace.define_finalizer(Object.new.freeze) {} }
  assert_raise(FrozenError) { ObjectSpace.undefine_finalizer(Object.new.freeze) }
end

test "a finalizer is called with the object id once the object is collected" do
  log = []
  fin = finalizer_logging_to(log)
  id = in_finished_fiber { o = Object.new; ObjectSpace.define_finalizer(o, fin); o.object_id }
  GC.start
  assert_equal [id], log
end

test "an undefined finalizer is not called" do
  log = []
  fin = finalizer_logging_to(log)
  in_finished_fiber { o = Object.new; ObjectSpace.define_finalizer(o, fin); ObjectSpace.undefine_finalizer(o); nil }
  GC.start
  assert_equal [], log
end

test "finalizers run at exit, with errors reported as warnings" do
  out, err, status = Support.run_carmine(<<~RUBY)
    o = +"x"
    ObjectSpace.define_finalizer(o, proc { |id| puts "fin \#{id == o.object_id rescue :gone}" })
    ObjectSpace.define_finalizer(Object.new) { raise "boom" }
    class Self; def initialize; ObjectSpace.define_finalizer(self) { }; end; end
    Self.new
    at_exit { puts "at_exit" }
  RUBY
  assert_equal 0, status.exitstatus
  assert_equal "at_exit\nfin true\n", out
  assert_match(/warning: finalizer references object to be finalized/, err)
  assert_match(/warning: Exception in finalizer/, err)
  assert_match(/boom \(RuntimeError\)/, err)
end

test "_id2ref finds live objects and immediates" do
  s = "an object"
  assert_same s, ObjectSpace._id2ref(s.object_id)
  [nil, true, false, 1, -42, :sym, 1.5, 1 << 40].each do |v|
    assert_equal v, ObjectSpace._id2ref(v.object_id)
  end
  assert_equal 8, nil.object_id
  assert_equal 20, true.object_id
  e = assert_raise(RangeError) { ObjectSpace._id2ref(1 << 60) }
  assert_equal '"1152921504606846976" is not id value', e.message
  assert_raise(TypeError) { ObjectSpace._id2ref(:a) }
end

test "_id2ref of a collected object says it was recycled" do
  id = in_finished_fiber { Object.new.object_id }
  GC.start
  e = assert_raise(RangeError) { ObjectSpace._id2ref(id) }
  assert_equal "\"#{id}\" is recycled object", e.message
end

test "WeakMap: identity keys, the 3.4 API" do
  m = ObjectSpace::WeakMap.new
  k1 = "a".upcase
  k2 = "a".upcase
  v = "x".dup
  assert_same v, (m[k1] = v)
  assert_same v, m[k1]
  assert_nil m[k2]
  assert m.key?(k1) && m.include?(k1) && m.member?(k1)
  assert !m.key?(k2)
  m[1] = :one
  m[:s] = nil
  assert m.key?(:s)
  assert_equal 3, m.size
  assert_equal 3, m.length
  assert_equal [1, :s, k1].map(&:object_id).sort, m.keys.map(&:object_id).sort
  pairs = []
  m.each { |k, val| pairs << [k, val] }
  assert_equal 3, pairs.size
  keys = []
  m.each_key { |k| keys << k }
  assert_equal 3, keys.size
  values = []
  m.each_value { |val| values << val }
  assert_equal [nil, :one, v].map(&:object_id).sort, values.map(&:object_id).sort
  assert_equal :one, m.delete(1)
  assert_equal :missing, m.delete(2) { |k| k == 2 ? :missing : nil }
  assert_nil m.delete(2)
  assert_match(/\A#<ObjectSpace::WeakMap:0x\h+: /, m.inspect)
  assert ObjectSpace::WeakMap.include?(Enumerable)
  assert_raise(LocalJumpError) { m.each }
  empty = ObjectSpace::WeakMap.new
  assert_same empty, empty.each
end

test "WeakMap iterates in insertion order" do
  m = ObjectSpace::WeakMap.new
  keys = %w[a b c d].map(&:dup)
  keys.each { |k| m[k] = k.upcase }
  assert_equal keys, m.keys
  assert_equal %w[A B C D], m.values
end

test "WeakMap entries vanish with their key or their value" do
  m = ObjectSpace::WeakMap.new
  keep_key = Object.new
  keep_value = Object.new
  in_finished_fiber do
    m[Object.new] = keep_value
    m[keep_key] = Object.new
    m[Object.new] = Object.new
    nil
  end
  stay = Object.new
  m[stay] = 5
  stay2 = Object.new
  m[stay2] = keep_value
  GC.start
  assert_equal 2, m.size
  assert_equal 5, m[stay]
  assert_same keep_value, m[stay2]
  assert !m.key?(keep_key)
end

test "WeakKeyMap: eql? keys, the 3.3 API" do
  m = ObjectSpace::WeakKeyMap.new
  k = "foo".upcase
  v = Object.new
  assert_same v, (m[k] = v)
  assert_same v, m["FOO"]
  assert_same k, m.getkey("FOO")
  assert m.key?("FOO")
  assert !m.key?("BAR")
  assert_nil m[1]
  assert_equal false, m.key?(:a)
  e = assert_raise(ArgumentError) { m[1] = 2 }
  assert_equal "WeakKeyMap keys must be garbage collectable", e.message
  assert_raise(NoMethodError) { m[BasicObject.new] = 1 }
  assert_match(/\A#<ObjectSpace::WeakKeyMap:0x\h+ size=1>\z/, m.inspect)
  assert_same v, m.delete("FOO")
  assert_equal :none, m.delete("FOO") { :none }
  m[k] = 1
  assert_same m, m.clear
  assert !m.key?(k)
end

test "WeakKeyMap values live as long as their keys, even if they refer to them" do
  m = ObjectSpace::WeakKeyMap.new
  k = Object.new
  m[k] = [k, "value"]
  in_finished_fiber do
    dead = Object.new
    m[dead] = [dead]
    nil
  end
  GC.start
  assert_match(/size=1>\z/, m.inspect)
  assert_equal "value", m[k][1]
end
