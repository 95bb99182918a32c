require_relative "../assert"

# The dispatch loop's cached call (`interp::ops::fast_target`, `call::push_fast_method_frame`)
# and its plain return: methods with required and optional parameters entered straight from
# a call site's inline cache, at the entry point for the number of arguments given. Each
# call runs in a loop so that the site's cache is filled before the calls that are checked.
# Expected values and messages are CRuby 3.4's.

class OptTarget
  attr_reader :log

  def initialize = (@log = [])
  def one(a, b = 2) = [a, b]
  def two(a, b = a + 1, c = b * 10) = [a, b, c]
  def only(a = :x, b = :y) = [a, b]
  def side(a, b = (@log << :default; 7)) = [a, b]
  def with_locals(a, b = 1)
    c = a + b
    d = [c, d]
    d
  end
  def calls_self(a = helper) = a
  def helper = :helped
  def with_block(a, b = 2) = yield(a + b)
  def nested(n, acc = 0) = n == 0 ? acc : nested(n - 1, acc + n)
  def default_sees_self(a = self) = a
  def raises(a, b = raise(ArgumentError, "in default")) = [a, b]
end

def run_n(n = 3)
  r = nil
  n.times { r = yield }
  r
end

test "optional parameters get their defaults for each count of arguments" do
  o = OptTarget.new
  assert_equal [1, 2], run_n { o.one(1) }
  assert_equal [1, 5], run_n { o.one(1, 5) }
  assert_equal [1, 2, 20], run_n { o.two(1) }
  assert_equal [1, 4, 40], run_n { o.two(1, 4) }
  assert_equal [1, 4, 9], run_n { o.two(1, 4, 9) }
  assert_equal [:x, :y], run_n { o.only }
  assert_equal [1, :y], run_n { o.only(1) }
  assert_equal [1, 2], run_n { o.only(1, 2) }
end

test "a default runs once per call that leaves it out, and not otherwise" do
  o = OptTarget.new
  3.times { o.side(1) }
  assert_equal [:default] * 3, o.log
  3.times { o.side(1, 2) }
  assert_equal [:default] * 3, o.log
  assert_equal [1, 7], o.side(1)
end

test "locals after the parameters start nil at every call" do
  o = OptTarget.new
  assert_equal [3, nil], run_n { o.with_locals(2) }
  assert_equal [7, nil], run_n { o.with_locals(2, 5) }
end

test "defaults call methods on self and see self" do
  o = OptTarget.new
  assert_equal :helped, run_n { o.calls_self }
  assert_equal 4, run_n { o.calls_self(4) }
  assert_same o, run_n { o.default_sees_self }
end

test "a literal block reaches a method with optional parameters" do
  o = OptTarget.new
  assert_equal 6, run_n { o.with_block(1) { |x| x * 2 } }
  assert_equal 8, run_n { o.with_block(1, 3) { |x| x * 2 } }
end

test "recursion through an optional parameter" do
  o = OptTarget.new
  assert_equal 5050, run_n { o.nested(100) }
  assert_equal 5051, run_n { o.nested(100, 1) }
end

test "an exception in a default unwinds from the callee's frame" do
  o = OptTarget.new
  3.times do
    e = begin
      o.raises(1)
      nil
    rescue ArgumentError => x
      x
    end
    assert_equal "in default", e.message
    assert_match(/in 'OptTarget#raises'/, e.backtrace[0])
  end
  assert_equal [1, 2], o.raises(1, 2)
end

def arity_error
  yield
  nil
rescue ArgumentError => e
  e
end

test "too few or too many arguments raise CRuby's ArgumentError from the callee" do
  o = OptTarget.new
  3.times { o.one(1) }
  line = __LINE__ + 1
  e = arity_error { o.one }
  assert_equal "wrong number of arguments (given 0, expected 1..2)", e.message
  assert e.backtrace.any? { |l| l.include?("#{File.basename(__FILE__)}:#{line}:") }, "the call's line is in the backtrace"
  e = arity_error { o.one(1, 2, 3) }
  assert_equal "wrong number of arguments (given 3, expected 1..2)", e.message
  e = arity_error { o.only(1, 2, 3) }
  assert_equal "wrong number of arguments (given 3, expected 0..2)", e.message
  3.times { o.helper }
  e = arity_error { o.helper(1) }
  assert_equal "wrong number of arguments (given 1, expected 0)", e.message
