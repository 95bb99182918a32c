# N-queens by backtracking with boolean arrays for columns and diagonals, counting all
# solutions.
class Queens
  def initialize(n)
    @n = n
    @cols = Array.new(n, false)
    @diag1 = Array.new(2 * n, false)
    @diag2 = Array.new(2 * n, false)
  end

  def solve(row = 0)
    return 1 if row == @n
    count = 0
    col = 0
    while col < @n
      d1 = row + col
      d2 = row - col + @n
      if !@cols[col] && !@diag1[d1] && !@diag2[d2]
        @cols[col] = @diag1[d1] = @diag2[d2] = true
        count += solve(row + 1)
        @cols[col] = @diag1[d1] = @diag2[d2] = false
      end
      col += 1
    end
    count
  end
end

puts (6..12).map { |n| Queens.new(n).solve }.inspect
