# One timed operation of bench/stdlib/run, under whichever Ruby runs this file:
#   work.rb OP FILE   prints the seconds OP took (loading and reading FILE excluded).
op, file = ARGV
def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

case op
when "json_parse"
  require "json"
  src = File.read(file)
  t = now
  JSON.parse(src)
when "json_generate"
  require "json"
  obj = JSON.parse(File.read(file))
  t = now
  JSON.generate(obj)
when "json_pretty"
  require "json"
  obj = JSON.parse(File.read(file))
  t = now
  JSON.pretty_generate(obj)
when "zlib_deflate"
  require "zlib"
  data = File.binread(file)
  t = now
  Zlib::Deflate.deflate(data)
when "zlib_inflate"
  require "zlib"
  data = Zlib::Deflate.deflate(File.binread(file))
  t = now
  Zlib::Inflate.inflate(data)
when "zlib_gzip_read"
  require "zlib"
  gz = file + ".gz"
  Zlib::GzipWriter.open(gz) { |w| w.write(File.binread(file)) } unless File.exist?(gz)
  t = now
  Zlib::GzipReader.open(gz) { |r| r.each_line { } }
when "sha256"
  require "digest"
  chunk = "x" * (1 << 20)
  t = now
  d = Digest::SHA256.new
  1024.times { d.update(chunk) }
  d.hexdigest
when "md5"
  require "digest"
  chunk = "x" * (1 << 20)
  t = now
  d = Digest::MD5.new
  1024.times { d.update(chunk) }
  d.hexdigest
when "bd_sqrt"
  require "bigdecimal"
  t = now
  20.times { BigDecimal(2).sqrt(1000) }
when "bd_sum"
  require "bigdecimal"
  strs = Array.new(100_000) { |i| "#{i}.#{(i * 7919) % 1000}" }
  t = now
  s = BigDecimal("0")
  strs.each { |x| s += BigDecimal(x) }
  s.to_s
when "bd_money"
  require "bigdecimal"
  prices = Array.new(20_000) { |i| BigDecimal("#{i % 500}.#{i % 100}") }
  rate = BigDecimal("0.0825")
  t = now
  prices.each { |p| (p * rate).round(2, :half_even) + p / 3 }
else
  abort "unknown op #{op}"
end
puts now - t
