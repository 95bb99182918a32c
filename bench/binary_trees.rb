# Binary trees (Benchmarks Game): allocation and GC throughput.
class TreeNode
  def initialize(left, right)
    @left = left
    @right = right
  end

  def check
    if @left
      1 + @left.check + @right.check
    else
      1
    end
  end
end

def bottom_up_tree(depth)
  if depth == 0
    TreeNode.new(nil, nil)
  else
    depth -= 1
    TreeNode.new(bottom_up_tree(depth), bottom_up_tree(depth))
  end
end

max_depth = 16
min_depth = 4
stretch = max_depth + 1
puts "stretch tree of depth #{stretch}\t check: #{bottom_up_tree(stretch).check}"
long_lived = bottom_up_tree(max_depth)
depth = min_depth
while depth <= max_depth
  iterations = 2**(max_depth - depth + min_depth)
  check = 0
  i = 0
  while i < iterations
    check += bottom_up_tree(depth).check
    i += 1
  end
  puts "#{iterations}\t trees of depth #{depth}\t check: #{check}"
  depth += 2
end
puts "long lived tree of depth #{max_depth}\t check: #{long_lived.check}"
