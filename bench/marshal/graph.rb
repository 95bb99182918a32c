# The Marshal workload: builds a mixed object graph (user objects with instance variables,
# Strings, Symbols, Integers small and big, Floats, Arrays, Hashes, shared references)
# whose dump is about 10 MB, then times Marshal.dump and Marshal.load of it.
#
#   carmine bench/marshal/graph.rb [ITEMS] [RUNS]
#
# Prints one line: "dump SECONDS load SECONDS bytes N": the best of RUNS runs each, in CPU
# seconds of the process during the operation alone (steadier than wall time on a shared
# machine; the collector's work during the operation counts).

class Item
  def initialize(id, name, price, tags, meta, owner)
    @id = id
    @name = name
    @price = price
    @tags = tags
    @meta = meta
    @owner = owner
  end
end

Owner = Struct.new(:name, :email)

def build(n)
  owners = Array.new(64) { |i| Owner.new("owner #{i}", "owner#{i}@example.com") }
  Array.new(n) do |i|
    meta = {
      count: i,
      ratio: i / 7.0,
      label: "label-#{i % 1000}",
      flags: [true, false, nil, i.even?],
      big: 2**64 + i,
      "key #{i % 50}" => [i * 3, -i, 1.5e-3 * i],
    }
    Item.new(i, "item number #{i}", i * 1.25, [:red, :green, :"tag#{i % 100}", "t#{i % 100}"], meta, owners[i % 64])
  end
end

def now = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

items = Integer(ARGV[0] || 60_000)
runs = Integer(ARGV[1] || 3)
graph = build(items)
data = nil
dump = Array.new(runs) do
  t = now
  data = Marshal.dump(graph)
  now - t
end.min
load = Array.new(runs) do
  t = now
  back = Marshal.load(data)
  elapsed = now - t
  raise "load returned #{back.size} items" unless back.size == items
  elapsed
end.min
puts format("dump %.4f load %.4f bytes %d", dump, load, data.bytesize)
