require_relative "../assert"

# Self-referencing and deeply nested data, and builtins whose Ruby callbacks answer the
# wrong type, end as Ruby exceptions or CRuby's results. Found by the panic-freedom check.

test "File.join of a recursive array" do
  a = ["x"]
  a << a
  assert_raise(ArgumentError, "recursive array") { File.join(a) }
  assert_equal "a/b/c", File.join("a", ["b", ["c"]])
end

test "File.join of deeply nested arrays ends in SystemStackError or a path" do
  deep = "x"
  10_000.times { deep = [deep] }
  r = begin
    File.join(deep)
  rescue SystemStackError => e
    e.class
  end
  assert [SystemStackError, "x"].include?(r), r.inspect
end

test "inspect returning a non-String falls back to to_s, then the default" do
  o = Object.new
  def o.inspect = 42
  assert_equal "[42]", [o].inspect
  assert_equal "{a: 42}", { a: o }.inspect
  n = Object.new
  def n.inspect = nil
  assert_equal "[]", [n].inspect
  b = Object.new
  def b.inspect = BasicObject.new
  assert_raise(NoMethodError) { [b].inspect }
  c = Object.new
  def c.inspect = Class.new { def to_s = 7 }.new
  assert_match(/\A\[#<#<Class:0x\h+>:0x\h+>\]\z/, [c].inspect)
end

# Rust code walking nested data meets the native stack limit through the recursion guard:
# on a fiber's small stack, every walk ends in SystemStackError (join used to overflow the
# stack: a segfault).
test "walks of deeply nested data on a fiber's stack end in SystemStackError" do
  deep = []
  50_000.times { deep = [deep] }
  deep_hash = {}
  50_000.times { deep_hash = { k: deep_hash } }
  walks = [
    -> { deep.join(",") }, -> { deep.inspect }, -> { deep.hash }, -> { deep == [deep] },
    -> { deep <=> [deep] }, -> { deep_hash.inspect }, -> { deep_hash.hash }, -> { deep_hash == { k: deep_hash } },
  ]
  walks.each do |w|
    r = Fiber.new do
      w.call
      :no_error
    rescue SystemStackError => e
      e.message
    end.resume
    assert_equal "stack level too deep", r
  end
end
