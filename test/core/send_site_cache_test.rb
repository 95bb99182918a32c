require_relative "../assert"

# `send`/`public_send` at one call site remember the last target per receiver class and
# name: every change of class, name, visibility or definition must still find the right one.

class SendCacheA
  def m(x) = [:a_m, x]
  def n(x) = [:a_n, x]
  private def priv(x) = [:a_priv, x]
end

class SendCacheB
  def m(x) = [:b_m, x]
  def method_missing(name, *args) = name == :n ? [:b_missing, *args] : super
  def respond_to_missing?(name, priv = false) = name == :n || super
end

def send_at_one_site(obj, name, x) = obj.send(name, x)
def public_send_at_one_site(obj, name, x) = obj.public_send(name, x)

test "one send site follows the receiver's class and the name" do
  a, b = SendCacheA.new, SendCacheB.new
  got = [[a, :m], [a, :n], [b, :m], [a, :m], [b, :n], [a, :priv], [a, :n]].map { |o, name| send_at_one_site(o, name, 1) }
  assert_equal [[:a_m, 1], [:a_n, 1], [:b_m, 1], [:a_m, 1], [:b_missing, 1], [:a_priv, 1], [:a_n, 1]], got
end

test "public_send at one site refuses private methods after calling public ones" do
  a = SendCacheA.new
  assert_equal [:a_m, 2], public_send_at_one_site(a, :m, 2)
  assert_raise(NoMethodError) { public_send_at_one_site(a, :priv, 2) }
  assert_equal [:a_n, 3], public_send_at_one_site(a, :n, 3)
end

test "a redefined or removed method is seen by the next send" do
  klass = Class.new { def t(x) = x + 1 }
  o = klass.new
  assert_equal 2, send_at_one_site(o, :t, 1)
  klass.class_eval { def t(x) = x * 10 }
  assert_equal 10, send_at_one_site(o, :t, 1)
  klass.send(:private, :t)
  assert_equal 10, send_at_one_site(o, :t, 1)
  assert_raise(NoMethodError) { public_send_at_one_site(o, :t, 1) }
  klass.send(:remove_method, :t)
  assert_raise(NoMethodError) { send_at_one_site(o, :t, 1) }
end

test "a singleton method on one object is not used for another of its class" do
  a1, a2 = SendCacheA.new, SendCacheA.new
  def a1.m(x) = [:single, x]
  assert_equal [[:single, 1], [:a_m, 1], [:single, 1]], [a1, a2, a1].map { |o| send_at_one_site(o, :m, 1) }
end

test "send with builtin targets and Strings as names" do
  assert_equal [3, "ab", 5], [[1, :+, 2], ["a", :+, "b"], [2, "+", 3]].map { |o, name, x| send_at_one_site(o, name, x) }
end
