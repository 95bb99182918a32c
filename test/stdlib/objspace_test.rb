require_relative "../assert"
require_relative "stdlib_path"
require "objspace"
require "json"

class ObjspaceTestFoo
  def make
    "made" + "here"
  end

  def in_block
    [1].map { [:in, :block] }.first
  end
end

test "memsize_of counts the slot and the buffers an object owns" do
  assert_equal 0, ObjectSpace.memsize_of(nil)
  assert_equal 0, ObjectSpace.memsize_of(12)
  assert_equal 0, ObjectSpace.memsize_of(:sym)
  small = ObjectSpace.memsize_of("")
  assert small > 0
  assert ObjectSpace.memsize_of("x" * 10_000) >= small + 10_000
  assert ObjectSpace.memsize_of(Array.new(1000, 1)) >= ObjectSpace.memsize_of([]) + 8000
  wide = Class.new { def initialize; 20.times { |i| instance_variable_set("@v#{i}", i) }; end }
  assert ObjectSpace.memsize_of(wide.new) > ObjectSpace.memsize_of(Object.new)
end

test "memsize_of_all grows with new instances and sums memsize_of" do
  klass = Class.new
  assert_equal 0, ObjectSpace.memsize_of_all(klass)
  objs = Array.new(10) { klass.new }
  assert_equal objs.sum { |o| ObjectSpace.memsize_of(o) }, ObjectSpace.memsize_of_all(klass)
  assert ObjectSpace.memsize_of_all > ObjectSpace.memsize_of_all(klass)
  assert_raise(TypeError) { ObjectSpace.memsize_of_all(1) }
end

test "count_objects_size, count_tdata_objects, count_imemo_objects, count_nodes" do
  sizes = ObjectSpace.count_objects_size
  assert sizes[:T_STRING] > 0
  assert_equal sizes.reject { |k, _| k == :TOTAL }.values.sum, sizes[:TOTAL]
  h = { stale: 5 }
  assert_same h, ObjectSpace.count_objects_size(h)
  assert_equal 0, h[:stale]
  t = Time.now
  tdata = ObjectSpace.count_tdata_objects
  assert tdata[Time] >= 1
  imemo = ObjectSpace.count_imemo_objects
  assert imemo[:imemo_iseq] > 0
  assert_equal({}, ObjectSpace.count_nodes)
  assert_raise(TypeError) { ObjectSpace.count_objects_size(1) }
  t
end

