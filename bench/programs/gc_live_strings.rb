# Memory: 1,000,000 live 10-byte Strings held in an Array (peak RSS is what counts).
strs = Array.new(1_000_000) { |i| "s#{i.to_s.rjust(9, "0")}"[0, 10] }
GC.start
puts strs.size
puts strs.inject(0) { |s, x| s + x.bytesize }
