# One column of bench/teleporter/run: round trips of each of the seed's types between this
# process and a peer, through one transport. Runs under Carmine and under CRuby.
#
#   pingpong.rb TRANSPORT [types|scale]...
#
# TRANSPORT: pipe (two IO.pipes + Marshal, forked child), socket (UNIXSocket.pair + Marshal,
# forked child), tunnel (two Teleporter::Tunnels, forked child), ractor (CRuby's Ractor, an
# in-process peer). Prints "section<TAB>name<TAB>µs per round trip" lines; "missing" instead
# of a number when the transport does not exist in this Ruby. N (default 10000) round trips
# per type after 200 warm-up ones; the string scaling uses fewer for long strings.

require "socket"
require_relative "types"

N = Integer(ENV.fetch("N", "10000"))
transport = ARGV.shift
sections = ARGV.empty? ? %w[types scale] : ARGV

SIZES = [10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]

def now
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

# A forked echo peer over byte streams with Marshal: `to_child` and `from_child` are the
# parent's ends; `child_in`/`child_out` the child's.
class StreamPeer
  def initialize(kind)
    if kind == "pipe"
      child_in, @to_child = IO.pipe
      @from_child, child_out = IO.pipe
      child_ends = [child_in, child_out]
      parent_ends = [@to_child, @from_child]
    else
      a, b = UNIXSocket.pair
      @to_child = @from_child = a
      child_in = child_out = b
      child_ends = [b]
      parent_ends = [a]
    end
    [@to_child, child_out].each { |io| io.sync = true }
    @pid = fork do
      parent_ends.each(&:close)
      begin
        loop { Marshal.dump(Marshal.load(child_in), child_out) }
      rescue EOFError, IOError, Errno::EPIPE, Errno::ECONNRESET
      end
      exit!(0)
    end
    child_ends.each(&:close)
  end

  def round_trip(obj)
    Marshal.dump(obj, @to_child)
    Marshal.load(@from_child)
  end

  def close
    @to_child.close_write rescue @to_child.close
    Process.wait(@pid)
    [@to_child, @from_child].uniq.each { |io| io.close unless io.closed? }
  end
end

class TunnelPeer
  def initialize(bytes)
    cap = [32 << 20, bytes * 3].max
    @there = Teleporter::Tunnel.new(capacity: cap)
    @back = Teleporter::Tunnel.new(capacity: cap)
    @pid = fork do
      begin
        loop { @back.send(@there.recv) }
      rescue StopIteration, Teleporter::Error
      end
      exit!(0)
    end
  end

  def round_trip(obj)
    @there.send(obj)
    @back.recv
  end

  def close
    @there.close
    Process.wait(@pid)
  end
end

class RactorPeer
  def initialize(_bytes)
    @r = Ractor.new { loop { Ractor.yield(Ractor.receive) } }
  end

  def round_trip(obj)
    @r.send(obj)
    @r.take
  end

  def close
    @r.send(:stop) rescue nil
  end
end

available = case transport
  when "pipe", "socket" then true
  when "tunnel"
    begin
      require "teleporter"
      defined?(Teleporter::Tunnel) ? true : "Teleporter::Tunnel missing"
    rescue LoadError
      "teleporter missing"
    end
  when "ractor"
    if defined?(Ractor)
      Warning[:experimental] = false if Warning.respond_to?(:[]=)
      true
    else
      "Ractor missing"
    end
  else abort "unknown transport #{transport}"
  end

def peer(transport, bytes)
  case transport
  when "pipe", "socket" then StreamPeer.new(transport)
  when "tunnel" then TunnelPeer.new(bytes)
  else RactorPeer.new(bytes)
  end
end

def measure(transport, obj, n, bytes)
  pr = peer(transport, bytes)
  [n / 50, 200].min.times { pr.round_trip(obj) }
  t = now
  i = 0
  back = nil
  while i < n
    back = pr.round_trip(obj)
    i += 1
  end
  us = (now - t) / n * 1e6
  raise "#{transport}: #{obj.class} came back different" unless back == obj
  pr.close
  us
end

$stdout.sync = true
sections.each do |section|
  list = section == "types" ? TYPES : SIZES.map { |s| [s.to_s, "x" * s] }
  list.each do |name, obj|
    if available != true
      puts "#{section}\t#{name}\tmissing (#{available})"
      next
    end
    bytes = obj.is_a?(String) ? obj.bytesize : 64 * 1024
    n = section == "scale" ? [N, [N * 10_000 / [obj.bytesize, 1].max, 20].max].min : N
    puts "#{section}\t#{name}\t#{format("%.3f", measure(transport, obj, n, bytes))}"
  end
end
