# `recv[i] op= v`, `recv[i] ||= v` and `recv[i] &&= v` with one index read and write
# through the operator instructions (`OptAref`/`OptAset`): Hash defaults, Arrays, user
# classes, frozen receivers, private methods through self, redefinition.
require_relative "../assert"

test "Hashes with defaults, default procs and ||=" do
  h = Hash.new(0)
  %w[a b a].each { |w| h[w] += 1 }
  assert_equal({"a" => 2, "b" => 1}, h)
  lists = Hash.new { |hash, k| hash[k] = [] }
  lists[:x] += [1]
  lists[:y] += [2, 3]
  assert_equal({x: [1], y: [2, 3]}, lists)
  g = {}
  3.times { |i| (g[i % 2] ||= []) << i }
  assert_equal({0 => [0, 2], 1 => [1]}, g)
  g[0] &&= :set
  g[5] &&= :never
  assert_equal({0 => :set, 1 => [1]}, g)
  assert_equal 5, (h["c"] += 5)
end

test "Arrays, negative and missing indexes" do
  a = [1, 2, 3]
  a[0] += 10
  a[-1] *= 2
  a[5] ||= :far
  assert_equal [11, 2, 6, nil, nil, :far], a
  assert_raise(NoMethodError) { [][0] += 1 }
end

test "user classes, frozen receivers and self with private methods" do
  k = Class.new do
    def initialize = (@d = {})
    def [](i) = @d.fetch(i, 0)
    def []=(i, v)
      @d[i] = v * 10
    end
    def bump = (self[:z] += 1)
    private def secret = nil
  end
  o = k.new
  o[:a] += 2
  assert_equal 20, o[:a]
  assert_equal [1, 10], [o.bump, o[:z]]
  p = Class.new do
    def initialize = (@v = 1)
    def run = (self[0] += 1; @v)
    private
    def [](i) = @v
    def []=(i, v)
      @v = v
    end
  end
  assert_equal 2, p.new.run
  assert_raise(FrozenError) { {a: 1}.freeze[:a] += 1 }
  assert_raise(FrozenError) { [1].freeze[0] += 1 }
  s = +"abc"
  s[1] += "X"
  assert_equal "abXc", s
end

test "a redefined Hash#[] and a prepended Array#[]= are called" do
  out, _err, status = run_carmine(<<~RUBY)
    h = {a: 1}
    h[:a] += 1
    class Hash; def [](k) = 100; end
    h[:a] += 1
    module Twice
      def []=(i, v)
        super(i, v * 2)
      end
    end
    Array.prepend(Twice)
    a = [1]
    a[0] += 1
    p [h.fetch(:a), a]
  RUBY
  assert status.success?
  assert_equal "[101, [4]]\n", out
end
