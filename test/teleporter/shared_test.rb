require_relative "../assert"
require_relative "support"
require "teleporter"

T = Teleporter::Tunnel
SS = Teleporter::SharedString
SA = Teleporter::SharedArray
SH = Teleporter::SharedHash

Point = Struct.new(:x, :y)
Pair = Data.define(:a, :b)
class Account
  attr_reader :owner, :balance
  def initialize(owner, balance) = (@owner, @balance = owner, balance)
  def ==(o) = o.is_a?(Account) && o.owner == owner && o.balance == balance
end

# Runs `child` in a forked process with a tunnel to it (`to`) and one back (`from`);
# returns what the parent block returns, after checking the child exited 0. If the parent
# block raises, the child is killed at once (it may be waiting for a message that will not
# come, and would keep the test's output open).
def with_child(capacity: 4 << 20, child:)
  to = T.new(capacity: capacity)
  from = T.new(capacity: capacity)
  pid = TPTest.fork_child { child.call(to, from) }
  done = false
  r = yield to, from
  done = true
  r
ensure
  if pid
    st = TPTest.reap([pid], grace: done ? 30 : 0)[pid]
    assert st && st.success?, "child failed: #{st.inspect}" if done
  end
end

# Collects until the segment's used blocks fall back to `base` (reclaiming dead children).
def settle(t, base)
  10.times do
    GC.start
    t.reclaim
    return t.stats[:used_blocks] if t.stats[:used_blocks] <= base
  end
  t.stats[:used_blocks]
end

test "SharedString reads like a String and writes while owned" do
  s = SS.new("héllo")
  assert_equal "héllo", s.to_s
  assert_equal 5, s.size
  assert_equal 6, s.bytesize
  assert_equal Encoding::UTF_8, s.encoding
  assert_equal "é", s[1]
  assert_equal "éll", s[1, 3]
  assert_equal "llo", s[2..]
  assert_equal "o", s[-1]
  assert_nil s[10]
  assert s == "héllo"
  assert "héllo" == s.to_s
  assert s.eql?(SS.new("héllo"))
  assert_equal "héllo".hash, s.hash
  assert s.include?("ll")
  assert s.start_with?("hé")
  assert_equal "HÉLLO", s.upcase
  assert_equal "\"héllo\"", s.inspect
  assert_equal "a héllo", "a " + s
  assert !s.frozen?
  s << " world"
  assert_equal "héllo world", s.to_s
  s.upcase!
  assert_equal "HÉLLO WORLD", s.to_s
  s[0] = "J"
  assert_equal "JÉLLO WORLD", s.to_s
  s.replace("x" * 10_000)
  assert_equal 10_000, s.size
  sj = SS.new("abc".encode("Shift_JIS"))
  assert_equal Encoding::Shift_JIS, sj.encoding
  assert_equal "abc", sj.to_s.encode("UTF-8")
  assert_equal "", SS.new.to_s
end

