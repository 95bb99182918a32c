# Hash#each / #each_pair yield [key, value]; a block (not a lambda) that requires two or more
# positional parameters gets the two values without the pair being made. What every block
# shape binds must be what the pair would bind.
require_relative "../assert"

H = {a: 1, "b" => [2, 3], nil => {c: 4}}.freeze

def collect_pairs(h, &blk)
  out = []
  h.each { |*x| out << blk.call(*x) }
  out
end

test "two parameters get the key and the value" do
  seen = []
  H.each { |k, v| seen << [k, v] }
  assert_equal [[:a, 1], ["b", [2, 3]], [nil, {c: 4}]], seen
  seen = []
  H.each_pair { |k, v| seen << [k, v] }
  assert_equal [[:a, 1], ["b", [2, 3]], [nil, {c: 4}]], seen
end

test "one parameter, a splat, optionals and destructuring get the pair" do
  assert_equal [[:a, 1], ["b", [2, 3]], [nil, {c: 4}]], H.each.map { |pr| pr }
  one = []
  H.each { |pr| one << pr }
  assert_equal [[:a, 1], ["b", [2, 3]], [nil, {c: 4}]], one
  splat = []
  H.each { |*a| splat << a }
  assert_equal [[[:a, 1]], [["b", [2, 3]]], [[nil, {c: 4}]]], splat
  opt = []
  H.each { |k, v = :none| opt << [k, v] }
  assert_equal [[:a, 1], ["b", [2, 3]], [nil, {c: 4}]], opt
  rest = []
  H.each { |k, v, *r| rest << [k, v, r] }
  assert_equal [[:a, 1, []], ["b", [2, 3], []], [nil, {c: 4}, []]], rest
  three = []
  H.each { |k, v, x| three << [k, v, x] }
  assert_equal [[:a, 1, nil], ["b", [2, 3], nil], [nil, {c: 4}, nil]], three
  nested = []
  H.each { |k, (x, y)| nested << [k, x, y] }
  assert_equal [[:a, 1, nil], ["b", 2, 3], [nil, {c: 4}, nil]], nested
  comma = []
  H.each { |k,| comma << k }
  assert_equal [:a, "b", nil], comma
  numbered = []
  H.each { numbered << [_1, _2] }
  assert_equal [[:a, 1], ["b", [2, 3]], [nil, {c: 4}]], numbered
  firsts = []
  H.each { firsts << _1 }
  assert_equal [[:a, 1], ["b", [2, 3]], [nil, {c: 4}]], firsts
end

test "procs and lambdas passed with &" do
  seen = []
  pr = proc { |k, v| seen << [k, v] }
  {x: 1}.each(&pr)
  assert_equal [[:x, 1]], seen
  rest = []
  {x: 1}.each(&proc { |k, *r| rest << [k, r] })
  assert_equal [[:x, [1]]], rest
  one = []
  {x: 1}.each(&->(pr) { one << pr })
  assert_equal [[:x, 1]], one
  e = assert_raise(ArgumentError) { {x: 1}.each(&->(k, v) { }) }
  assert_equal "wrong number of arguments (given 1, expected 2)", e.message
  assert_equal [[:x, "1"]], collect_pairs({x: 1}) { |k, v| [k, v.to_s] }
end

test "break, next, exceptions and changes during the iteration" do
  h = {a: 1, b: 2, c: 3}
  assert_equal :b, h.each { |k, v| break k if v == 2 }
  sum = 0
  h.each do |k, v|
    next if k == :a
    sum += v
  end
  assert_equal 5, sum
  e = assert_raise(RuntimeError) { h.each { |k, v| raise "at #{k}" if v == 3 } }
  assert_equal "at c", e.message
  assert_true e.backtrace.any? { |l| l =~ /'Hash#each'|`each'/ }
  assert_raise(RuntimeError) { h.each { |k, v| h[:"n#{v}"] = v } }
  h.each { |k, v| h[k] = v * 10 }
  assert_equal({a: 10, b: 20, c: 30}, h)
  h.each { |k, v| h.delete(:c) if k == :a }
  assert_equal({a: 10, b: 20}, h)
end

test "large hashes and garbage collection during the iteration" do
  h = {}
  500.times { |i| h["k#{i}"] = i }
  sum = 0
  keys = 0
  h.each do |k, v|
    GC.start if v % 100 == 0
    sum += v
    keys += k.size
  end
  assert_equal 124_750, sum
  assert_equal h.keys.sum(&:size), keys
end
