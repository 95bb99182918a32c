require_relative "../assert"

test "Enumerator.product iterates the Cartesian product, last enumerable fastest" do
  e = Enumerator.product(1..2, %w[a b])
  assert_kind_of Enumerator::Product, e
  assert_equal [[1, "a"], [1, "b"], [2, "a"], [2, "b"]], e.to_a
  assert_equal 4, e.size
  assert_equal [[]], Enumerator.product.to_a
  acc = []
  assert_nil Enumerator.product([1], [2]) { |x| acc << x }
  assert_equal [[1, 2]], acc
  assert_equal [[1, "a"], [1, "b"], [2, "a"]], Enumerator.product(1.., %w[a b]).take(3)
  assert_equal Float::INFINITY, Enumerator.product(1.., [1]).size
  assert_equal 0, Enumerator.product(1.., []).size
  e = assert_raise(ArgumentError) { Enumerator.product([1], foo: 1) }
  assert_equal "unknown keywords: :foo", e.message
end

test "Enumerator::Product uses each_entry, is lazy about it, and rewinds" do
  o = Object.new
  def o.each_entry; yield 1; yield 2; end
  def o.rewind; @rewound = true; end
  def o.rewound?; @rewound; end
  p = Enumerator::Product.new(o, [:x])
  assert_equal [[1, :x], [2, :x]], p.each.to_a
  assert_same p, p.each {}
  assert_same p, p.rewind
  assert o.rewound?
  assert_kind_of Enumerator::Product, Enumerator.product(Object.new)
  assert_raise(NoMethodError) { Enumerator.product(Object.new).to_a }
  assert_equal "#<Enumerator::Product: [[1, 2], [:a]]>", Enumerator::Product.new([1, 2], [:a]).inspect
  assert_equal "#<Enumerator::Product: uninitialized>", Enumerator::Product.allocate.inspect
  assert_equal [[[1, :a], 0], [[2, :a], 1]], Enumerator::Product.new([1, 2], [:a]).each_with_index.to_a
end

test "Enumerable#chain and Enumerator#+ iterate one after the other" do
  c = [1, 2].chain(3..4)
  assert_kind_of Enumerator::Chain, c
  assert_equal [1, 2, 3, 4], c.to_a
  assert_equal 4, c.size
  assert_equal [[1, 0], [2, 1], [3, 2], [4, 3]], c.with_index.to_a
  assert_equal [1, 2], c.each_slice(2).first
  assert_raise(NoMethodError) { c.next }
  assert !c.respond_to?(:peek)
  d = [1].each + [2]
  assert_equal [1, 2], d.to_a
  assert_equal "#<Enumerator::Chain: [1..2, [3]]>", (1..2).chain([3]).inspect
  assert_equal "#<Enumerator::Chain: uninitialized>", Enumerator::Chain.allocate.inspect
  assert_nil [1].chain(Object.new.tap { |o| def o.size = nil }).size
  assert_equal Float::INFINITY, [1].chain(1..).size
end

test "Enumerator::Chain#rewind rewinds what was iterated, last first" do
  log = []
  mk = ->(name) { o = Object.new; o.define_singleton_method(:each) { |&b| b.call(name) }; o.define_singleton_method(:rewind) { log << name }; o }
  a, b = mk.(:a), mk.(:b)
  c = Enumerator::Chain.new(a, b)
  c.rewind
  assert_equal [], log
  assert_equal [:a, :b], c.to_a
  assert_same c, c.rewind
  assert_equal [:b, :a], log
end

test "Enumerator#with_index without a block is sized; produce needs a block" do
  assert_equal 3, [1, 2, 3].each.with_index.size
  assert_equal 3, [1, 2, 3].each.each_with_index.size
  e = assert_raise(ArgumentError) { Enumerator.produce }
  assert_equal "no block given", e.message
end

test "Lazy#to_enum of a method Lazy overrides iterates with the eager original" do
  lz = (0..Float::INFINITY).lazy
  assert_equal [[0, 10], [1, 11]], lz.to_enum(:with_index, 10).first(2)
  assert_equal [0, 1], lz.to_enum(:map).first(2)
  assert_equal "#<Enumerator::Lazy: uninitialized>", Enumerator::Lazy.allocate.inspect
end
