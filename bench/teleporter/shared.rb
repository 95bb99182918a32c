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
# N (default 10000) round trips for sizes up to 10 KB, fewer above (at least 20), after a
# warm-up of 20.

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

def iterations(bytes) = bytes <= 10_000 ? N : [N * 10_000 / bytes, 20].max

def make(kind, bytes) = kind == "string" ? "x" * bytes : Array.new([bytes / 8, 1].max) { |i| i }

# µs per round trip of `obj` in `mode` (nil: the signals alone).
def measure(mode, obj, rounds)
  snd, rcv = MODES.fetch(mode || "copy")
  t = Teleporter::Tunnel.new(capacity: 96 << 20)
  took = Teleporter::Tunnel.new(capacity: 1 << 20)
  took_back = Teleporter::Tunnel.new(capacity: 1 << 20)
  pid = fork do
    loop do
      x = mode ? t.public_send(rcv) : nil
      took.send 1
      break if x == :stop
      t.public_send(snd, x) if mode
      took_back.recv
    end
    exit!(0)
  end
  trip = proc do
    t.public_send(snd, obj) if mode
    took.recv
    obj = t.public_send(rcv) if mode
    took_back.send 1
  end
  begin
    20.times(&trip)
    t0 = now
    rounds.times(&trip)
    (now - t0) * 1e6 / rounds
  ensure
    t.send :stop
    took_back.send 1
    sleep 0.05
    Process.kill(:KILL, pid) unless Process.waitpid(pid, Process::WNOHANG)
    Process.wait(pid) rescue nil
  end
end

# Yields each kind and size with the µs per transfer of every mode, `timer` measuring one.
def each_row(timer)
  KINDS.each do |kind|
    SIZES.each do |bytes|
      n = iterations(bytes)
      r = MODES.keys.to_h { |m| [m, timer.call(m, make(kind, bytes), n)] }
      GC.start
      yield kind, bytes, r
      $stdout.flush
    end
  end
end

printf("signals alone: %.2f µs per round trip\n\n", measure(nil, nil, N))
puts "| kind | bytes | copy µs | share µs | move µs | copy / share |"
puts "|---|---:|---:|---:|---:|---:|"
each_row(method(:measure)) do |kind, bytes, r|
  printf("| %s | %d | %.2f | %.2f | %.2f | %.1f |\n", kind, bytes, r["copy"], r["share"], r["move"], r["copy"] / r["share"])
end

# The transfer alone, without the other process's scheduling: one send and one receive by
# this process, through one tunnel (what the round trips above pay twice, plus the wakeups).
def local(mode, obj, rounds)
  snd, rcv = MODES.fetch(mode)
  t = Teleporter::Tunnel.new(capacity: 96 << 20)
  step = proc do
    t.public_send(snd, obj)
    obj = t.public_send(rcv)
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
