# Seed 001: 100_000_000.times {} (yielding from a builtin to an empty block).
100_000_000.times {}
puts :done
