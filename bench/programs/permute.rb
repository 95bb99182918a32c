# Permutations: all orderings of an n-element array generated recursively in place by
# swapping, counted and checksummed (the Stanford "Perm" test's shape).
class Permuter
  attr_reader :count, :check
  def initialize(n)
    @a = (1..n).to_a
    @count = 0
    @check = 0
  end

  def swap(i, j)
    t = @a[i]
    @a[i] = @a[j]
    @a[j] = t
  end

  def permute(n)
    @count += 1
    @check = (@check + @a[0] * n) % 1_000_003
    return if n == 1
    permute(n - 1)
    k = n - 1
    while k > 0
      swap(n - 1, k - 1)
      permute(n - 1)
      swap(n - 1, k - 1)
      k -= 1
    end
  end
end

total = 0
1.times do
  p = Permuter.new(10)
  p.permute(10)
  total += p.count + p.check
end
puts total
