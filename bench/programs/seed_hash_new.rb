# Seed 001: allocating Hashes (Hash.new, 5,000,000 of them, collected as they go).
i = 0
while i < 5_000_000
  Hash.new
  i += 1
end
puts i
