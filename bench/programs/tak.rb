# Takeuchi's function: deep non-tail recursion with three arguments.
def tak(x, y, z)
  return z unless y < x
  tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y))
end
r = 0
16.times { r += tak(24, 16, 8) }
puts r
