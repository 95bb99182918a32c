# Attribute readers and writers (attr_reader/attr_writer/attr_accessor) and plain
# getter/setter methods in a tight loop.
class Point
  attr_accessor :x, :y
  attr_reader :moves
  attr_writer :label

  def initialize(x, y)
    @x = x
    @y = y
    @moves = 0
    @label = nil
  end

  def z = @x + @y
  def set_z(v) = (@x = v - @y)
  def moved! = (@moves += 1)
end

pts = Array.new(10) { |i| Point.new(i, i * 2) }
sum = 0
i = 0
while i < 5_000_000
  pt = pts[i % 10]
  pt.x = pt.x + 1
  pt.y = pt.y - 1
  pt.label = i
  sum += pt.z + pt.moves
  pt.set_z(pt.z + 1)
  pt.moved!
  i += 1
end
puts sum
