# Hashes with String keys: word frequencies over generated text, lookups of present and
# absent keys, key deletion and re-insertion, iteration.
syllables = %w[ka lo mi ne ru so ta vi wu xe ya zo]
x = 11
words = Array.new(400_000) do
  w = String.new
  (2 + (x = (x * 48_271) % 2_147_483_647) % 3).times { w << syllables[(x = (x * 48_271) % 2_147_483_647) % syllables.size] }
  w
end
freq = Hash.new(0)
3.times { words.each { |w| freq[w] += 1 } }
hits = 0
words.each { |w| hits += 1 if freq.key?(w + "x") }
words.each_slice(3) { |a, _, _| freq.delete(a) }
words.each { |w| freq[w] ||= 1 }
sum = 0
freq.each { |k, v| sum += k.size * v }
puts [freq.size, hits, sum].inspect
