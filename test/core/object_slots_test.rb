require_relative "../assert"

# Plain objects take a 40-byte slot when their class's instances have had 1 to 3 instance
# variables, a 64-byte one otherwise; an object that outgrows its slot keeps the rest in a
# separate block. None of this may be visible from Ruby.

class SlotPair
  def initialize(a, b) = (@a = a; @b = b)
  attr_accessor :a, :b
end

test "objects keep every instance variable past their slot's words" do
  SlotPair.new(0, 0)
  objs = Array.new(200) { |i| SlotPair.new(i, "s#{i}") }
  objs.each_with_index do |o, i|
    (1..12).each { |k| o.instance_variable_set(:"@x#{k}", "#{i}-#{k}") }
  end
  GC.start
  objs.each_with_index do |o, i|
    assert_equal i, o.a
    assert_equal "s#{i}", o.b
    assert_equal "#{i}-7", o.instance_variable_get(:@x7)
    assert_equal 14, o.instance_variables.size
  end
  o = objs[3]
  o.b = [1, 2]
  o.instance_variable_set(:@x1, :changed)
  assert_equal [1, 2], o.b
  assert_equal :changed, o.instance_variable_get(:@x1)
end

test "instances made after the class grew keep their variables in order" do
  k = Class.new { def initialize(n) = n.times { |i| instance_variable_set(:"@v#{i}", i * 10) } }
  objs = (0..9).map { |n| k.new(n) }
  GC.start
  objs.each_with_index do |o, n|
    assert_equal (0...n).map { |i| :"@v#{i}" }, o.instance_variables
    assert_equal (0...n).map { |i| i * 10 }, o.instance_variables.map { |v| o.instance_variable_get(v) }
  end
end

test "dup, remove_instance_variable and Marshal see all variables" do
  o = SlotPair.new(1, 2)
  o.instance_variable_set(:@c, "three")
  o.instance_variable_set(:@d, [4])
  d = o.dup
  assert_equal %i[@a @b @c @d], d.instance_variables
  assert_equal [4], o.remove_instance_variable(:@d)
  assert_equal %i[@a @b @c], o.instance_variables
  m = Marshal.load(Marshal.dump(d))
  assert_equal "three", m.instance_variable_get(:@c)
  assert_equal [4], m.instance_variable_get(:@d)
end

test "pages emptied of one kind of object are reused for another" do
  3.times do
    objs = Array.new(50_000) { |i| SlotPair.new(i, nil) }
    assert_equal 49_999, objs.last.a
    objs = nil
    strs = Array.new(50_000) { |i| "string number #{i}" }
    assert_equal "string number 49999", strs.last
    strs = nil
    arrays = Array.new(30_000) { |i| [i, i, i, i] }
    assert_equal 4 * 29_999, arrays.last.sum
    GC.start
  end
end
