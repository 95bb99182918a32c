# A `&blk` parameter that the method only passes on (`other(&blk)`) is not made into a
# Proc (`GetBlockParamProxy`): the callee gets the caller's block as it was given. Every
# other use of the parameter (reading it, assigning it, a block or `binding` that can see
# it, `...`) binds a Proc as before. Both must behave the same.
require_relative "../assert"

class Relay
  def each_twice
    yield 1
    yield 2
  end

  def pass_on(&blk) = each_twice(&blk)
  def pass_anon(&) = each_twice(&)
  def pass_with_args(a, b, &blk) = [a, b, each_twice(&blk)]
  def given_and_passed(&blk) = [block_given?, (each_twice(&blk) if block_given?)]
  def kept(&blk) = [each_twice(&blk), blk]
  def reassigned(&blk)
    r = each_twice(&blk)
    blk = nil
    [r, blk]
  end
  def seen_in_block(&blk) = [1].map { each_twice(&blk) }
  def seen_by_binding(&blk) = [each_twice(&blk), binding.local_variable_get(:blk).class]
  def forwarded(...) = each_twice(...)
  def to_super(&blk) = Relay.instance_method(:each_twice).bind_call(self, &blk)
  def block_class(&blk) = capture(&blk)
  def capture(&blk) = blk
  def twice_down(&blk) = pass_on(&blk)
end

test "a passed-on block parameter reaches the callee" do
  r = Relay.new
  seen = []
  assert_equal 2, r.pass_on { |x| seen << x; x }
  assert_equal [1, 2], seen
  assert_equal 20, r.pass_anon { |x| seen << x * 10; x * 10 }
  assert_equal [1, 2, 10, 20], seen
  assert_equal [:a, :b, 2], r.pass_with_args(:a, :b) { |x| x }
  seen = []
  r.twice_down { |x| seen << x }
  assert_equal [1, 2], seen
end

test "without a block the callee sees none" do
  r = Relay.new
  assert_raise(LocalJumpError, "no block given (yield)") { r.pass_on }
  assert_equal [false, nil], r.given_and_passed
  assert_equal [true, 2], r.given_and_passed { |x| x }
  assert_nil r.block_class
end

test "Procs, lambdas, Symbols and Methods pass through" do
  r = Relay.new
  seen = []
  pr = proc { |x| seen << -x }
  assert_equal [-1, -2], r.pass_on(&pr)
  assert_equal [-1, -2], seen
  assert_equal "2", r.pass_on(&:to_s)
  assert_equal 4, r.pass_on(&->(x) { x * 2 })
  assert_equal 20, r.pass_on(&10.method(:*))
  assert_same pr, r.block_class(&pr)
end

test "break, next and return in a passed-on block" do
  r = Relay.new
  assert_equal 42, r.pass_on { |x| break 42 }
  assert_equal :n, r.pass_on { |x| next :n }
  def returns_from_block(r)
    r.pass_on { |x| return [:returned, x] }
    :not_reached
  end
  assert_equal [:returned, 1], returns_from_block(r)
end

test "a parameter used otherwise is a Proc" do
  r = Relay.new
  res, blk = r.kept { |x| x + 1 }
  assert_equal 3, res
  assert_kind_of Proc, blk
  assert_equal 5, blk.call(4)
  assert_equal [102, nil], r.reassigned { |x| x + 100 }
  assert_equal [2], r.seen_in_block { |x| x }
  assert_equal [2, Proc], r.seen_by_binding { |x| x }
  assert_equal 2, r.forwarded { |x| x }
  assert_equal 2, r.to_super { |x| x }
end

test "a passed-on block parameter keeps the method's parameters and arity" do
  m = Relay.instance_method(:pass_on)
  assert_equal [[:block, :blk]], m.parameters
  assert_equal 0, m.arity
  assert_equal [[:req, :a], [:req, :b], [:block, :blk]], Relay.instance_method(:pass_with_args).parameters
  assert_raise(ArgumentError, "wrong number of arguments (given 1, expected 0)") { Relay.new.pass_on(1) { } }
end

test "the block's self and locals are the caller's" do
  r = Relay.new
  total = 0
  r.pass_on { |x| total += x }
  assert_equal 3, total
  assert_same self, r.pass_on { self }
end