end

test "one call site passes different argument counts in turn" do
  o = OptTarget.new
  r = []
  [[1], [1, 2], [1, 2, 3], [1], [1, 2, 3]].each { |args| r << o.two(*args) }
  assert_equal [[1, 2, 20], [1, 2, 20], [1, 2, 3], [1, 2, 20], [1, 2, 3]], r
end

class Redefined
  def m(a, b = 1) = [:opt, a, b]
end

test "redefining a method invalidates the call site's cached entry point" do
  o = Redefined.new
  site = ->(x) { o.m(x) }
  assert_equal [:opt, 1, 1], run_n { site.(1) }
  Redefined.class_eval { def m(a) = [:req, a] }
  assert_equal [:req, 2], run_n { site.(2) }
  Redefined.class_eval { def m(z = 0, a = 9, b = 8) = [:two_opt, z, a, b] }
  assert_equal [:two_opt, 3, 9, 8], run_n { site.(3) }
  Redefined.class_eval { def m(a, b) = [:two, a, b] }
  e = arity_error { site.(4) }
  assert_equal "wrong number of arguments (given 1, expected 2)", e.message
end

class WithMissing
  def method_missing(name, *args) = [:missing, name, args]
  def respond_to_missing?(*) = true
end

test "method_missing after a cached method is removed" do
  klass = Class.new(WithMissing) { def m(a, b = 2) = [a, b] }
  o = klass.new
  site = -> { o.m(1) }
  assert_equal [1, 2], run_n(&site)
  klass.send(:remove_method, :m)
  assert_equal [:missing, :m, [1]], run_n(&site)
end

test "private methods with optional parameters keep their visibility" do
  klass = Class.new do
    def call_it = priv(1)
    private def priv(a, b = 5) = a + b
  end
  o = klass.new
  assert_equal 6, run_n { o.call_it }
  e = begin
    o.priv(1)
  rescue NoMethodError => x
    x
  end
  assert_match(/private method 'priv' called/, e.message)
end

test "super from a method with optional parameters" do
  base = Class.new { def m(a, b = 1) = [a, b] }
  sub = Class.new(base) { def m(a, b = 7) = super }
  o = sub.new
  assert_equal [3, 7], run_n { o.m(3) }
  assert_equal [3, 4], run_n { o.m(3, 4) }
end

test "binding and local_variables in a method entered with defaults" do
  klass = Class.new { def m(a, b = a * 2) = binding.local_variable_get(:b) + local_variables.size }
  o = klass.new
  assert_equal 12, run_n { o.m(5) }
end

def deep_opt(n, step = 1) = deep_opt(n + step)
def deep_req(n) = deep_req(n + 1)

test "unbounded recursion through the cached call raises SystemStackError" do
  [-> { deep_opt(0) }, -> { deep_req(0) }].each do |f|
    e = begin
      f.call
      nil
    rescue SystemStackError => x
      x
    end
    assert_kind_of SystemStackError, e
    assert_equal "stack level too deep", e.message
  end
end

test "returns from the cached call land in the caller's expression" do
  o = OptTarget.new
  r = run_n { [o.one(1), o.only(3)[0] + o.one(4, 5)[1], (o.two(0) && o.only)] }
  assert_equal [[1, 2], 8, [:x, :y]], r
end

test "optional-parameter entry points survive precompiled bytecode" do
  carmine = ENV["CARMINE"]
  if carmine && RUBY_ENGINE == "carmine"
    require "tmpdir"
    Dir.mktmpdir do |dir|
      src = File.join(dir, "opt.rb")
      File.write(src, "def m(a, b = a * 2, c = b + 1) = [a, b, c]\nr = []\n3.times { r << m(1) << m(1, 5) << m(1, 5, 9) }\np r.uniq\n")
      assert system(carmine, "--compile", src, "-o", File.join(dir, "opt.cmb"))
      assert_equal "[[1, 2, 3], [1, 5, 6], [1, 5, 9]]\n", IO.popen([carmine, File.join(dir, "opt.cmb")], &:read)
    end
  end
end

Assert.report