test "SharedArray and SharedHash read like Array and Hash and write while owned" do
  a = SA.new([1, "two", :three, 4.5, [5, [6]], {k: "v"}, nil])
  assert_equal 7, a.size
  assert_equal "two", a[1]
  assert_kind_of SS, a[1]
  assert_kind_of SA, a[4]
  assert_equal [5, [6]], a[4]
  assert_equal [1, "two"], a[0, 2]
  assert_equal 6, a.dig(4, 1, 0)
  assert_equal [1, "two", :three, 4.5, [5, [6]], {k: "v"}, nil], a
  assert_equal [1, "two", :three, 4.5, [5, [6]], {k: "v"}, nil], a.unshare
  assert_kind_of Array, a.unshare
  assert_equal [2, 3], a.select { |x| x.is_a?(Integer) }.map { |x| x + 1 } + [3]
  assert_equal 1, a.first
  assert a.include?(:three)
  assert_equal [0, 1, 2], [0] + SA.new([1, 2])
  x, y = *SA.new([7, 8])
  assert_equal [7, 8], [x, y]
  a << 8
  a.push(9, 10)
  a[0] = "one"
  a[12] = :far
  assert_equal ["one", 10, nil, nil, :far], [a[0], a[9], a[10], a[11], a[12]]
  assert_equal :far, a.pop
  assert_equal "one", a.shift
  a.unshift(0)
  assert_equal 0, a[0]
  a.clear
  assert a.empty?

  h = SH.new({"x" => 1, y: [1, 2], 3 => "z", 2**70 => :big, 1.5 => :f, nil => 0})
  assert_equal 6, h.size
  assert_equal 1, h["x"]
  assert_equal [1, 2], h[:y]
  assert_equal "z", h[3]
  assert_equal :big, h[2**70]
  assert_equal :f, h[1.5]
  assert_equal 0, h[nil]
  assert_nil h["nope"]
  assert_equal ["x", :y, 3, 2**70, 1.5, nil], h.keys
  assert h.keys[0].frozen?
  assert_kind_of String, h.keys[0]
  assert h.key?(:y)
  assert !h.key?(:x)
  assert_equal 1, h.fetch("x")
  assert_raise(KeyError) { h.fetch(:nope) }
  assert_equal({"x" => 1, y: [1, 2], 3 => "z", 2**70 => :big, 1.5 => :f, nil => 0}, h.to_h)
  assert_equal({a: 1, "x" => 1}, {a: 1}.merge(SH.new({"x" => 1})))
  h["x"] = 2
  h[:new] = "n"
  assert_equal 2, h["x"]
  assert_equal 7, h.size
  assert_equal [1, 2], h.delete(:y)
  assert_equal 6, h.size
  40.times { |i| h[i * 10] = i }
  assert_equal 39, h[390]
  assert_equal "{\"x\" => 2}", SH.new({"x" => 2}).inspect
  assert_equal 5, SH.new(Hash.new(5))[:missing]
end

# Converts to an Array or a Hash only through respond_to_missing? (as Array#== asks).
class ArrayLike
  def respond_to_missing?(m, priv = false) = m == :to_ary || super
  def method_missing(m, *a) = m == :to_ary ? [1, 2] : super
  def ==(o) = o.to_a == [1, 2]
end

test "SharedArray#== and SharedHash#== answer a non-container at once, compare contents otherwise" do
  a = SA.new([1, [2]])
  h = SH.new({"k" => [1]})
  str, arr = "s", []
  before = GC.stat(:total_allocated_objects)
  1_000.times { a == :stop || a == nil || a == 5 || a == str || h == :stop || h == 1.5 || h == arr }
  assert_equal 0, GC.stat(:total_allocated_objects) - before, "== against an immediate or a non-container allocates"
  assert a == a
  assert a == [1, [2]]
  assert [1, [2]] == a
  assert a == SA.new([1, [2]])
  assert !(a == [1, [3]])
  assert !(a == Object.new)
  assert a != :stop
  assert SA.new([1, 2]) == ArrayLike.new, "an object converting through respond_to_missing? compares by contents"
  assert h == {"k" => [1]}
  assert h == SH.new({"k" => [1]})
  assert !(h == {"k" => [2]})
  assert !(h == [["k", [1]]])
  c = SA.new([0])
  c[0] = c
  assert c == c.dup, "cyclic arrays compare"
  t = T.new(capacity: 1 << 20)
  m = SA.new([1])
  t.move_send(m)
  assert !(m == :stop), "a moved array is not equal to an immediate"
  assert_raise(Teleporter::MovedError) { m == [1] }
  t.move_recv
end

