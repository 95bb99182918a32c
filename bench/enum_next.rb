# External iteration: Enumerator#next over a 1,000,000-element array.
N = Integer(ENV.fetch("N", "1000000"))
e = Array.new(N) { |i| i }.each
sum = 0
loop do
  sum += e.next
end
puts sum
