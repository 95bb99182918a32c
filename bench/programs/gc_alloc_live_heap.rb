# Allocation next to a large live heap: 3,000,000 short-lived two-element Arrays while
# 1,000,000 Strings stay alive (a collector that marks the whole heap every time pays
# for the live Strings again and again).
live = Array.new(1_000_000) { |i| "live #{i}" }
sum = 0
i = 0
while i < 3_000_000
  pair = [i, i + 1]
  sum += pair[1] - pair[0]
  i += 1
end
puts sum
puts live.size
