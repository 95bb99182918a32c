# GC.start pause with 1,000,000 live objects (Arrays, Strings and Hashes); prints the mean
# pause in milliseconds to stderr as "gc_pause_ms=N" for bench/programs/run.
live = Array.new(1_000_000) do |i|
  case i % 3
  when 0 then [i]
  when 1 then "str#{i}"
  else { i => i }
  end
end
GC.start
t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
10.times { GC.start }
ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - t) * 100.0
$stderr.puts "gc_pause_ms=#{ms.round(1)}"
puts live.size
