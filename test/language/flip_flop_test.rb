require_relative "../assert"

# A flip-flop's state belongs to the method-level scope, so it persists
# across the calls of the block it is written in.

test "inclusive flip-flop in a block" do
  x = []
  10.times { |i| x << i if (i == 4)..(i == 7) }
  assert_equal [4, 5, 6, 7], x
end

test "exclusive flip-flop does not test the end on the same call" do
  y = []
  10.times { |i| y << i if (i == 4)...(i == 4) }
  assert_equal [4, 5, 6, 7, 8, 9], y
end

test "flip-flop in nested blocks of a method" do
  o = Object.new
  def o.run
    r = []
    5.times { |i| [1].each { r << i if (i == 1)..(i == 3) } }
    r
  end
  assert_equal [1, 2, 3], o.run
  assert_equal [1, 2, 3], o.run
end
