# Binary trees: allocate and walk many short-lived complete trees next to one long-lived
# tree (GC throughput with a live heap).
class TreeNode
  attr_reader :left, :right
  def initialize(left, right)
    @left = left
    @right = right
  end

  def check
    @left ? 1 + @left.check + @right.check : 1
  end
end

def bottom_up(depth)
  depth == 0 ? TreeNode.new(nil, nil) : TreeNode.new(bottom_up(depth - 1), bottom_up(depth - 1))
end

max_depth = 16
min_depth = 4
puts "stretch #{bottom_up(max_depth + 1).check}"
long_lived = bottom_up(max_depth)
min_depth.step(max_depth, 2) do |d|
  iterations = 1 << (max_depth - d + min_depth)
  check = 0
  iterations.times { check += bottom_up(d).check }
  puts "#{iterations} trees of depth #{d} check: #{check}"
end
puts "long lived: #{long_lived.check}"
