# Seed 001's allocation benchmark: 1,000,000 Hash.new with GC disabled.
GC.disable
i = 0
while i < 1_000_000
  Hash.new
  i += 1
end
puts i
