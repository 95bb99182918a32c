# Fannkuch-redux: permutations generated in place, prefix reversals counted (Array indexing
# and small-integer loops).
def fannkuch(n)
  perm1 = (0...n).to_a
  count = Array.new(n, 0)
  max_flips = 0
  checksum = 0
  perm_count = 0
  r = n
  while true
    while r != 1
      count[r - 1] = r
      r -= 1
    end
    perm = perm1.dup
    flips = 0
    k = perm[0]
    while k != 0
      i = 0
      j = k
      while i < j
        perm[i], perm[j] = perm[j], perm[i]
        i += 1
        j -= 1
      end
      flips += 1
      k = perm[0]
    end
    max_flips = flips if flips > max_flips
    checksum += perm_count % 2 == 0 ? flips : -flips
    while true
      return [checksum, max_flips] if r == n
      p0 = perm1[0]
      i = 0
      while i < r
        perm1[i] = perm1[i + 1]
        i += 1
      end
      perm1[r] = p0
      count[r] -= 1
      break if count[r] > 0
      r += 1
    end
    perm_count += 1
  end
end

checksum, flips = fannkuch(9)
puts checksum
puts "Pfannkuchen(9) = #{flips}"
