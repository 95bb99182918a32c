# Seed corpus of the panic-freedom check: unbounded recursion through Ruby frames, through
# builtins that call back into Ruby, and through Rust code walking nested data. Every probe
# must end in SystemStackError (or a result), never in a crash.

def probe
  yield
rescue Exception => e
  raise if e.is_a?(SystemExit)
  e.class
end

probe { def down(n) = down(n + 1); down(0) }
probe { def down_each(n) = [1].each { down_each(n + 1) }; down_each(0) }
probe { def down_map(n) = [n].map { |x| down_map(x + 1) }; down_map(0) }
probe { h = Hash.new { |hash, k| hash[k + 1] }; h[0] }
probe { o = Object.new; def o.to_s = "#{self}"; o.to_s }
probe { o = Object.new; def o.inspect = [self].inspect; o.inspect }
probe { o = Object.new; def o.method_missing(m, *a) = send(m, *a); o.anything }

probe { def fib_deep(n) = n.zero? ? 0 : 1 + fib_deep(n - 1); fib_deep(1_000_000) }
probe { pr = nil; pr = proc { |n| pr.call(n + 1) }; pr.call(0) }
probe { l = ->(n) { l.(n + 1) }; l.(0) }
probe { c = Class.new { define_method(:x) { x } }; c.new.x }
probe { o = Object.new; def o.==(other) = self == other; o == 1 }
probe { o = Object.new; def o.hash = [self].hash; { o => 1 } }
probe { o = Object.new; def o.to_str = "#{self}"; "a" + o }
probe { o = Object.new; def o.<=>(b) = [o] <=> [b]; [o, o].sort }
probe { o = Object.new; def o.coerce(x) = [x + self, 1]; 1 + o }
probe { o = Object.new; def o.respond_to_missing?(*) = respond_to?(:zzz); o.respond_to?(:a) }

# Deeply nested data walked by Rust code (each walk must bound its native recursion). The
# walks run in fibers, whose small native stacks overflow after some thousands of levels
# (the main thread's stack is far larger: reaching its end takes minutes), and once on the
# main thread at a depth that fits.
def deep_walks(deep, deep_hash)
  probe { deep.inspect.size }
  probe { deep.to_s.size }
  probe { deep.flatten.size }
  probe { deep.hash }
  probe { deep == [deep] }
  probe { deep.eql?([deep]) }
  probe { deep <=> [deep] }
  probe { deep.join(",") }
  probe { File.join(deep) }
  probe { Marshal.dump(deep).size }
  probe { [deep].pack("A") }
  probe { deep.dup.frozen? }
  probe { { deep => 1 }[deep] }
  probe { deep.sum }
  probe { deep.sort.size }
  probe { deep.uniq.size }
  probe { Struct.new(:a).new(deep).inspect.size }
  probe { deep_hash.inspect.size }
  probe { deep_hash.hash }
  probe { deep_hash == { k: deep_hash } }
  probe { deep_hash.to_a.flatten.size }
  probe { deep_hash.to_s.size }
  probe { Marshal.load(Marshal.dump(deep_hash)).size }
end

def nest_array(n) = (a = []; n.times { a = [a] }; a)
def nest_hash(n) = (h = {}; n.times { h = { k: h } }; h)

probe { Fiber.new { deep_walks(nest_array(50_000), nest_hash(50_000)) }.resume }
probe { Fiber.new { Fiber.new { deep_walks(nest_array(5_000), nest_hash(5_000)) }.resume }.resume }
probe { deep_walks(nest_array(3_000), nest_hash(3_000)) }
probe { Enumerator.new { |y| y << deep_walks(nest_array(50_000), nest_hash(50_000)) }.next }
