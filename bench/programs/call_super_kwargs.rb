# super chains through three levels (implicit and explicit arguments, with modules in the
# chain) and keyword arguments (required, optional, **rest, passed on with **).
module Tracing
  def area(scale: 1) = super + 0
end

class Shape
  def initialize(name, sides: 0) = (@name, @sides = name, sides)
  def area(scale: 1) = scale
  def describe(prefix, sep: ":", **opts) = prefix.size + sep.size + opts.size + @sides
end

class Rect < Shape
  include Tracing
  def initialize(w, h) = (super("rect", sides: 4); @w, @h = w, h)
  def area(scale: 1) = super * @w * @h
  def describe(prefix, **opts) = super(prefix, sep: "=", **opts) + 1
end

class Square < Rect
  def initialize(s) = super(s, s)
  def area(scale: 1) = super(scale: scale) + 1
  def describe(prefix, **) = super
end

shapes = [Rect.new(2, 3), Square.new(4)]
sum = 0
i = 0
while i < 800_000
  s = shapes[i & 1]
  sum += s.area + s.area(scale: 2)
  sum += s.describe("p", extra: 1)
  sum += Square.new(i & 3).area(scale: 1) if i % 8 == 0
  i += 1
end
puts sum
