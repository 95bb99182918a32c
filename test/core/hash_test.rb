require_relative "../assert"

# Expected values were checked against CRuby (3.4 semantics where they differ from 3.1:
# Hash#inspect, Hash#compact keeping class/default, Hash#shift ignoring the default).

test "select, filter, reject and their bang forms" do
  h = {a: 1, b: 2, c: 3}
  assert_equal({b: 2}, h.select { |k, v| v == 2 })
  assert_equal({b: 2}, h.filter { |k, v| v == 2 })
  assert_equal({a: 1, c: 3}, h.reject { |k, v| v == 2 })
  keys = []
  h.select { |k| keys << k }
  assert_equal [:a, :b, :c], keys
  x = h.dup
  assert_same x, x.select! { |k, v| v > 1 }
  assert_nil x.select! { |k, v| v > 1 }
  assert_same x, x.reject! { |k, v| v > 2 }
  assert_nil x.reject! { |k, v| v > 2 }
  assert_equal({b: 2}, x)
  y = h.dup
  assert_same y, y.keep_if { |k, v| v.odd? }
  assert_same y, y.delete_if { |k, v| k == :a }
  assert_equal({c: 3}, y)
  assert_equal 3, h.select.size
end

test "copies keep compare_by_identity but not the default" do
  h = Hash.new(5).compare_by_identity
  h["a"] = 1
  %i[select reject].each do |m|
    r = h.send(m) { |k, v| m == :select }
    assert_true r.compare_by_identity?
    assert_nil r.default
    assert_equal Hash, r.class
  end
  assert_true h.slice("x").compare_by_identity?
  assert_true h.except("x").compare_by_identity?
  assert_true h.transform_values(&:to_s).compare_by_identity?
  assert_false h.transform_keys(&:to_s).compare_by_identity?
  assert_false h.invert.compare_by_identity?
end

test "merge, merge!, update" do
  assert_equal({a: [:a, 1, 2], b: 3}, {a: 1}.merge({a: 2}, {b: 3}) { |k, o, n| [k, o, n] })
  sub = Class.new(Hash)
  s = sub.new(7)
  s[:x] = 1
  m = s.merge(y: 2)
  assert_equal sub, m.class
  assert_equal 7, m.default
  h = {a: 1}
  assert_same h, h.merge!(b: 2)
  assert_same h, h.update({a: 5}) { |k, o, n| o + n }
  assert_equal({a: 6, b: 2}, h)
  assert_raise(TypeError, "no implicit conversion of Integer into Hash") { {}.merge(1) }
end

test "transform_keys and transform_values" do
  assert_equal({x: 1, "b" => 2}, {a: 1, b: 2}.transform_keys({a: :x}) { |k| k.to_s })
  assert_equal({"a" => 1}, {a: 1}.transform_keys(&:to_s))
  assert_equal({x: 1, b: 2}, {a: 1, b: 2}.transform_keys(a: :x))
  y = {a: 1, b: 2, c: 3}
  y.transform_keys! { |k| k == :a ? :b : (k == :b ? :a : k) }
  assert_equal({b: 1, a: 2, c: 3}, y)
  z = {a: 1, b: 2}
  z.transform_keys!(a: :b)
  assert_equal({b: 2}, z)
  assert_equal({a: 2}, {a: 1}.transform_values { |v| v * 2 })
  w = {a: 1}
  assert_same w, w.transform_values!(&:to_s)
  assert_equal({a: "1"}, w)
  assert_kind_of Enumerator, {a: 1}.transform_values
end

test "compact, invert, key, value?, assoc, rassoc" do
  sub = Class.new(Hash)
  h = sub.new(9)
  h[:a] = 1
  h[:b] = nil
  c = h.compact
  assert_equal({a: 1}, c)
  assert_equal sub, c.class
  assert_equal 9, c.default
  assert_same h, h.compact!
  assert_nil h.compact!
  assert_equal({1 => :a}, {a: 1}.invert)
  assert_equal :b, {a: 1, b: 2}.key(2)
  assert_nil({a: 1}.key(3))
  assert_true({a: 1}.value?(1))
  assert_true({a: 1}.has_value?(1.0))
  assert_equal [1, :a], {1 => :a}.assoc(1.0)
  assert_equal [:a, 1], {a: 1}.rassoc(1)
  i = {}.compare_by_identity
  k1 = "pear".dup
  i[k1] = :red
  i["pear".dup] = :green
  assert_equal ["pear", :red], i.assoc("pear")
end

