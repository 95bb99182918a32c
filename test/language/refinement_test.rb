require_relative "../assert"

module StringShout
  refine String do
    def shout = upcase + "!"
    def size = super * 10
    def to_s = "refined"
  end
end

class Greeter
  def hi = "hi"
  # Defined before `using`: its call of `hi` is not refined.
  def early_hi = hi
end

module GreeterPolite
  refine Greeter do
    def hi = "#{super}, please"
    def polite? = true
  end
end

# Before `using`, nothing is refined here.
test "refinements are invisible until using" do
  assert_raise(NoMethodError) { "a".shout }
  assert_equal 1, "a".size
end

using StringShout
using GreeterPolite

test "refined methods, super into the refined class, and indirect calls" do
  assert_equal "AB!", "ab".shout
  assert_equal 20, "ab".size
  assert_equal "hi, please", Greeter.new.hi
  assert_equal "hi, please", Greeter.new.send(:hi)
  assert_equal "hi, please", Greeter.new.public_send(:hi)
  assert_equal ["X!", "Y!"], %w[x y].map(&:shout)
  assert_true Greeter.new.respond_to?(:polite?)
  assert_equal "hi, please", Greeter.new.method(:hi).call
  assert_equal [StringShout, GreeterPolite].sort_by(&:name), Module.used_modules.sort_by(&:name)
end

test "Refinement objects and errors" do
  r = StringShout.refinements.first
  assert_equal Refinement, r.class
  assert_equal String, r.target
  assert_equal "#<refinement:String@StringShout>", r.inspect
  assert_raise(TypeError, "wrong argument type Class (expected Module)") { Module.new { using String } }
  assert_raise(TypeError, "Cannot include refinement") { Class.new { include r } }
  assert_raise(NoMethodError) { Class.new { refine(String) {} } }
  assert_raise(RuntimeError, "Module#using is not permitted in methods") do
    m = Module.new { def self.go = using(StringShout) }
    m.go
  end
end

test "a refinement applies to call sites after using, not to methods defined before" do
  assert_equal "hi", Greeter.new.early_hi
end

test "refined operators of core classes are called from instructions with fast paths" do
  out, _err, status = run_carmine(<<~RUBY)
    module R
      refine(Integer) { def +(o) = 42 }
      refine(Array) { def size = 43 }
      refine(Hash) { def empty? = :refined }
    end
    p [1 + 2, [1].size, {}.empty?]
    using R
    p [1 + 2, [1].size, {}.empty?]
  RUBY
  assert status.success?
  assert_equal "[3, 1, true]\n[42, 43, :refined]\n", out
end
