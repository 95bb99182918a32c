# A red-black tree (insertion with rotations and recoloring, lookup, in-order traversal)
# keyed by Integers, with node objects and parent links.
class RBNode
  attr_accessor :key, :value, :left, :right, :parent, :red
  def initialize(key, value, parent)
    @key = key
    @value = value
    @parent = parent
    @left = nil
    @right = nil
    @red = true
  end
end

class RBTree
  attr_reader :size
  def initialize
    @root = nil
    @size = 0
  end

  def [](key)
    n = @root
    while n
      c = key <=> n.key
      return n.value if c == 0
      n = c < 0 ? n.left : n.right
    end
    nil
  end

  def []=(key, value)
    parent = nil
    n = @root
    while n
      c = key <=> n.key
      if c == 0
        n.value = value
        return
      end
      parent = n
      n = c < 0 ? n.left : n.right
    end
    node = RBNode.new(key, value, parent)
    if parent.nil?
      @root = node
    elsif key < parent.key
      parent.left = node
    else
      parent.right = node
    end
    @size += 1
    fix_after_insert(node)
  end

  def each(&block)
    stack = []
    n = @root
    while n || !stack.empty?
      while n
        stack << n
        n = n.left
      end
      n = stack.pop
      yield n.key, n.value
      n = n.right
    end
  end

  def depth(n = @root)
    return 0 unless n
    l = depth(n.left)
    r = depth(n.right)
    1 + (l > r ? l : r)
  end

  private

  def fix_after_insert(x)
    while (p = x.parent) && p.red
      g = p.parent
      if p.equal?(g.left)
        u = g.right
        if u && u.red
          p.red = false
          u.red = false
          g.red = true
          x = g
        else
          if x.equal?(p.right)
            x = p
            rotate_left(x)
            p = x.parent
          end
          p.red = false
          g.red = true
          rotate_right(g)
        end
      else
        u = g.left
        if u && u.red
          p.red = false
          u.red = false
          g.red = true
          x = g
        else
          if x.equal?(p.left)
            x = p
            rotate_right(x)
            p = x.parent
          end
          p.red = false
          g.red = true
          rotate_left(g)
        end
      end
    end
    @root.red = false
  end

  def rotate_left(x)
    y = x.right
    x.right = y.left
    y.left.parent = x if y.left
    replace_child(x, y)
    y.left = x
    x.parent = y
  end

  def rotate_right(x)
    y = x.left
    x.left = y.right
    y.right.parent = x if y.right
    replace_child(x, y)
    y.right = x
    x.parent = y
  end

  def replace_child(old, new)
    p = old.parent
    new.parent = p
    if p.nil?
      @root = new
    elsif old.equal?(p.left)
      p.left = new
    else
      p.right = new
    end
  end
end

total = 0
2.times do |round|
  t = RBTree.new
  x = round + 1
  100_000.times do |i|
    x = (x * 1_664_525 + 1_013_904_223) & 0xffffffff
    t[x % 1_000_000] = i
  end
  hits = 0
  200_000.times { |i| hits += 1 if t[i * 5] }
  prev = -1
  ordered = true
  t.each { |k, _| ordered = false if k <= prev; prev = k }
  total += t.size + hits + t.depth + (ordered ? 1 : 0)
end
puts total
