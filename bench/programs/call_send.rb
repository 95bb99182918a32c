# Dynamic calls: send and public_send with Symbol names (constant and varying),
# respond_to?, and method_missing-based delegation.
class Calc
  def add(a, b) = a + b
  def sub(a, b) = a - b
  def mul(a, b) = a * b
  def neg(a) = -a
end

class Ghost
  def initialize(target) = (@target = target)

  def method_missing(name, *args)
    if name.to_s.start_with?("twice_")
      2 * @target.send(name.to_s.delete_prefix("twice_").to_sym, *args)
    else
      super
    end
  end

  def respond_to_missing?(name, include_private = false) = name.to_s.start_with?("twice_") || super
end

c = Calc.new
g = Ghost.new(c)
ops = %i[add sub mul]
sum = 0
i = 0
while i < 2_000_000
  sum += c.send(ops[i % 3], i, 3)
  sum += c.public_send(:add, i, 1)
  sum += c.neg(i) if c.respond_to?(:neg)
  sum += g.twice_add(i, 2) if i % 4 == 0
  i += 1
end
puts sum
