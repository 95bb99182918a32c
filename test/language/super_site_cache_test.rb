# A `super` call site remembers the method it found per receiver class (`ops::super_method`):
# receivers of several classes at one site, methods defined or modules mixed in later,
# aliases, a module prepended at two levels and a module method bound to another class
# all find what CRuby finds.
require_relative "../assert"

class SBase
  def who = [:base]
end

class SMid < SBase
  def who = [:mid] + super
end

class SLeaf1 < SMid; end
class SLeaf2 < SMid
  def who = [:leaf2] + super
end

test "one super site with receivers of several classes" do
  objs = [SMid.new, SLeaf1.new, SLeaf2.new]
  r = 3.times.flat_map { objs.map(&:who) }
  assert_equal [[:mid, :base], [:mid, :base], [:leaf2, :mid, :base]] * 3, r
end

test "methods defined and modules mixed in after the site has run" do
  k = Class.new(SMid)
  o = k.new
  assert_equal [:mid, :base], o.who
  m = Module.new { def who = [:mod] + super }
  SMid.include(m)
  assert_equal [:mid, :mod, :base], o.who
  SBase.class_eval { def who = [:base2] }
  assert_equal [:mid, :mod, :base2], o.who
  SBase.class_eval { def who = [:base] }
end

test "aliases and define_method copies call super by the original name" do
  a = Class.new { def greet = "a" }
  b = Class.new(a) do
    def greet = super + "b"
    alias_method :hello, :greet
    define_method(:hi, instance_method(:greet))
  end
  o = b.new
  assert_equal ["ab", "ab", "ab"], [o.greet, o.hello, o.hi]
  assert_equal ["ab", "ab"], [o.hello, o.greet]
end

test "a module prepended to a class and to its superclass" do
  m = Module.new { def val = [:m] + super }
  base = Class.new { def val = [:base] }
  sub = Class.new(base) { def val = [:sub] + super }
  base.prepend(m)
  sub.prepend(m)
  2.times { assert_equal [:m, :sub, :m, :base], sub.new.val }
  assert_equal [:m, :base], base.new.val
end

test "super without a method above raises NoMethodError each time" do
  k = Class.new { def lone = super }
  2.times { assert_raise(NoMethodError) { k.new.lone } }
  k.superclass.class_eval { def lone = :found }
  assert_equal :found, k.new.lone
ensure
  Object.send(:remove_method, :lone) if Object.private_method_defined?(:lone) || Object.method_defined?(:lone)
end
