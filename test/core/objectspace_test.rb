require_relative "../assert"
require_relative "../support/process"

# Collection tests are written for a conservative collector: a stale word on this thread's
# stack may point at the slot a new object took and keep that one object alive. So the
# objects expected to die are made in a fiber that has finished (its stacks are no longer
# scanned), there are many of them, and the tests ask that most of them go.
DOOMED = 40

def in_finished_fiber(&blk)
  Fiber.new(&blk).resume
end

def finalizer_logging_to(log)
  proc { |id| log << id }
end

def most?(n) = n > DOOMED / 2

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
  ids = in_finished_fiber { Array.new(DOOMED) { o = Object.new; ObjectSpace.define_finalizer(o, fin); o.object_id } }
  GC.start
  assert most?(log.size), "only #{log.size} of #{DOOMED} finalized"
  assert_equal [], log - ids
  assert_equal log.uniq, log
end

test "an undefined finalizer is not called" do
  log = []
  fin = finalizer_logging_to(log)
  in_finished_fiber { DOOMED.times { o = Object.new; ObjectSpace.define_finalizer(o, fin); ObjectSpace.undefine_finalizer(o) }; nil }
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

test "dup and clone copy finalizers" do
  out, _err, status = Support.run_carmine(<<~RUBY)
    o = Object.new
    ObjectSpace.define_finalizer(o, proc { puts "fin" })
    o.dup
    o.clone
  RUBY
  assert_equal 0, status.exitstatus
  assert_equal "fin\nfin\nfin\n", out
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
  ids = in_finished_fiber { Array.new(DOOMED) { Object.new.object_id } }
  GC.start
  messages = ids.filter_map { |id| ObjectSpace._id2ref(id) && nil rescue $!.message }
  assert most?(messages.size), "only #{messages.size} of #{DOOMED} collected"
  assert_equal "\"#{ids.last}\" is recycled object", messages.last if messages.size == DOOMED
  assert messages.all? { |m| m.end_with?("is recycled object") }
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
  values = keys.map(&:upcase)
  keys.zip(values) { |k, v| m[k] = v }
  assert_equal keys, m.keys
  assert_equal values, m.values
end

test "WeakMap entries vanish with their key or their value" do
  m = ObjectSpace::WeakMap.new
  keep_key = Object.new
  keep_value = Object.new
  in_finished_fiber do
    DOOMED.times do |i|
      case i % 3
      when 0 then m[Object.new] = keep_value
      when 1 then m[keep_key.dup] = Object.new
      else m[Object.new] = Object.new
      end
    end
    nil
  end
  stay = Object.new
  m[stay] = 5
  stay2 = Object.new
  m[stay2] = keep_value
  GC.start
  assert most?(DOOMED + 2 - m.size), "#{m.size} entries left"
  assert_equal 5, m[stay]
  assert_same keep_value, m[stay2]
  assert_equal m.size, m.keys.size
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
    DOOMED.times do
      dead = Object.new
      m[dead] = [dead]
    end
    nil
  end
  GC.start
  size = m.inspect[/size=(\d+)/, 1].to_i
  assert most?(DOOMED + 1 - size), "#{size} entries left"
  assert_equal "value", m[k][1]
end