test "dig, fetch_values, values_at, slice, except" do
  assert_equal 1, {a: {b: [1]}}.dig(:a, :b, 0)
  assert_equal 3, Hash.new(3).dig(:x)
  assert_raise(TypeError, "Integer does not have #dig method") { {a: 1}.dig(:a, :b) }
  assert_equal [1], {a: 1}.fetch_values(:a)
  assert_raise(KeyError, "key not found: :b") { {a: 1}.fetch_values(:b) }
  assert_equal [:b], {a: 1}.fetch_values(:b) { |k| k }
  assert_equal [1, nil], {a: 1, b: 2}.values_at(:a, :c)
  assert_equal({b: 2}, {a: 1, b: 2}.slice(:b, :z))
  assert_equal({a: 1}, {a: 1, b: 2}.except(:b))
end

test "shift ignores the default (3.2+)" do
  x = {a: 1, b: 2}
  assert_equal [:a, 1], x.shift
  assert_equal({b: 2}, x)
  assert_nil({}.shift)
  assert_nil Hash.new(5).shift
end

test "to_a, flatten, to_proc, to_h with block, sum, min_by" do
  assert_equal [[:a, 1]], {a: 1}.to_a
  assert_equal [:a, [1, [2]]], {a: [1, [2]]}.flatten
  assert_equal [:a, 1, [2]], {a: [1, [2]]}.flatten(2)
  assert_equal [[:a, 1]], {a: 1}.flatten(0)
  pr = {a: 1}.to_proc
  assert_true pr.lambda?
  assert_equal 1, pr.call(:a)
  assert_equal 1, pr.arity
  assert_equal [1], [:a].map(&{a: 1})
  assert_equal({1 => :a}, {a: 1}.to_h { |k, v| [v, k] })
  assert_raise(TypeError, "wrong element type Integer (expected array)") { {a: 1}.to_h { 1 } }
  assert_raise(ArgumentError, "element has wrong array length (expected 2, was 1)") { {a: 1}.to_h { [1] } }
  assert_equal [:a, 1], {a: 1}.sum([])
  assert_equal [:a, 1], {a: 1, b: 2}.min_by { |k, v| v }
  assert_equal [:b, 2], {a: 1, b: 2}.find { |k, v| v == 2 }
  assert_equal [[:b, 2], [:a, 1]], {a: 1, b: 2}.sort_by { |k, v| -v }
  assert_equal [1], {a: 1, b: nil}.filter_map { |k, v| v }
  assert_equal 1, {a: 1, b: 2}.count { |k, v| v > 1 }
  assert_equal [[[:a, 1], 0]], {a: 1}.each_with_index.to_a
  assert_equal({1 => [[:a, 1]]}, {a: 1}.group_by { |k, v| v })
end

test "subset comparisons" do
  assert_true({a: 1} <= {a: 1, b: 2})
  assert_false({a: 1} < {a: 1})
  assert_true({a: 1, b: 2} >= {b: 2})
  assert_false({a: 1} > {a: 1})
  assert_false({a: 1} <= {a: 2})
end

test "any? with pattern, block and without" do
  assert_true({a: 1}.any?)
  assert_false({}.any?)
  assert_true({a: 1}.any?([:a, 1]))
  assert_false({a: 1}.any? { |k, v| v > 1 })
end

test "adding a key during iteration raises" do
  x = {a: 1}
  assert_raise(RuntimeError, "can't add a new key into hash during iteration") { x.each { x[:b] = 2 } }
  x.each { x[:a] = 5 }
  assert_equal({a: 5}, x)
  x.each { x.delete(:a) }
  assert_equal({}, x)
  y = {a: 1, b: 2}
  assert_raise(RuntimeError, "rehash during iteration") { y.each { y.rehash } }
  assert_raise(RuntimeError, "compare_by_identity during iteration") { y.each { y.compare_by_identity } }
  y.select { y[:z] = 1 }
  assert_equal 1, y[:z]
  # after an exception the hash is no longer iterating
  y[:w] = 2
  assert_equal 2, y[:w]
  z = {a: 1}
  z.each_key { break }
  z[:new] = 1
  assert_equal 1, z[:new]
end

test "frozen hashes reject mutation" do
  z = {a: 1}.freeze
  [-> { z[:b] = 1 }, -> { z.delete(:a) }, -> { z.merge!({}) }, -> { z.shift }, -> { z.compact! },
   -> { z.select! { true } }, -> { z.transform_values!(&:to_s) }, -> { z.transform_keys!(&:to_s) },
   -> { z.default = 1 }, -> { z.clear }, -> { z.rehash }, -> { z.compare_by_identity },
   -> { z.keep_if { true } }, -> { z.store(:q, 1) }].each do |f|
    assert_raise(FrozenError, "can't modify frozen Hash: {a: 1}") { f.call }
  end
