# Ackermann's function: recursion thousands of frames deep.
def ack(m, n)
  if m == 0
    n + 1
  elsif n == 0
    ack(m - 1, 1)
  else
    ack(m - 1, ack(m, n - 1))
  end
end
s = 0
60.times { s += ack(3, 7) }
puts s
