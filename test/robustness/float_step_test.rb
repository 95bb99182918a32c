require_relative "../assert"

# Numeric#step with an infinite Float step yields its start once (CRuby's ruby_float_step);
# it used to yield NaN and then Infinity forever, until memory ran out. Found by the
# panic-freedom check on ruby/spec core/numeric/step_spec.rb.

def steps(*args, **kw)
  out = []
  r = 42.step(*args, **kw) { |x| out << x; break if out.size > 5 }
  [out, r]
end

test "an infinite step yields the start once, towards the limit" do
  assert_equal [[42.0], 42], steps(Float::INFINITY, Float::INFINITY)
  assert_equal [[42.0], 42], steps(by: Float::INFINITY, to: Float::INFINITY)
  assert_equal [[42.0], 42], steps(42, Float::INFINITY)
  assert_equal [[42.0], 42], steps(0, -Float::INFINITY)
  assert_equal [[], 42], steps(0, Float::INFINITY)
  assert_equal [[], 42], steps(100, -Float::INFINITY)
end

test "infinite steps through Range#step and ArithmeticSequence" do
  assert_equal [1.0], (1.0..2.0).step(Float::INFINITY).to_a
  assert_equal 1, 1.0.step(2.0, Float::INFINITY).size
  assert_equal 0, 1.0.step(0.0, Float::INFINITY).size
  assert_equal [1.0, 1.5, 2.0], 1.0.step(2.0, 0.5).to_a
end