end

test "default procs, fetch, initialize" do
  h = Hash.new { |hash, k| hash[k] = k.to_s * 2 }
  assert_equal "aa", h[:a]
  assert_equal({a: "aa"}, h)
  assert_raise(KeyError, "key not found: :x") { {}.fetch(:x) }
  assert_equal 2, {}.fetch(:x) { 2 }
  h2 = {}
  h2.default = 42
  h2.send(:initialize)
  assert_nil h2.default
  obj = Object.new
  def obj.to_proc = proc { "Montreal" }
  h3 = {}
  h3.default_proc = obj
  assert_equal "Montreal", h3[:x]
  assert_raise(TypeError, "wrong default_proc type Integer (expected Proc)") { h3.default_proc = 1 }
end

test "equality, hash and recursion" do
  assert_not_equal({1 => 2}, {1 => 2}.compare_by_identity)
  assert_equal({}, {}.compare_by_identity)
  h = {}
  h[:x] = h
  assert_equal h.hash, {x: h}.hash
  assert_equal "{x: {...}}", h.inspect
end

test "aliases and enumerator names" do
  assert_equal Hash.instance_method(:each_pair), Hash.instance_method(:each)
  assert_equal Hash.instance_method(:update), Hash.instance_method(:merge!)
  assert_equal "#<Enumerator: {a: 1}:each>", {a: 1}.each.inspect
  assert_equal "#<Enumerator: {a: 1}:filter>", {a: 1}.filter.inspect
end

test "implicit conversion through method_missing" do
  o = Object.new
  def o.method_missing(name, *args)
    name == :to_hash ? {z: 1} : super
  end
  def o.respond_to_missing?(name, priv = false) = name == :to_hash
  assert_equal({z: 1}, Hash.try_convert(o))
  assert_equal({a: 1, z: 1}, {a: 1}.merge(o))
  assert_nil Hash.try_convert(Object.new)
end

test "inspect quotes symbol keys that need it (3.4)" do
  assert_equal '{"0": 1, "!": 1, a?: 2, b!: 3, "c=": 4, "+": 5, "[]": 6, "@x": 7, "a b": 8, Ab: 9}',
               {"0": 1, "!": 1, a?: 2, b!: 3, :c= => 4, :+ => 5, :[] => 6, :@x => 7, :"a b" => 8, Ab: 9}.inspect
  assert_equal "{1 => 2, nil => [], \"s\" => :t}", {1 => 2, nil => [], "s" => :t}.inspect
end

test "Hash[] and Hash.new argument errors" do
  assert_raise(ArgumentError, "wrong element type Integer at 0 (expected array)") { Hash[[1]] }
  assert_raise(ArgumentError, "invalid number of elements (3 for 1..2)") { Hash[[[1, 2, 3]]] }
  assert_raise(ArgumentError, "odd number of arguments for Hash") { Hash[1, 2, 3] }
  assert_raise(ArgumentError, "unknown keyword: :foo") { Hash.new(foo: 1) }
  assert_equal({}, Hash.new(capacity: 10))
  assert_equal({1 => nil, 2 => 3}, Hash[[[1], [2, 3]]])
end

test "select/reject on a large Hash keep exactly the chosen entries (deletion while iterating does not compact)" do
  h = {}
  40.times { |i| h["k#{i}"] = i % 5 == 0 ? "x" : "y#{i}" }
  assert_equal %w[k0 k5 k10 k15 k20 k25 k30 k35], h.select { |_, v| v == "x" }.keys
  assert_equal 32, h.reject { |_, v| v == "x" }.size
  g = h.dup
  g.select! { |_, v| v == "x" }
  assert_equal 8, g.size
  g = h.dup
  g.each { |k, v| g.delete(k) if v != "x" }
  assert_equal %w[k0 k5 k10 k15 k20 k25 k30 k35], g.keys
end

test "unfrozen String keys are stored as frozen copies, found again after growth" do
  h = {}
  keys = (0...100).map { |i| +"key#{i}" }
  keys.each_with_index { |k, i| h[k] = i }
  assert_equal 100, h.size
  stored = h.keys[7]
  assert_equal true, stored.frozen?
  assert_equal false, stored.equal?(keys[7])
  keys[7] << "changed"
  assert_equal nil, h["key7changed"]
  assert_equal 7, h["key7"]
  keys.each_with_index { |k, i| h[k] = -i }
  assert_equal 101, h.size
  assert_equal(-7, h["key7changed"])
  assert_equal 7, h["key7"]
  assert_equal(-99, h["key99"])
end
