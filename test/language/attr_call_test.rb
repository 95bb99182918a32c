# Attribute readers and writers called through a call site's cache (the dispatch loop reads
# and writes the instance variable itself when the cache holds the receiver's layout).
require_relative "../assert"

class AttrPoint
  attr_accessor :x, :y
  attr_writer :secret
  def initialize(x, y)
    @x = x
    @y = y
  end
  def peek = @secret
  def bump! = (self.x = x + 1)
  private attr_accessor :hidden
  def set_hidden(v) = (self.hidden = v; hidden)
end

class AttrArray < Array
  attr_accessor :tag
end

test "readers and writers, repeated at one call site" do
  pts = [AttrPoint.new(1, 2), AttrPoint.new(3, 4)]
  sum = 0
  100.times do |i|
    pt = pts[i % 2]
    pt.x = pt.x + 1
    sum += pt.y
  end
  assert_equal [51, 53], pts.map(&:x)
  assert_equal 300, sum
end

test "an unset instance variable reads as nil; the writer returns its argument" do
  pt = AttrPoint.allocate
  assert_nil pt.x
  assert_equal 5, (pt.x = 5)
  assert_equal 7, pt.send(:x=, 7)
  pt.secret = :s
  assert_equal :s, pt.peek
end

test "frozen receivers raise FrozenError from the writer" do
  pt = AttrPoint.new(1, 2)
  3.times { pt.x = 9 }
  pt.freeze
  e = assert_raise(FrozenError) { pt.x = 10 }
  assert_match(/can't modify frozen AttrPoint/, e.message)
  assert_equal 9, pt.x
end

test "private attributes through self, and NoMethodError from outside" do
  pt = AttrPoint.new(1, 2)
  assert_equal 4, pt.set_hidden(4)
  assert_raise(NoMethodError) { pt.hidden }
  assert_raise(NoMethodError) { pt.hidden = 1 }
  pt.bump!
  assert_equal 2, pt.x
end

test "receivers that are not plain objects" do
  a = AttrArray.new([1, 2])
  3.times { |i| a.tag = i }
  assert_equal 2, a.tag
  s = Struct.new(:m) { attr_accessor :extra }.new(1)
  s.extra = :e
  assert_equal :e, s.extra
end

test "redefining an attribute as a method takes effect at the same call site" do
  k = Class.new { attr_accessor :v }
  o = k.new
  read = -> { o.v }
  o.v = 1
  assert_equal 1, read.call
  k.class_eval { def v = :method }
  assert_equal :method, read.call
  k.class_eval { attr_reader :v }
  assert_equal 1, read.call
end

test "wrong argument counts" do
  pt = AttrPoint.new(1, 2)
  e = assert_raise(ArgumentError) { pt.x(1) }
  assert_equal "wrong number of arguments (given 1, expected 0)", e.message
  e = assert_raise(ArgumentError) { pt.send(:x=) }
  assert_equal "wrong number of arguments (given 0, expected 1)", e.message
end
