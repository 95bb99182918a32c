# racc's two runtime cores on one big input: the native core (racc/cparse,
# `_racc_do_parse_c`) against the pure-Ruby core (`_racc_do_parse_rb`), in the same
# process, with the calculator parser of test/stdlib/fixtures. Tokens are made before the
# clock starts, so the times are the parsing and the grammar actions only.
#
#   carmine bench/racc_cores.rb        # or: ruby bench/racc_cores.rb
#   N=20000 carmine bench/racc_cores.rb
$LOAD_PATH << "/usr/lib/ruby/3.1.0" unless $LOAD_PATH.include?("/usr/lib/ruby/3.1.0")
require_relative "../test/stdlib/fixtures/racc_calc_parser"

# Tokens are read by index: Array#shift on the 70,000-token queue would cost more than
# the parse on an implementation whose shift moves the elements.
class BenchCalc < RaccCalc
  def start(tokens)
    setup("")
    @tokens = tokens
    @pos = -1
  end

  def next_token
    @tokens[@pos += 1]
  end
end

N = Integer(ENV.fetch("N", "5000"))
input = Array.new(N) { |i| "v#{i % 7} = #{i} * (#{i % 5} + 2) - v#{(i + 3) % 7} / 3" }.join("; ")
tokens = RaccCalc.new.tokenize(input)

def cpu
  t = Process.times
  t.utime + t.stime
end

def wall
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

results = {}
times = {}
[[:c, :_racc_do_parse_c], [:ruby, :_racc_do_parse_rb]].each do |name, core|
  best = nil
  3.times do
    pr = BenchCalc.new
    pr.start(tokens)
    t0 = cpu
    w0 = wall
    results[name] = pr.send(core, pr.send(:_racc_setup), false)
    t = cpu - t0
    warn format("  %s core: cpu %.3f s, wall %.3f s", name, t, wall - w0) if ENV["VERBOSE"]
    best = t if best.nil? || t < best
  end
  times[name] = best
end
raise "the cores disagree" unless results[:c] == results[:ruby] && results[:c].size == N
engine = defined?(RUBY_ENGINE) ? RUBY_ENGINE : "ruby"
puts format("%s: %d statements, %d tokens: C core %.3f s, Ruby core %.3f s, Ruby/C %.1fx",
            engine, N, tokens.size, times[:c], times[:ruby], times[:ruby] / times[:c])
