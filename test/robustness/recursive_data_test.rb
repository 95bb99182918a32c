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