test "SharedHash finds keys through its index: growth, deletes, re-inserts, clear, every key kind" do
  plain = {}
  h = SH.new({})
  keys = [nil, true, false, 0, -1, 2**62, 1.5, -0.0, :sym, "str", "é".encode("UTF-8"), "bin".b, 2**80, 3r, [1, "a"]]
  keys.each_with_index { |k, i| h[k] = i; plain[k] = i }
  2_000.times { |i| h["k#{i}"] = i; plain["k#{i}"] = i }
  assert_equal plain.size, h.size
  plain.each { |k, v| assert_equal v, h[k], "key #{k.inspect}" }
  assert_equal 7, h[0.0], "-0.0 and 0.0 are one key (0 and 0.0 are two)"
  assert_nil h[0.5]
  assert_nil h["k2000"]
  (0...2_000).step(3) { |i| assert_equal i, h.delete("k#{i}"); plain.delete("k#{i}") }
  assert_equal plain.size, h.size
  assert_nil h["k3"]
  assert_equal 4, h["k4"]
  h["k3"] = :back
  assert_equal :back, h["k3"]
  500.times { |i| h["n#{i}"] = i } # grows again: deleted entries are compacted away
  assert_equal 499, h["n499"]
  assert_equal :back, h["k3"]
  assert_nil h["k1998"]
  assert_equal 1_999, h["k1999"]
  h.clear
  assert_nil h["k4"]
  assert_equal 0, h.size
  h["again"] = 1
  assert_equal 1, h["again"]
  assert_equal ["again"], h.keys

  t = T.new(capacity: 8 << 20)
  big = SH.new((0...5_000).to_h { |i| ["key#{i}", i] })
  t.share_send(big)
  r = t.share_recv
  assert_equal 4_321, r["key4321"]
  assert_nil r["key5000"]
  assert r.frozen?
  assert_equal 5_000, r.size
end

test "share_send: the receiver reads the sender's data in place, frozen, of every supported type" do
  objs = [12, -(2**62), 2**100, -(3**80), 2.5, 1e300, Rational(3, 7), Complex(1, -2.5), "héllo",
          "sjis".encode("Shift_JIS"), "bin\xff".b, :sym, :"#{"long symbol name " * 5}", [1, [2.5, "x"]],
          {"k" => [1], sym: {n: nil}}, 1..10, (1.0...2.0), Point.new(1, "p"), Pair.new(a: 1, b: [2]),
          Account.new("ann", 10**20), nil, true, false, "x" * 300_000]
  got = with_child(child: ->(to, from) {
    objs.size.times do
      v = to.share_recv
      deep_frozen = case v
                    when SS then v.frozen?
                    when SA then v.frozen? && v.all? { |e| !e.is_a?(SA) && !e.is_a?(SS) || e.frozen? }
                    when SH then v.frozen? && v.to_a.flatten.all? { |e| !e.respond_to?(:__id) || e.frozen? }
                    else v.frozen?
                    end
      enc = v.respond_to?(:encoding) ? v.encoding.name : nil
      from.send [v.class.name, (v.respond_to?(:unshare) ? v.unshare : v), deep_frozen, enc]
    end
  }) do |to, from|
    objs.each { |o| to.share_send(o) }
    objs.map { from.recv }
  end
  objs.each_with_index do |o, i|
    klass, value, frozen, enc = got[i]
    assert_equal o, value, "#{o.class} came back different"
    assert frozen, "#{o.class}: a shared object must arrive frozen"
    case o
    when String then assert_equal ["Teleporter::SharedString", o.encoding.name], [klass, enc]
    when Array then assert_equal "Teleporter::SharedArray", klass
    when Hash then assert_equal "Teleporter::SharedHash", klass
    else assert_equal o.class.name, klass
    end
  end
end

test "sharing freezes a shared object for its sender too, and the same object can be shared again without copying" do
  s = SS.new("Hello")
  with_child(child: ->(to, from) {
    a = to.share_recv
    b = to.share_recv
    from.send [a.to_s, b.to_s, a.frozen?, a.__id == b.__id]
    from.share_send(a)
  }) do |to, from|
    to.share_send(s)
    assert s.frozen?
    assert_raise(FrozenError) { s << "!" }
    assert_equal "Hello", s.to_s
    before = to.stats[:used_blocks]
    to.share_send(s)
    assert_equal before, to.stats[:used_blocks], "sharing a shared object again copies nothing"
    assert_equal ["Hello", "Hello", true, true], from.recv, "two receives of one shared object read one record of one image (one __id)"
    back = from.share_recv
    assert_equal "Hello", back.to_s
    assert back.frozen?
  end
