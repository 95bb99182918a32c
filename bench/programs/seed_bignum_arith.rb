# Seed 001: Integer#** and * on big numbers (multiplication of 10^5-10^6-bit operands).
a = 3**200_000
b = 7**150_000
c = nil
300.times { c = a * b }
d = (a + 1)**3
puts c.bit_length
puts d.bit_length
puts (c % 1_000_000_007)
