# The share section of bench/teleporter/run (the seed's fig. 14): round trips of one String
# or Array between this process and a forked child through a Teleporter::Tunnel, copied
# (send/recv), shared (share_send/share_recv) and moved (move_send/move_recv), for sizes of
# 10 B to 10 MB. Carmine only (the other transports copy: their numbers are the scale
# section's). Prints a Markdown table of µs per round trip.
#
#   carmine bench/teleporter/shared.rb [string|array]...
#
# Both directions use one tunnel, so a shared image stays in one segment (a shared object
# sent through another tunnel is copied into that tunnel's memory). So that neither side
# takes back its own message, each signals with an Integer on a tunnel of its own once it
# has taken the other's: a round trip is two data messages and two signals, and the
# "signals alone" row measures the signals by themselves (subtract it for the transfer).
# The object that comes back is the one sent next, as in a ping-pong: share and move then
# pass the same image back and forth; only the first send converts the plain object.
# N (default 10000) round trips of share and move at every size, since they cost the same at
# every size; copy N up to 10 KB and fewer above (at least 20). Each after a warm-up of 20.
# (With 20 round trips at 10 MB, a row measured the few milliseconds after the conversion and
# the copy row: how the scheduler had placed the two processes then, not the transfer.)

require "teleporter"

N = Integer(ENV.fetch("N", "10000"))
SIZES = [10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
KINDS = ARGV.empty? ? %w[string array] : ARGV
MODES = {
  "copy" => %i[send recv],
  "share" => %i[share_send share_recv],
  "move" => %i[move_send move_recv],
}

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

# Round trips of `mode` for objects of `bytes`: copy's time grows with the size, the others' not.
def iterations(mode, bytes) = mode != "copy" || bytes <= 10_000 ? N : [N * 10_000 / bytes, 20].max

def make(kind, bytes) = kind == "string" ? "x" * bytes : Array.new([bytes / 8, 1].max) { |i| i }

# A mode's send and receive on tunnel `t`, as Method objects (a `public_send` per transfer
# would add its method lookup to every number measured).
def ends(t, mode)
  MODES.fetch(mode).map { |m| t.method(m) }
end

# Round-trip times: the mean and percentiles, µs.
Times = Struct.new(:mean, :p50, :p90, :p99) do
  def self.of(samples)
    s = samples.sort
    at = ->(q) { s[[(q * s.size).floor, s.size - 1].min] * 1e6 }
    new(samples.sum * 1e6 / samples.size, at.(0.5), at.(0.9), at.(0.99))
  end
end

# Times of round trips of `obj` in `mode` (nil: the signals alone).
def measure(mode, obj, rounds)
  t = Teleporter::Tunnel.new(capacity: 96 << 20)
  took = Teleporter::Tunnel.new(capacity: 1 << 20)
  took_back = Teleporter::Tunnel.new(capacity: 1 << 20)
  snd, rcv = ends(t, mode || "copy")
  pid = fork do
    loop do
      x = mode ? rcv.() : nil
      took.send 1
      break if x == :stop
      snd.(x) if mode
      took_back.recv
    end
    exit!(0)
  end
  trip = proc do
    snd.(obj) if mode
    took.recv
    obj = rcv.() if mode
    took_back.send 1
  end
  begin
    20.times(&trip)
    samples = Array.new(rounds) do
      t0 = now
      trip.()
      now - t0
    end
    Times.of(samples)
  ensure
    t.send :stop
    took_back.send 1
    sleep 0.05
    Process.kill(:KILL, pid) unless Process.waitpid(pid, Process::WNOHANG)
    Process.wait(pid) rescue nil
  end
end

# Yields each kind and size with the times of every mode, `timer` measuring one.
def each_row(timer)
  KINDS.each do |kind|
    SIZES.each do |bytes|
      r = MODES.keys.to_h { |m| [m, timer.call(m, make(kind, bytes), iterations(m, bytes))] }
      GC.start
      yield kind, bytes, r
      $stdout.flush
    end
  end
end

sig = measure(nil, nil, N)
printf("signals alone: %.2f µs per round trip (p50 %.2f, p90 %.2f, p99 %.2f)\n\n", sig.mean, sig.p50, sig.p90, sig.p99)
puts "Means, and p50 / p90 / p99 of share and move, µs per round trip:"
puts
puts "| kind | bytes | copy µs | share µs | move µs | copy / share | share p50 / p90 / p99 | move p50 / p90 / p99 |"
puts "|---|---:|---:|---:|---:|---:|---:|---:|"
each_row(method(:measure)) do |kind, bytes, r|
  c, sh, mv = r.values_at("copy", "share", "move")
  printf("| %s | %d | %.2f | %.2f | %.2f | %.1f | %.2f / %.2f / %.2f | %.2f / %.2f / %.2f |\n", kind, bytes, c.mean, sh.mean, mv.mean,
         c.mean / sh.mean, sh.p50, sh.p90, sh.p99, mv.p50, mv.p90, mv.p99)
end

# The transfer alone, without the other process's scheduling: one send and one receive by
# this process, through one tunnel (what the round trips above pay twice, plus the wakeups).
def local(mode, obj, rounds)
  t = Teleporter::Tunnel.new(capacity: 96 << 20)
  snd, rcv = ends(t, mode)
  step = proc do
    snd.(obj)
    obj = rcv.()
  end
  20.times(&step)
  t0 = now
  rounds.times(&step)
  (now - t0) * 1e6 / rounds
end

puts
puts "One process, one send + one receive:"
puts
puts "| kind | bytes | copy µs | share µs | move µs |"
puts "|---|---:|---:|---:|---:|"
each_row(method(:local)) do |kind, bytes, r|
  printf("| %s | %d | %.2f | %.2f | %.2f |\n", kind, bytes, r["copy"], r["share"], r["move"])
end