end

# Shares one SharedArray through `t` back to this process 51 times; yields the wrappers
# received (in a method of its own, so that no wrapper stays on the test's frame).
def share_back_and_forth(t)
  t.share_send(SA.new([1, "two"]))
  got = Array.new(50) do
    r = t.share_recv
    t.share_send(r)
    r
  end
  got << t.share_recv
  yield got if block_given?
  nil
end

test "a shared object received again while this process still reads it is received into the same root" do
  t = T.new(capacity: 4 << 20)
  base = t.stats[:used_blocks]
  share_back_and_forth(t)
  assert_equal base, settle(t, base), "the block is freed once its wrappers are collected"
  share_back_and_forth(t) do |got|
    assert_equal 1, got.map(&:__id).uniq.size, "every receive of the block reads one root"
    assert_equal [1, "two"], got.last.to_a
    assert got.last.frozen? && got.last[1].frozen?
    assert_equal base + 1, t.stats[:used_blocks]
  end
  t.share_send(SS.new("new image"))
  assert_equal "new image", t.share_recv.to_s
end

test "move_send: the receiver can write, the sender's objects raise MovedError, and it can move back" do
  a = SA.new([1, "two", {k: [3]}])
  inner = a[2]
  with_child(child: ->(to, from) {
    m = to.move_recv
    raise "frozen after move" if m.frozen?
    m << 4
    m[1] << "!"
    m[2][:k] << 5
    from.move_send(m)
    begin
      m.size
      from.send :not_raised
    rescue Teleporter::MovedError => e
      from.send e.message
    end
  }) do |to, from|
    to.move_send(a)
    assert a.moved?
    assert_raise(Teleporter::MovedError) { a.size }
    assert_raise(Teleporter::MovedError) { a[0] }
    assert_raise(Teleporter::MovedError) { inner[:k] }
    assert_raise(Teleporter::MovedError) { a.inspect }
    err = assert_raise(Teleporter::Error) { to.move_send(a) }
    assert_match(/moved to another process/, err.message)
    assert_raise(Teleporter::Error) { to.share_send(inner) }
    back = from.move_recv
    assert_equal [1, "two!", {k: [3, 5]}, 4], back
    assert !back.frozen?
    back << :mine
    assert_equal 5, back.size
    assert_match(/SharedArray was moved to another process with move_send/, from.recv)
  end
end

test "a plain object given to move_send is converted once; moved-in objects are writable" do
  with_child(child: ->(to, from) {
    s = to.move_recv
    s << " moved"
    h = to.move_recv
    h["n"] += 1
    from.send [s.to_s, s.frozen?, h.unshare]
  }) do |to, from|
    str = +"plain"
    to.move_send(str)
    assert_equal "plain", str
    to.move_send({"n" => 1})
    assert_equal ["plain moved", false, {"n" => 2}], from.recv
  end
end

test "move_send takes every supported type, immutable values and frozen plain objects included" do
  objs = [2**100, Rational(3, 7), Complex(1, -2.5), 1..10, Pair.new(a: 1, b: [2]), Point.new(1, "p"),
          Account.new("ann", 10**20), "frozen".freeze, [Rational(1, 2), 2**70, Point.new(2, 3)].freeze,
          {r: 1..2, d: Pair.new(a: nil, b: 1.5)}]
  got = with_child(child: ->(to, from) {
    objs.size.times do
      v = to.move_recv
      writable = case v
                 when SS then (v << "!"; v.chomp!("!"); true)
                 when SA then (v << 0; v.pop; true)
                 when SH then (v[:new] = 1; v.delete(:new); true)
                 when Point then (v.x = v.x; true)
                 when Account then (v.instance_variable_set(:@owner, v.owner); true)
                 else v.frozen? # Integer, Rational, Complex, Range and Data are always frozen
                 end
      from.send [v.class.name, (v.respond_to?(:unshare) ? v.unshare : v), writable]
    end
  }) do |to, from|
    objs.each { |o| to.move_send(o) }
    objs.map { from.recv }
  end
  objs.each_with_index do |o, i|
    klass, value, writable = got[i]
    assert_equal o, value, "#{o.class} came back different"
    assert writable, "#{o.class}: a moved-in object is as writable as its class allows"
    assert_equal({String => "Teleporter::SharedString", Array => "Teleporter::SharedArray",
                  Hash => "Teleporter::SharedHash"}.fetch(o.class, o.class.name), klass)
  end
  assert_equal "frozen", objs[7], "the sender's plain objects stay as they were"
  assert objs[5].x == 1 && !objs[5].frozen?
