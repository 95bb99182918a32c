# Seed corpus of the panic-freedom check: hostile inputs that must end as Ruby exceptions
# (or normal results), never as a crash. Each probe rescues Exception, so the file runs to
# its end; mutations of it move the numbers and nesting around.

def probe
  yield
rescue Exception => e
  raise if e.is_a?(SystemExit)
  e.class
end

# Deep nesting in data and in source.
probe { a = []; 10_000.times { a = [a] }; a.inspect.size; a.flatten.size; a.hash; a == a.dup }
probe { h = {}; 10_000.times { h = { k: h } }; h.inspect.size; h.hash }
probe { eval("[" * 5_000 + "]" * 5_000) }
probe { eval("(" * 5_000 + "1" + ")" * 5_000) }
probe { eval("-> { " * 2_000 + "1" + " }" * 2_000) }
probe { eval("if true then " * 2_000 + "1" + " end" * 2_000) }
probe { eval("a = " * 3_000 + "1") }
probe { eval("1" + " + 1" * 20_000) }
probe { eval("[" * 20_000) }
probe { eval("\"\#{" * 3_000 + "}\"" * 3_000) }
probe { a = []; a << a; a.inspect; a.flatten rescue $!; a.hash; a == [a]; a.join rescue $! }
probe { h = {}; h[:self] = h; h.inspect; h.to_a.flatten(3); h == h.dup }

# Huge numbers and sizes.
probe { 2**(2**40) }
probe { 10**1_000_000 }
probe { (2**64) << (2**40) }
probe { 1 << (2**62) }
probe { Array.new(2**40) }
probe { Array.new(2**62, 0) }
probe { [0] * (2**62) }
probe { [1, 2] * (2**61) }
probe { "a" * (2**62) }
probe { "ab" * (2**61) }
probe { "a".ljust(2**62) }
probe { "a".center(2**40) }
probe { "%999999999999d" % 1 }
probe { "%.999999999999f" % 1.0 }
probe { "%-*d" % [2**62, 1] }
probe { format("%*s", 2**40, "x") }
probe { "x".rjust(2**31, "ab") }
probe { [1].pack("C#{2**40}") }
probe { "a" * 2**20 * 2**20 }
probe { Integer("9" * 100_000) }
probe { ("1" * 10_000).to_i.to_s }
probe { 1.0 / 0 * 0 }
probe { Float::MAX.to_i.to_s(36) }
probe { 12345678901234567890.pow(10**18, 10**9 + 7) }
probe { (-2**63).abs }
probe { 4611686018427387903 + 1 }
probe { -4611686018427387904 - 1 }
probe { 4611686018427387904 * -4611686018427387904 }
probe { -9223372036854775808 / -1 }
probe { -4611686018427387904.div(-1) }
probe { Integer.sqrt(2**1000) }
probe { 7.fdiv(0) }
probe { 1.round(-(2**62)) }
probe { 1.5.round(2**40) }
probe { 10.digits(2**70) }
probe { [3, 1].first(2**62) }
probe { [1, 2, 3][2**62] }
probe { [1, 2, 3][-(2**62)] = 1 }
probe { [1, 2, 3].fill(0, 2**62) }
probe { [1, 2, 3].insert(2**62, 1) }
probe { a = [1]; a[2**31] = 1 }
probe { "abc"[2**62, 2**62] }
probe { "abc".byteslice(-(2**62), 2) }
probe { "abc".insert(2**62, "x") }
probe { (1..10).step(2**62).to_a }
probe { 1.step(2**64, 2**62).to_a }
probe { rand(2**100) }
probe { Random.new(2**100).rand }
probe { Time.at(2**62) }
probe { Time.at(-(2**62)).year }
probe { sleep(-1) }

# Invalid byte sequences and odd encodings.
probe { "\xff\xfe".encode("UTF-16") }
probe { "\xff".force_encoding("UTF-8").upcase }
probe { "\xe3\x81".force_encoding("UTF-8").reverse.chars }
probe { "abc\xff".split("") }
probe { "\xff" =~ /./ }
probe { "\xed\xa0\x80".unicode_normalize }
probe { "\u3042\xff".scrub.encode("EUC-JP") }
probe { "a\0b".to_sym.inspect }
probe { "\xff".to_sym.to_proc }
probe { "\xff".inspect.dump.undump }
probe { eval("\"\\xff\" + 'a'") }
probe { eval("# encoding: ascii-8bit\n\"\\xff\" =~ /\\xff/") }
probe { eval("\xff\xfe = 1") }
probe { eval("def \xff; end") }
probe { Regexp.new("\xff") }
probe { Regexp.new("(" * 10_000) }
probe { Regexp.new("a{2147483648}") }
probe { "%c" % 0x110000 }
probe { 0x110000.chr("UTF-8") }
probe { [0xd800].pack("U") }
probe { "\xf4\x90\x80\x80".codepoints }

# Wrong arguments and odd receivers.
probe { [].first(-1) }
probe { {}.fetch }
probe { 1.send }
probe { BasicObject.new.inspect }
probe { Class.new(Class) }
probe { Object.new.instance_variable_get("bad") }
probe { Comparable.instance_method(:<).bind_call(Object.new, 1) }
probe { Integer.allocate }
probe { Struct.new }
probe { Module.new.const_get("lower") }
probe { define_method(nil) {} }
probe { ObjectSpace.each_object(Class).first }
probe { Marshal.load("\x04\x08o") }
probe { Kernel.instance_method(:send).bind_call(1, :instance_variable_set, :@a, 1) }
probe { "abc".freeze.upcase! }
probe { catch { |tag| throw :other } }
probe { loop { raise StopIteration, "done" } }
probe { Fiber.new { Fiber.yield }.resume }
probe { Thread.new { 1 }.value }
probe { e = [1, 2].each; e.next; e.next; e.next }
probe { Enumerator.new { |y| y << 1 }.size }
probe { def returns_from_proc = proc { return 1 }.call; returns_from_proc }
probe { lambda { |a| a }.call }
probe { method(:puts).unbind.bind(1) }
probe { GC.stress = true; [1, 2, 3].map(&:to_s); GC.stress = false }
probe { ObjectSpace.garbage_collect }
probe { $stdout.sync = true; $stdout.write("") }
probe { $; = 1 }
probe { $, = 1 }
probe { $/ = 1 }
probe { $0 = nil }
probe { trap("INT") {} rescue nil }
