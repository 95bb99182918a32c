# `a[i] = v` with an Integer index: stores into an existing element in place, and every
# other case (negative index, growth, frozen receiver, subclasses, redefinition) keeps
# Array#[]='s behaviour.
require_relative "../assert"

test "stores over existing elements, first and last included" do
  a = [1, 2, 3]
  i = 0
  while i < 3
    a[i] = a[i] * 10
    i += 1
  end
  assert_equal [10, 20, 30], a
  assert_equal :x, (a[2] = :x)
  assert_equal [10, 20, :x], a
end

test "negative indexes count from the end, too small ones raise IndexError" do
  a = [1, 2, 3]
  a[-1] = :last
  a[-3] = :first
  assert_equal [:first, 2, :last], a
  e = assert_raise(IndexError) { a[-4] = 0 }
  assert_equal "index -4 too small for array; minimum: -3", e.message
end

test "an index at or past the end grows the Array, padding with nil" do
  a = [1]
  a[1] = 2
  a[4] = 5
  assert_equal [1, 2, nil, nil, 5], a
  b = []
  b[0] = :only
  assert_equal [:only], b
end

test "a frozen Array raises FrozenError and keeps its elements" do
  a = [1, 2, 3].freeze
  e = assert_raise(FrozenError) { a[0] = 9 }
  assert_equal "can't modify frozen Array: [1, 2, 3]", e.message
  assert_raise(FrozenError) { a[5] = 9 }
  assert_raise(FrozenError) { a.send(:[]=, 1, 9) }
  assert_equal [1, 2, 3], a
end

test "elements of a shifted Array and of a large one are the right slots" do
  a = (1..20).to_a
  a.shift
  a.shift
  a[0] = :a
  a[17] = :z
  assert_equal [:a, 4, 5], a.first(3)
  assert_equal [19, :z], a.last(2)
  assert_equal 18, a.size
end

test "subclasses and a redefined []= are respected" do
  sub = Class.new(Array) do
    def []=(i, v)
      super(i, v.to_s)
    end
  end
  s = sub.new([1, 2])
  s[0] = 5
  assert_equal ["5", 2], s.to_a
  out, err, status = run_carmine(<<~RUBY)
    class Array
      def []=(i, v)
        print("set \#{i} \#{v}")
      end
    end
    a = [1, 2]
    a[0] = 7
    print " \#{a.inspect}"
  RUBY
  assert_equal "", err
  assert_equal true, status.success?
  assert_equal "set 0 7 [1, 2]", out
end

test "young values stored into an old Array survive collections" do
  a = Array.new(64) { |i| i }
  3.times { GC.start }
  i = 0
  while i < 64
    a[i] = "v#{i}" * 3
    i += 1
  end
  GC.start(full_mark: false)
  GC.start
  assert_equal "v7v7v7", a[7]
  assert_equal "v63v63v63", a[63]
end
