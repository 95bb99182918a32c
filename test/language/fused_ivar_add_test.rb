# `@x += k` as a statement runs as one instruction (`AddIvarI`, compile/peephole.rs) when the
# variable holds a Fixnum; every other case takes the four instructions it stands for, with
# CRuby's results and errors.
require_relative "../assert"

class IvarCounter
  attr_reader :n
  def initialize(n = 0) = (@n = n)
  def bump = (@n += 2; nil)
  def bump_one = (@n += 1; nil)
  def bump_unset = (@unset += 1; nil)
  def bump_used = (@n += 1)
end

test "Fixnum updates, and into Bignum" do
  c = IvarCounter.new
  3.times { c.bump }
  assert_equal 6, c.n
  c = IvarCounter.new(2**62 - 1)
  c.bump_one
  assert_equal 2**62, c.n
  c.bump_one
  assert_equal 2**62 + 1, c.n
  assert_equal 2**62 + 2, c.bump_used
end

test "other values take the method call" do
  c = IvarCounter.new(1.5)
  c.bump
  assert_equal 3.5, c.n
  c = IvarCounter.new("s")
  assert_raise(TypeError) { c.bump }
  assert_raise(NoMethodError) { IvarCounter.new.bump_unset }
end

test "a frozen receiver raises FrozenError" do
  c = IvarCounter.new
  c.bump
  c.freeze
  e = assert_raise(FrozenError) { c.bump }
  assert_equal c, e.receiver
  assert_equal 2, c.n
end

test "objects of other layouts share the site" do
  other = Class.new(IvarCounter) { def initialize = (@a = 1; @b = 2; @n = 10) }.new
  plain = IvarCounter.new
  4.times { other.bump; plain.bump }
  assert_equal [18, 8], [other.n, plain.n]
end

test "a redefined Integer#+ is called" do
  c = IvarCounter.new
  class Integer
    alias_method :fused_ivar_test_orig_plus, :+
    def +(o) = fused_ivar_test_orig_plus(o).fused_ivar_test_orig_plus(100)
  end
  begin
    c.bump
  ensure
    class Integer
      alias_method :+, :fused_ivar_test_orig_plus
    end
  end
  assert_equal 102, c.n
  c.bump
  assert_equal 104, c.n
end

class IvarDown
  attr_reader :n
  def initialize(n) = (@n = n)
  def down = (@n += -3; nil)
end

test "a negative step takes the four instructions" do
  c = IvarDown.new(1)
  2.times { c.down }
  assert_equal(-5, c.n)
  c = IvarDown.new(-2**62)
  c.down
  assert_equal(-2**62 - 3, c.n)
  c = IvarDown.new(0.5)
  c.down
  assert_equal(-2.5, c.n)
end
