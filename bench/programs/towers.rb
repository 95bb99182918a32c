# Towers of Hanoi with objects: disks are objects with a size, pegs are objects holding a
# stack of disks that check the ordering rule on every move.
class Disk
  attr_reader :size
  def initialize(size) = (@size = size)
end

class Peg
  attr_reader :moves
  def initialize
    @disks = []
    @moves = 0
  end

  def push(disk)
    top = @disks.last
    raise "cannot put #{disk.size} on #{top.size}" if top && top.size <= disk.size
    @moves += 1
    @disks.push(disk)
  end

  def pop
    raise "empty peg" if @disks.empty?
    @disks.pop
  end

  def height = @disks.size
end

class Towers
  def initialize(n)
    @pegs = Array.new(3) { Peg.new }
    n.downto(1) { |i| @pegs[0].push(Disk.new(i)) }
    @n = n
  end

  def move_disk(from, to)
    @pegs[to].push(@pegs[from].pop)
  end

  def move(n, from, to)
    if n == 1
      move_disk(from, to)
    else
      other = 3 - from - to
      move(n - 1, from, other)
      move_disk(from, to)
      move(n - 1, other, to)
    end
  end

  def solve
    move(@n, 0, 1)
    @pegs.map(&:height) + [@pegs.inject(0) { |s, p| s + p.moves }]
  end
end

r = nil
20.times { r = Towers.new(18).solve }
puts r.inspect
