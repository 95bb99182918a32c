# Integer#times with an empty block: the cost of yielding from a builtin.
30_000_000.times {}
puts :done
