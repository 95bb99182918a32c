# Loop recognition in a control-flow graph with Havlak's algorithm (depth-first numbering,
# back-edge classification, union-find collapsing of loop bodies, a loop nesting forest),
# run over a generated graph of nested loops, diamonds and straight-line chains.
class BasicBlock
  attr_reader :name, :in_edges, :out_edges
  def initialize(name)
    @name = name
    @in_edges = []
    @out_edges = []
  end
end

class Cfg
  attr_reader :blocks
  def initialize = (@blocks = [])

  def block(n)
    @blocks[n] ||= BasicBlock.new(n)
  end

  def edge(from, to)
    a = block(from)
    b = block(to)
    a.out_edges << b
    b.in_edges << a
  end
end

class Loop
  attr_accessor :parent, :header, :depth
  attr_reader :blocks, :children
  def initialize(header, reducible)
    @header = header
    @reducible = reducible
    @blocks = []
    @children = []
    @parent = nil
    @depth = 0
  end
end

# Union-find over depth-first numbers with path compression.
class UnionFind
  def initialize(n)
    @parent = Array.new(n) { |i| i }
  end

  def find(x)
    root = x
    root = @parent[root] while @parent[root] != root
    while @parent[x] != root
      nxt = @parent[x]
      @parent[x] = root
      x = nxt
    end
    root
  end

  def union(x, into) = (@parent[x] = into)
end

class Havlak
  UNVISITED = -1

  def initialize(cfg)
    @cfg = cfg
  end

  def find_loops
    blocks = @cfg.blocks
    n = blocks.size
    number = Array.new(n, UNVISITED)   # block name -> dfs number
    node = Array.new(n)                # dfs number -> block
    last = Array.new(n, 0)
    count = dfs(blocks[0], number, node, last)

    back_preds = Array.new(count) { [] }
    non_back_preds = Array.new(count) { [] }
    count.times do |w|
      node[w].in_edges.each do |pred|
        v = number[pred.name]
        next if v == UNVISITED
        if w <= v && v <= last[w]
          back_preds[w] << v
        else
          non_back_preds[w] << v
        end
      end
    end

    uf = UnionFind.new(count)
    loop_of = Array.new(count)
    loops = []
    (count - 1).downto(0) do |w|
      pool = []
      self_loop = false
      back_preds[w].each do |v|
        if v == w
          self_loop = true
        else
          pool << uf.find(v)
        end
      end
      reducible = true
      work = pool.dup
      until work.empty?
        x = work.pop
        non_back_preds[x].each do |y|
          yd = uf.find(y)
          if !(w <= yd && yd <= last[w])
            reducible = false
            non_back_preds[w] << yd unless non_back_preds[w].include?(yd)
          elsif yd != w && !pool.include?(yd)
            pool << yd
            work << yd
          end
        end
      end
      next if pool.empty? && !self_loop
      lp = Loop.new(node[w], reducible)
      lp.blocks << node[w]
      pool.each do |x|
        uf.union(x, w)
        if (inner = loop_of[x])
          inner.parent = lp
          lp.children << inner
        else
          lp.blocks << node[x]
        end
      end
      loop_of[w] = lp
      loops << lp
    end
    loops.each { |lp| compute_depth(lp) unless lp.parent }
    loops
  end

  private

  # Iterative depth-first numbering; returns the number of reachable blocks.
  def dfs(start, number, node, last)
    current = 0
    stack = [[start, 0]]
    number[start.name] = current
    node[current] = start
    current += 1
    until stack.empty?
      b, i = stack.last
      if i < b.out_edges.size
        stack.last[1] = i + 1
        t = b.out_edges[i]
        if number[t.name] == UNVISITED
          number[t.name] = current
          node[current] = t
          current += 1
          stack << [t, 0]
        end
      else
        last[number[b.name]] = current - 1
        stack.pop
      end
    end
    current
  end

  def compute_depth(lp, depth = 0)
    lp.depth = depth
    lp.children.each { |c| compute_depth(c, depth + 1) }
  end
end

# Graph generator: returns the name of the block where the built piece ends.
class Builder
  def initialize(cfg)
    @cfg = cfg
    @next = 1
  end

  def fresh = (@next += 1) - 1

  def straight(from, n)
    n.times { t = fresh; @cfg.edge(from, t); from = t }
    from
  end

  def diamond(from)
    a = fresh
    b = fresh
    join = fresh
    @cfg.edge(from, a)
    @cfg.edge(from, b)
    @cfg.edge(a, join)
    @cfg.edge(b, join)
    join
  end

  # A loop whose body is `body` applied to the header; the exit follows the latch.
  def loop_around(from)
    head = fresh
    @cfg.edge(from, head)
    tail = yield head
    @cfg.edge(tail, head)
    exit_block = fresh
    @cfg.edge(tail, exit_block)
    exit_block
  end

  def nest(from, depth)
    return diamond(straight(from, 2)) if depth == 0
    loop_around(from) do |h|
      x = nest(h, depth - 1)
      x = diamond(x)
      nest(x, depth - 1)
    end
  end
end

cfg = Cfg.new
cfg.block(0)
b = Builder.new(cfg)
last = 0
40.times { last = b.nest(last, 6) }
cfg.edge(last, b.fresh)
result = nil
30.times { result = Havlak.new(cfg).find_loops }
puts cfg.blocks.size
puts result.size
puts result.map(&:depth).max
puts result.inject(0) { |s, lp| s + lp.blocks.size }
