# The "format" section of bench/teleporter/run: one dump + load in process, Marshal against
# Teleporter's copy format (when this Ruby has it), for each of the seed's types.
# Prints "format<TAB>name<TAB>marshal µs<TAB>teleporter µs or missing".
require_relative "types"

begin
  require "teleporter"
rescue LoadError
end

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

def per_op(n)
  [n / 10, 100].min.times { yield }
  t = now
  n.times { yield }
  (now - t) / n * 1e6
end

$stdout.sync = true
TYPES.each do |name, v|
  n = v.is_a?(Array) && v.size > 100 ? 2_000 : 100_000
  m = per_op(n) { Marshal.load(Marshal.dump(v)) }
  t = defined?(Teleporter.dump) ? format("%.3f", per_op(n) { Teleporter.load(Teleporter.dump(v)) }) : "missing"
  puts "format\t#{name}\t#{format("%.3f", m)}\t#{t}"
end
