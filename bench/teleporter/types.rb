# The objects the Teleporter seed measures (figs. 8-11), by the names the tables print.
TYPES = [
  ["Fixnum", 12345],
  ["Float", 2.5],
  ["Bignum", 2**80 + 1],
  ["Complex", Complex(1, 2)],
  ["Rational", Rational(1, 3)],
  ["String (100 B)", "x" * 100],
  ["Array of 1,000 Fixnums", (1..1000).to_a],
  ["Array of 1,000 Floats", (1..1000).map { |i| i * 1.5 }],
  ["Array of 1,000 Bignums", (1..1000).map { |i| 2**80 + i }],
  ["[1, 2.5, \"abc\"]", [1, 2.5, "abc"]],
]
