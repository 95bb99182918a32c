# Seed 001: a bare while loop counting to 100,000,000.
i = 0
while i < 100_000_000
  i += 1
end
puts i