end

test "copies inside an owned graph read frozen: a change goes back with []=" do
  t = T.new(capacity: 1 << 20)
  t.move_send([Point.new(1, 2), {acct: Account.new("bo", 5)}, 2**80])
  a = t.move_recv
  pt = a[0]
  assert pt.frozen?, "a Struct read from a moved graph is a copy: frozen, so a change cannot be lost"
  assert_raise(FrozenError) { pt.x = 9 }
  assert_raise(FrozenError) { a[1][:acct].instance_variable_set(:@balance, 0) }
  changed = pt.dup
  changed.x = 9
  a[0] = changed
  assert_equal Point.new(9, 2), a[0]
  assert_equal 2**80, a[2]
  plain = a.unshare
  assert !plain[0].frozen? && !plain[1][:acct].frozen?, "unshare gives private, writable copies"
  plain[0].x = 10
  assert_equal 9, a[0].x
  assert_equal Point.new(1, 1), (t.move_send(Point.new(1, 1)); t.move_recv.tap { |p| p.y = 1 })
end

test "share and move refuse what they must: frozen moves, move_recv of a shared message, unsupported objects" do
  t = T.new(capacity: 1 << 20)
  s = SS.new("x")
  t.share_send(s)
  err = assert_raise(Teleporter::Error) { t.move_send(s) }
  assert_match(/can't move a frozen Teleporter::SharedString/, err.message)
  err = assert_raise(Teleporter::Error) { t.move_recv }
  assert_match(/sent with share_send/, err.message)
  assert_raise(Teleporter::Error) { t.move_send(SS.new("y").freeze) }
  assert_raise(TypeError, "can't teleport Proc") { t.share_send(proc {}) }
  assert_raise(TypeError, "can't teleport Proc") { t.move_send([1, proc {}]) }
  assert_raise(TypeError, "can't teleport Thread") { t.share_send({a: Thread.current}) }
  assert_raise(TypeError) { t.share_send(Hash.new { 1 }) }
  assert_equal 0, t.size
  assert_equal 1, t.stats[:used_blocks], "only the sender's shared string is held"
  s = nil
  assert_equal 0, settle(t, 0)
  assert Teleporter::MovedError < Teleporter::Error
end

test "nested and cyclic graphs keep their shape and identity through share and move" do
  a = [1, "s"]
  a << a
  h = {"self" => nil, "list" => a}
  h["self"] = h
  got = with_child(child: ->(to, from) {
    x = to.share_recv
    y = to.move_recv
    from.send [x.inspect, x[2][2][1].to_s, x[2].__id == x.__id, x.unshare.then { |u| u[2].equal?(u) }]
    y["list"] << :added
    from.send [y["self"]["self"].size, y["list"][2].size, y.unshare.then { |u| u["self"].equal?(u) }]
  }) do |to, from|
    to.share_send(a)
    to.move_send(h)
    [from.recv, from.recv]
  end
  assert_equal ["[1, \"s\", [...]]", "s", true, true], got[0]
  assert_equal [2, 4, true], got[1]
end

test "exceeding the segment raises Teleporter::Error and leaves the tunnel as it was" do
  t = T.new(capacity: 256 << 10)
  before = t.stats
  err = assert_raise(Teleporter::Error) { t.share_send("x" * (1 << 20)) }
  assert_match(/does not fit/, err.message)
  assert_raise(Teleporter::Error) { t.move_send(["y" * 200_000, "z" * 200_000]) }
  # In a lambda of its own, so that no local of this block keeps a wrapper alive.
  use_and_drop = lambda do
    s = SS.new("w" * 100)
    t.share_send(s)
    own = SA.new([])
    t.move_send(own)
    mine = t.share_recv
    moved = t.move_recv
    err = assert_raise(Teleporter::Error) { moved << "v" * 300_000 }
    assert_match(/memory exhausted|does not fit/, err.message)
    assert_equal 0, moved.size
    moved << "fits"
    assert_equal ["fits"], moved
    assert_equal "w" * 100, mine.to_s
    t.send :still_works
    assert_equal :still_works, t.recv
    nil
  end
  use_and_drop.call
  assert_equal before[:used_blocks], settle(t, before[:used_blocks])
end

test "blocks are freed when every process drops its objects (reference counts across processes)" do
  to = T.new(capacity: 4 << 20)
  from = T.new(capacity: 4 << 20)
  base = [to.stats[:used_blocks], from.stats[:used_blocks]]
  pid = TPTest.fork_child do
    2.times do
      s = to.share_recv
      m = to.move_recv
      m << s.size
      from.move_send(m)
    end
    s = m = nil
    GC.start
    from.send :dropped
    to.recv
  end
  run = lambda do
    big = SS.new("q" * 200_000)
    2.times do |i|
      to.share_send(big)
      to.move_send([i, "r" * 50_000])
      back = from.move_recv
      assert_equal [i, "r" * 50_000, 200_000], back
    end
    nil
  end
  run.call
  assert_equal :dropped, from.recv
  to.send :bye
  TPTest.reap([pid])
  assert_equal base[0], settle(to, base[0])
  assert_equal base[1], settle(from, base[1])
end

test "kill -9 of a process holding shared and moved objects leaks nothing" do
  pid = nil
  TPTest.named_tunnel("shared", capacity: 4 << 20) do |t, name|
    ready = T.new(capacity: 1 << 20)
    base = t.stats[:used_blocks]
    pid = fork do
      t2 = T.open(name)
      held = [t2.share_recv, t2.move_recv, t2.share_recv]
      held[1] << "grown " * 1000
      ready.send held.map(&:size)
      sleep
    end
    s = SS.new("k" * 100_000)
    t.share_send(s)
    t.move_send(["m" * 30_000])
    t.share_send({"big" => "b" * 40_000})
    assert_equal [100_000, 2, 1], ready.recv(timeout: 30)
    Process.kill(:KILL, pid)
    Process.wait(pid)
    pid = nil # reaped: its number may belong to another process now
    s = nil
    assert_equal base, settle(t, base)
    assert t.stats[:reclaimed] >= 1
    t.unlink
  end
  assert_equal [], TPTest.leftovers
ensure
  if pid
    Process.kill(:KILL, pid) rescue nil
    Process.wait(pid) rescue nil
  end
end

test "share_recv and move_recv take copied messages and immediates; recv takes shared ones" do
  t = T.new(capacity: 1 << 20)
  t.send [1, 2]
  t.share_send 5
  t.move_send :sym
  t.share_send "str"
  assert_equal [1, 2], t.share_recv
  assert_equal 5, t.move_recv
  assert_equal :sym, t.share_recv
  r = t.recv
  assert_kind_of SS, r
  assert r.frozen?
  assert_nil t.share_recv(timeout: 0.01)
  assert_nil t.move_recv(timeout: 0)
end

# Every method of String/Array/Hash that does not end in "!" must exist on the shared
# class, and a sample of them must answer as the plain object does.
test "the shared classes answer every non-bang method of String, Array and Hash" do
  [[String, SS], [Array, SA], [Hash, SH]].each do |plain, shared|
    missing = (plain.public_instance_methods - Object.public_instance_methods).reject { |m| m.end_with?("!") }
    missing -= shared.public_instance_methods
    assert_equal [], missing.sort, "#{shared} lacks methods of #{plain}"
  end
  t = T.new(capacity: 1 << 20)
  t.share_send(SS.new("héllo"))
  s = t.share_recv
  assert_equal [104, 233, 108, 108, 111], s.each_codepoint.to_a
  assert s.unicode_normalized?
  assert_equal "a\u00e9", SS.new('"a\\u00E9"').undump
  assert (-s).frozen?
  assert_equal "héllo", -s
  assert_equal "héllo", s.dedup
  plus = +s
  assert_equal String, plus.class
  assert !plus.frozen?
  owned = SS.new("ab")
  assert owned.equal?(+owned)
  owned.append_as_bytes("c")
  owned.bytesplice(0, 1, "X")
  assert_equal "Xbc", owned.to_s

  t.share_send(SA.new([1, 3, 5, 7]))
  a = t.share_recv
  assert_equal 2, a.bsearch_index { |x| x >= 5 }
  assert_equal [3, 7], a.fetch_values(1, 3) if [].respond_to?(:fetch_values)
  r = case a
      in [1, x, *] then x
      end
  assert_equal 3, r

  t.share_send({a: 1, b: 2})
  h = t.share_recv
  assert h <= {a: 1, b: 2, c: 3}
  assert h > {a: 1}
  assert !(h < {a: 1})
  assert_equal [:a, 1], h.assoc(:a)
  assert_equal [:b, 2], h.rassoc(2)
  assert_equal [:a, 1, :b, 2], h.flatten
  assert_equal [1, 2], %i[a b].map(&h)
  assert !h.compare_by_identity?
  assert_nil h.default_proc
  r = case h
      in {a: Integer => v} then v
      end
  assert_equal 1, r
  assert_raise(FrozenError) { h.shift }
  assert_raise(FrozenError) { h.default = 5 }
  m = SH.new({x: 1, y: 2})
  assert_equal [:x, 1], m.shift
  assert_equal({y: 2}, m.to_h)
  m.default = 7
  assert_equal 7, m[:nope]
  assert_raise(TypeError) { m.compare_by_identity }
  assert_equal({y: 2}, m.to_h)
end

test "send copies shared objects as plain ones; a moved one raises MovedError" do
  t = T.new(capacity: 1 << 20)
  s = SS.new("héllo")
  inner = SA.new([1, s])
  t.send(s)
  r = t.recv
  assert_equal String, r.class
  assert_equal "héllo", r
  assert_equal Encoding::UTF_8, r.encoding
  assert !r.frozen?
  t.send([inner, inner, SH.new({k: inner})])
  r = t.recv
  assert_equal [[1, "héllo"], [1, "héllo"], {k: [1, "héllo"]}], r
  assert_equal Array, r[0].class
  assert r[0].equal?(r[1]), "one wrapper sent twice arrives as one copy"
  assert_equal "\x01\x09\x06héllo".b, Teleporter.dump(s)
  t.share_send(SA.new(["x", [2]]))
  shared = t.share_recv
  t.send(shared)
  assert_equal ["x", [2]], t.recv
  moved = SS.new("gone")
  t.move_send(moved)
  t.move_recv
  err = assert_raise(Teleporter::MovedError) { t.send(moved) }
  assert_match(/moved to another process/, err.message)
  assert_raise(Teleporter::MovedError) { t.send([1, {a: moved}]) }
  assert_raise(Teleporter::MovedError) { Teleporter.dump(moved) }
  assert_equal 0, t.size
end

# The blocks of received shared objects are freed when the collector frees their
# wrappers: a receiver that allocates little else must still collect them before the
# tunnel's heap fills up, or the sender would get "tunnel memory exhausted".
test "a loop receiving shared and moved objects never fills the tunnel with dead ones" do
  n = 300
  got = with_child(capacity: 2 << 20, child: ->(to, from) {
    n.times { |i| (i.even? ? from.move_send("m#{i}" * 8_000) : from.share_send(["s#{i}" * 8_000])) }
  }) do |to, from|
    (0...n).sum { |i| i.even? ? from.move_recv(timeout: 20).bytesize : from.share_recv(timeout: 20)[0].bytesize }
  end
  assert_equal (0...n).sum { |i| "m#{i}".size * 8_000 }, got
end
