require_relative "../assert"

test "case/in calls #deconstruct once for the subject" do
  calls = 0
  obj = Object.new
  obj.define_singleton_method(:deconstruct) { calls += 1; [0, 1] }
  r = case obj
      in [1, 2] then :a
      in [0, 1] then :b
      end
  assert_equal :b, r
  assert_equal 1, calls
end

test "an Array with its own #deconstruct is asked" do
  obj = [1, 2]
  def obj.deconstruct = [3, 4]
  assert_true(case obj; in [3, 4] then true; else false; end)
end

test "respond_to? decides whether #deconstruct exists" do
  obj = Object.new
  def obj.respond_to?(name, priv = false) = false
  def obj.deconstruct = [1]
  assert_false((obj in [1]))
end

test "hash pattern rest" do
  case { a: 1, b: 2 }
  in { a: 1, **rest }
    assert_equal({ b: 2 }, rest)
  end
end

test "for with several targets takes whole elements" do
  got = []
  for i, *j in [[1, 2, 3]]
    got << i << j
  end
  assert_equal [1, [2, 3]], got
  sum = 0
  for k, v in { 1 => 10, 2 => 20 }
    sum += k + v
  end
  assert_equal 33, sum
  for a, b in [[5, 6]]; end
  assert_equal [5, 6], [a, b]
end
