# Seed 001: Bignum#to_s of a 100,000-digit number (and parsing it back).
n = 7**118_000
s = nil
200.times { s = n.to_s }
puts s.size
puts Integer(s) == n
