# Sieve of Eratosthenes over Arrays of booleans of decreasing sizes.
def nsieve(m)
  flags = Array.new(m + 1, true)
  count = 0
  i = 2
  while i <= m
    if flags[i]
      k = i + i
      while k <= m
        flags[k] = false
        k += i
      end
      count += 1
    end
    i += 1
  end
  count
end

3.times do |i|
  m = (1 << (9 - i)) * 10_000
  puts "Primes up to #{m}: #{nsieve(m)}"
end
