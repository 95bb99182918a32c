# Building strings: appending with <<, interpolation, concatenation with +, join, and
# Integer#to_s/Float formatting, producing ~50 MB in total.
total = 0
20.times do |round|
  buf = String.new
  i = 0
  while i < 100_000
    buf << "item " << i.to_s << ": " << (i * round).to_s << "\n"
    i += 1
  end
  lines = Array.new(50_000) { |j| "#{j}-#{round}/#{j * 3}" }
  joined = lines.join(",")
  s = ""
  500.times { |k| s = s + "ab" + k.to_s }
  total += buf.size + joined.size + s.size
end
puts total