test "reachable_objects_from follows what the collector marks" do
  assert_nil ObjectSpace.reachable_objects_from(nil)
  assert_nil ObjectSpace.reachable_objects_from(1)
  a = "a"
  o = Object.new
  o.instance_variable_set(:@x, a)
  assert_equal [Object, a], ObjectSpace.reachable_objects_from(o)
  ary = [a, a, o]
  assert_equal [Array, a, o], ObjectSpace.reachable_objects_from(ary)
  h = { a => o }
  assert_equal [Hash, a, o], ObjectSpace.reachable_objects_from(h)
  ary.shift
  ary.shift
  assert_equal [Array, o], ObjectSpace.reachable_objects_from(ary)
  pr = proc { a }
  internal = ObjectSpace.reachable_objects_from(pr).grep(ObjectSpace::InternalObjectWrapper)
  assert !internal.empty?
  assert_equal :T_IMEMO, internal.first.type
  assert_kind_of Integer, internal.first.internal_object_id
  assert_match(/\A#<InternalObject:0x\h+ T_IMEMO>\z/, internal.first.inspect)
  # Calling it twice gives the same answer: gathering leaves no mark bits behind.
  assert_equal ObjectSpace.reachable_objects_from(ary), ObjectSpace.reachable_objects_from(ary)
  GC.start
  assert_equal [Array, o], ObjectSpace.reachable_objects_from(ary)
end

test "reachable_objects_from_root lists the roots by category" do
  $objspace_test_global = "held by a global"
  roots = ObjectSpace.reachable_objects_from_root
  assert_equal %w[vm thread machine_context], roots.keys
  assert roots["vm"].include?(Object)
  assert roots["vm"].include?($objspace_test_global)
  assert roots.values.all? { |list| list.is_a?(Array) }
end

test "trace_object_allocations records file, line, method and generation" do
  foo = ObjspaceTestFoo.new
  made = blocked = plain = nil
  ObjectSpace.trace_object_allocations do
    made = foo.make
    blocked = foo.in_block
    plain = Object.new
  end
  assert_equal __FILE__, ObjectSpace.allocation_sourcefile(plain)
  assert_equal __LINE__ - 3, ObjectSpace.allocation_sourceline(plain)
  assert_nil ObjectSpace.allocation_class_path(plain)
  assert_nil ObjectSpace.allocation_method_id(plain)
  assert_kind_of Integer, ObjectSpace.allocation_generation(plain)
  assert_equal 8, ObjectSpace.allocation_sourceline(made)
  assert_equal 12, ObjectSpace.allocation_sourceline(blocked)
  assert_equal __FILE__, ObjectSpace.allocation_sourcefile(blocked)
  outside = Object.new
  assert_nil ObjectSpace.allocation_sourcefile(outside)
  assert_nil ObjectSpace.allocation_sourceline(nil)
end

test "tracing nests, stops, clears, and sites survive a collection" do
  ObjectSpace.trace_object_allocations_start
  ObjectSpace.trace_object_allocations_start
  a = Object.new
  ObjectSpace.trace_object_allocations_stop
  b = Object.new
  ObjectSpace.trace_object_allocations_stop
  ObjectSpace.trace_object_allocations_stop
  c = Object.new
  assert_equal __LINE__ - 6, ObjectSpace.allocation_sourceline(a)
  assert_equal __LINE__ - 5, ObjectSpace.allocation_sourceline(b)
  assert_nil ObjectSpace.allocation_sourceline(c)
  gen = ObjectSpace.allocation_generation(a)
  GC.start
  assert_equal __LINE__ - 11, ObjectSpace.allocation_sourceline(a)
  assert_equal gen, ObjectSpace.allocation_generation(a)
  ObjectSpace.trace_object_allocations_clear
  assert_nil ObjectSpace.allocation_sourceline(a)
  assert_raise(LocalJumpError) { ObjectSpace.trace_object_allocations }
end

test "a freed object's site is not reported for the next object in its slot" do
  ObjectSpace.trace_object_allocations { 2000.times { Object.new } }
  GC.start
  fresh = Array.new(2000) { Object.new }
  assert fresh.none? { |o| ObjectSpace.allocation_sourcefile(o) }
end

test "dump writes CRuby-shaped JSON" do
  s = "ab\"c\n"
  d = JSON.parse(ObjectSpace.dump(s))
  assert_equal "STRING", d["type"]
  assert_equal s, d["value"]
  assert_equal 5, d["bytesize"]
  assert_equal "UTF-8", d["encoding"]
  assert_equal JSON.parse(ObjectSpace.dump(String))["address"], d["class"]
  assert_equal ObjectSpace.memsize_of(s), d["memsize"]
  o = Object.new
  ary = [o, "x".freeze]
  d = JSON.parse(ObjectSpace.dump(ary))
  assert_equal "ARRAY", d["type"]
  assert_equal 2, d["length"]
  assert_equal 2, d["references"].size
  d = JSON.parse(ObjectSpace.dump(ObjspaceTestFoo))
  assert_equal "CLASS", d["type"]
  assert_equal "ObjspaceTestFoo", d["name"]
  assert_equal "null", ObjectSpace.dump(nil)
  assert_equal "7", ObjectSpace.dump(7)
  assert_equal({ "type" => "SYMBOL", "value" => "sy" }, JSON.parse(ObjectSpace.dump(:sy)))
  traced = nil
  ObjectSpace.trace_object_allocations { traced = +"t" }
  d = JSON.parse(ObjectSpace.dump(traced))
  assert_equal __FILE__, d["file"]
  assert_equal __LINE__ - 3, d["line"]
  assert_raise(ArgumentError) { ObjectSpace.dump(1, output: :nowhere) }
end

test "dump_all writes the roots and every object, one JSON document a line" do
  marker = "objspace-dump-all-marker"
  out = ObjectSpace.dump_all(output: :string)
  lines = out.lines.map { |l| JSON.parse(l) }
  assert_equal %w[vm thread machine_context], lines.take_while { |l| l["type"] == "ROOT" }.map { |l| l["root"] }
  assert lines.any? { |l| l["type"] == "STRING" && l["value"] == marker }
  assert lines.any? { |l| l["type"] == "CLASS" && l["name"] == "ObjspaceTestFoo" }
  since = nil
  ObjectSpace.trace_object_allocations do
    since = GC.count
    @recent = "objspace-recent-marker"
  end
  recent = ObjectSpace.dump_all(output: :string, since: since).lines.map { |l| JSON.parse(l) }
  assert recent.any? { |l| l["value"] == "objspace-recent-marker" }
  assert recent.none? { |l| l["value"] == marker }
end
