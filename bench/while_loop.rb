# A bare while loop: the dispatch loop's cost per instruction.
i = 0
while i < 100_000_000
  i += 1
end
puts i
