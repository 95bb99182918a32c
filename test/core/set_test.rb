require_relative "../assert"

test "construction" do
  assert_equal [1, 2, 3], Set[1, 2, 3].to_a
  assert_equal [1, 2], Set.new([1, 2, 1]).to_a
  assert_equal [10, 20], Set.new([1, 2]) { |x| x * 10 }.to_a
  assert_equal [1, 2, 3], Set.new(1..3).to_a
  assert_equal [], Set.new.to_a
  assert_equal [], Set.new(nil).to_a
  assert_raise(ArgumentError, "value must be enumerable") { Set.new(1) }
  assert_equal Set[1, 2], [1, 2, 2].to_set
  s = Set[1]
  assert_same s, s.to_set
  require "set"
end

test "membership" do
  s = Set[1, 2, 3]
  assert_true s.include?(2)
  assert_true s.member?(3)
  assert_true s === 1
  assert_false s.include?(4)
  assert_false Set[1].include?(1.0)
  assert_equal 3, s.size
  assert_equal 3, s.length
  assert_false s.empty?
  assert_true Set[].empty?
  r = case 2
      when Set[1, 2] then :yes
      end
  assert_equal :yes, r
end

test "add, delete and friends" do
  s = Set[1]
  assert_same s, s.add(2)
  assert_same s, s << 3
  assert_nil s.add?(3)
  assert_same s, s.add?(4)
  assert_same s, s.delete(4)
  assert_nil s.delete?(9)
  assert_same s, s.delete?(3)
  assert_equal [1, 2], s.to_a
  assert_same s, s.merge([5], Set[6])
  assert_same s, s.subtract([5, 6])
  assert_equal Set[1, 2], s
  assert_same s, s.clear
  assert_true s.empty?
  str = "x"
  t = Set[str]
  assert_true t.first.frozen?
end

test "filtering in place" do
  s = Set[1, 2, 3, 4]
  assert_same s, s.delete_if(&:even?)
  assert_equal Set[1, 3], s
  assert_same s, s.keep_if { |x| x > 1 }
  assert_equal Set[3], s
  assert_nil Set[1].reject!(&:even?)
  assert_equal Set[1], Set[1, 2].select!(&:odd?)
  assert_nil Set[1].filter!(&:odd?)
  m = Set[1, 2]
  assert_same m, m.map! { |x| x * 2 }
  assert_equal Set[2, 4], m
  assert_equal 2, Set[1, 2].delete_if.size
end

test "set algebra" do
  a = Set[1, 2, 3]
  assert_equal Set[1, 2, 3, 4], a | [4]
  assert_equal Set[1, 2, 3, 4], a + Set[4]
  assert_equal Set[1, 2, 3, 4], a.union([4])
  assert_equal Set[2], a & [2, 9]
  assert_equal Set[2], a.intersection(Set[2, 9])
  assert_equal Set[2, 3], a - [1]
  assert_equal Set[2, 3], a.difference([1])
  assert_equal Set[4, 1, 2], a ^ [3, 4]
  assert_equal [4, 1, 2], (a ^ [3, 4]).to_a
  assert_equal Set[1, 2, 3], a
end

test "subset relations and comparison" do
  a = Set[1, 2]
  assert_true a.subset?(Set[1, 2, 3])
  assert_true a <= Set[1, 2]
  assert_true a < Set[1, 2, 3]
  assert_false a < Set[1, 2]
  assert_true Set[1, 2, 3].superset?(a)
  assert_true Set[1, 2, 3] > a
  assert_true a >= a
  assert_raise(ArgumentError, "value must be a set") { a.subset?([1]) }
  assert_equal [0, -1, 1, nil, nil], [a <=> Set[2, 1], a <=> Set[1, 2, 3], a <=> Set[1], a <=> Set[3], a <=> 1]
  assert_true a.intersect?(Set[2, 5])
  assert_true a.intersect?([2])
  assert_true a.disjoint?(Set[7])
  assert_raise(ArgumentError) { a.intersect?(1) }
end

test "equality and hashing" do
  assert_equal Set[1, 2], Set[2, 1]
  assert_not_equal Set[1, 2], [1, 2]
  assert_true Set[1].eql?(Set[1])
  assert_false Set[1].eql?(Set[1.0])
  assert_equal Set[1, 2].hash, Set[2, 1].hash
  assert_equal 2, {Set[1] => 2}[Set[1]]
  sub = Class.new(Set)
  assert_true sub[1] == Set[1]
end

test "grouping and flattening" do
  assert_equal({true => Set[1, 3], false => Set[2]}, Set[1, 2, 3].classify(&:odd?))
  d = Set[1, 3, 4, 6, 9, 10, 11].divide { |i, j| (i - j).abs == 1 }
  assert_equal Set[Set[1], Set[3, 4], Set[6], Set[9, 10, 11]], d
  assert_equal Set[Set[1, 3], Set[2, 4]], Set[1, 2, 3, 4].divide(&:odd?)
  assert_equal Set[1, 2, 3], Set[1, Set[2, Set[3]]].flatten
  f = Set[1, Set[2]]
  assert_same f, f.flatten!
  assert_nil Set[1].flatten!
  r = Set[]
  r << r
  assert_raise(ArgumentError, "tried to flatten recursive Set") { r.flatten }
end

test "Enumerable methods" do
  s = Set[3, 1, 2]
  assert_equal [1, 2, 3], s.sort
  assert_equal 1, s.min
  assert_equal 3, s.max
  assert_equal [6, 2, 4], s.map { |x| x * 2 }
  assert_equal({true => [3, 1], false => [2]}, s.group_by(&:odd?))
  assert_equal [[3, 1], [2]], s.partition(&:odd?)
  assert_equal "3-1-2", s.join("-")
  assert_equal 6, s.sum
  e = s.each
  assert_equal 3, e.size
end

test "inspect" do
  assert_equal "#<Set: {1, 2}>", Set[1, 2].inspect
  assert_equal "#<Set: {}>", Set[].to_s
  r = Set[1]
  r << r
  assert_equal "#<Set: {1, #<Set: {...}>}>", r.inspect
end

test "compare_by_identity" do
  s = Set.new.compare_by_identity
  a = "a"
  s << a << a.dup
  assert_equal 2, s.size
  assert_true s.compare_by_identity?
  assert_false Set[].compare_by_identity?
end

test "frozen sets and iteration" do
  f = Set[1].freeze
  assert_true f.frozen?
  assert_raise(FrozenError, "can't modify frozen Hash: {1 => true}") { f << 2 }
  assert_raise(FrozenError) { f.delete(1) }
  assert_raise(FrozenError) { f.clear }
  assert_raise(FrozenError) { f.merge([3]) }
  c = f.clone(freeze: false)
  c << 2
  assert_equal Set[1, 2], c
  d = f.dup
  d << 3
  assert_equal Set[1, 3], d
  s = Set[1, 2]
  assert_raise(RuntimeError, /iteration/) { s.each { s << 3 } }
  assert_raise(RuntimeError, /iteration/) { s.each { s.replace(Set[1]) } }
end
