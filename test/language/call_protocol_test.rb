require_relative "../assert"

# Keyword arguments passed without a Hash (literal keys bound straight into keyword
# parameters), `send`/`__send__`/`public_send` run in place by the dispatch loop, and
# `each(&:name)` as an iterator frame. Expected values and messages are CRuby 3.4's.

class KwTarget
  def req_opt(a:, b: 2) = [a, b]
  def with_rest(x, k: 1, **rest) = [x, k, rest]
  def only_rest(**rest) = rest
  def positional(h) = h
  def splat(*a) = a
  def opt_pos(x = 5, k: 0) = [x, k]
  def many(a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10) = [a, e, j]
  def two_required(x, y:, z:) = [x, y, z]
  def no_kw(a, **nil) = a
  def with_block(k: 0) = yield(k)
  def block_param(k: 1, &b) = b.call(k)
  def forward(...) = req_opt(...)
  private def secret(k:) = k
  def call_secret = secret(k: 7)
  def call_self_secret = self.secret(k: 8)
end

test "literal keywords bind to keyword parameters" do
  o = KwTarget.new
  assert_equal [1, 3], o.req_opt(a: 1, b: 3)
  assert_equal [5, 2], o.req_opt(a: 5)
  assert_equal [0, 1], o.req_opt(b: 1, a: 0)
  assert_equal [1, 2, {z: 3}], o.with_rest(1, k: 2, z: 3)
  assert_equal [1, 1, {z: 4, y: 5}], o.with_rest(1, z: 4, y: 5)
  assert_equal({a: 1, b: 2}, o.only_rest(a: 1, b: 2))
  assert_equal [5, 0], o.opt_pos(k: 0)
  assert_equal [2, 3], o.opt_pos(2, k: 3)
  assert_equal [11, 5, 0], o.many(j: 0, a: 11)
  assert_equal 8, o.with_block(k: 4) { |v| v * 2 }
  assert_equal 9, o.block_param(k: 9) { |x| x }
  assert_equal [7, 2], o.forward(a: 7)
  assert_equal 7, o.call_secret
  assert_equal 8, o.call_self_secret
end

test "keyword values are evaluated once, in order" do
  order = []
  o = KwTarget.new
  assert_equal [1, 2], o.req_opt(b: (order << :b; 2), a: (order << :a; 1))
  assert_equal [:b, :a], order
end

test "keywords to a method without keyword parameters become a Hash" do
  o = KwTarget.new
  h = o.positional(a: 1, b: 2)
  assert_equal({a: 1, b: 2}, h)
  assert_equal [1, {a: 2}], o.splat(1, a: 2)
  h[:c] = 3
  assert_equal({a: 1}, o.positional(a: 1))
  assert_equal [{a: 1}], [[1]].each_slice(1).map { o.splat(a: 1) }.first
end

test "missing, unknown and rejected keywords" do
  o = KwTarget.new
  assert_raise(ArgumentError, "missing keyword: :a") { o.req_opt(b: 1) }
  assert_raise(ArgumentError, "missing keywords: :y, :z") { o.two_required(1) }
  assert_raise(ArgumentError, "unknown keyword: :c") { o.req_opt(a: 1, c: 2) }
  assert_raise(ArgumentError, "unknown keywords: :c, :d") { o.req_opt(a: 1, c: 2, d: 3) }
  assert_raise(ArgumentError, "no keywords accepted") { o.no_kw(1, k: 2) }
  e = assert_raise(ArgumentError) { o.two_required(y: 1, z: 2) }
  assert_equal "wrong number of arguments (given 0, expected 1; required keywords: y, z)", e.message
  e = assert_raise(NoMethodError) { o.secret(k: 1) }
  assert_equal "private method 'secret' called for an instance of KwTarget", e.message
end

class KwBase
  def area(scale: 1) = scale
  def describe(prefix, sep: ":", **opts) = [prefix, sep, opts]
  def pair(a, b: 2) = [a, b]
end

module KwTracing
  def area(scale: 1) = super + 100
end

class KwRect < KwBase
  include KwTracing
  def area(scale: 1) = super * 2
  def describe(prefix, **opts) = super(prefix, sep: "=", **opts)
  def pair(a, b: 3) = super
end

class KwSquare < KwRect
  def area(scale: 1) = super(scale: scale + 1)
  def pair(a, b: 4) = super(a, b: b * 10)
end

test "super with keywords: implicit, explicit, through modules" do
  assert_equal 204, KwRect.new.area(scale: 2)
  assert_equal 206, KwSquare.new.area(scale: 2)
  assert_equal 202, KwRect.new.area
  assert_equal ["p", "=", {extra: 1}], KwRect.new.describe("p", extra: 1)
  assert_equal [1, 3], KwRect.new.pair(1)
  assert_equal [1, 5], KwRect.new.pair(1, b: 5)
  assert_equal [1, 40], KwSquare.new.pair(1)
end

test "ruby2_keywords and method_missing with keywords" do
  klass = Class.new do
    def target(*a, **k) = [a, k]
    ruby2_keywords def delegate(*args) = target(*args)
    def method_missing(name, *a, **k) = [name, a, k]
    def respond_to_missing?(*) = true
  end
  o = klass.new
  assert_equal [[1], {a: 2}], o.delegate(1, a: 2)
  assert_equal [:anything, [1], {x: 2}], o.anything(1, x: 2)
end

test "keyword literals to builtins and define_method" do
  s = Struct.new(:a, :b, keyword_init: true).new(a: 1, b: 2)
  assert_equal [1, 2], [s.a, s.b]
  assert_equal 3, Integer("3", exception: false)
  assert_nil Integer("x", exception: false)
  klass = Class.new { define_method(:dm) { |k: 1, **r| [k, r] } }
  assert_equal [8, {z: 1}], klass.new.dm(k: 8, z: 1)
end

class SendTarget
  def add(a, b = 10) = a + b
  def kw(a, k: 1) = [a, k]
  def blk = yield
  def where = caller(0, 2).map { |l| l[/'.*'/] }
  def raises = raise("boom")
  private def priv = :priv
  protected def prot = :prot
  def method_missing(n, *a) = n.to_s.start_with?("mm_") ? [n, a] : super
  def respond_to_missing?(n, p = false) = n.to_s.start_with?("mm_") || super
  attr_accessor :x
end

test "send, __send__ and public_send call the target" do
  o = SendTarget.new
  assert_equal 3, o.send(:add, 1, 2)
  assert_equal 11, o.__send__(:add, 1)
  assert_equal 8, o.public_send(:add, 5, 3)
  assert_equal [1, 2], o.send(:kw, 1, k: 2)
  assert_equal [1, 3], o.public_send(:kw, 1, k: 3)
  assert_equal 42, o.send(:blk) { 42 }
  assert_equal 43, o.public_send(:blk) { 43 }
  assert_equal 9, o.send("add", 4, 5)
  args = [1, 2]
  assert_equal 3, o.send(:add, *args)
  o.send(:x=, 5)
  assert_equal 5, o.send(:x)
  assert_equal 6, o.send(:send, :add, 3, 3)
  assert_equal 3, 1.send(:+, 2)
  assert_equal [2, 4], [1, 2].send(:map) { |v| v * 2 }
  ops = %i[add add]
  assert_equal [1, 2], ops.each_with_index.map { |m, i| o.send(m, i, 1) }
end

test "send calls private and protected methods, public_send does not" do
  o = SendTarget.new
  assert_equal :priv, o.send(:priv)
  assert_equal :prot, o.__send__(:prot)
  e = assert_raise(NoMethodError) { o.public_send(:priv) }
  assert_equal "private method 'priv' called for an instance of SendTarget", e.message
  e = assert_raise(NoMethodError) { o.public_send(:prot) }
  assert_equal "protected method 'prot' called for an instance of SendTarget", e.message
end

test "method_missing through send, errors and backtraces" do
  o = SendTarget.new
  assert_equal [:mm_foo, [1]], o.send(:mm_foo, 1)
  assert_equal [:mm_bar, []], o.public_send(:mm_bar)
  e = assert_raise(NoMethodError) { o.send(:zork) }
  assert_equal "undefined method 'zork' for an instance of SendTarget", e.message
  assert_raise(ArgumentError, "no method name given") { o.send }
  assert_raise(ArgumentError, "no method name given") { o.public_send }
  assert_raise(ArgumentError, "wrong number of arguments (given 0, expected 1..2)") { o.send(:add) }
  assert_raise(ArgumentError, "wrong number of arguments (given 3, expected 1..2)") { o.public_send(:add, 1, 2, 3) }
  # `send` has no backtrace line of its own in CRuby; `public_send` has one.
  assert_equal "'SendTarget#where'", o.send(:where)[0]
  assert_equal ["'SendTarget#where'", "'Kernel#public_send'"], o.public_send(:where)
  e = assert_raise(RuntimeError) { o.public_send(:raises) }
  assert_equal "boom", e.message
  assert_equal 3, o.public_send(:add, 1, 2)
end

class SymTarget
  attr_reader :n
  def initialize(n) = @n = n
  def bump = @n += 1
  def fail_on_two = (@n == 2 ? raise("two") : @n)
  private def hidden = :hidden
  protected def guarded = :guarded
  def method_missing(name, *a) = name == :ghost ? [:ghost, @n] : super
  def respond_to_missing?(name, p = false) = name == :ghost || super
end

test "each(&:name) calls the method on every element" do
  objs = [SymTarget.new(1), SymTarget.new(2)]
  assert_same objs, objs.each(&:bump)
  assert_equal [2, 3], objs.map(&:n)
  assert_equal [], [].each(&:bump)
  seen = []
  [1, 2, 3].each(&:to_s).each { |v| seen << v }
  assert_equal [1, 2, 3], seen
  assert_equal 3, 3.times(&:to_s)
  assert_equal [true, false], [nil, 1].map(&:nil?)
  assert_equal true, [1, 2].all?(&:positive?)
end

test "each(&:name): errors, visibility, method_missing" do
  objs = [SymTarget.new(1), SymTarget.new(2), SymTarget.new(3)]
  e = assert_raise(RuntimeError) { objs.each(&:fail_on_two) }
  assert_equal "two", e.message
  e = assert_raise(NoMethodError) { objs.each(&:hidden) }
  assert_equal "private method 'hidden' called for an instance of SymTarget", e.message
  e = assert_raise(NoMethodError) { objs.each(&:guarded) }
  assert_equal "protected method 'guarded' called for an instance of SymTarget", e.message
  assert_same objs, objs.each(&:ghost)
  assert_equal [[:ghost, 1]], objs.first(1).map(&:ghost)
  e = assert_raise(NoMethodError) { [1].each(&:no_such_method) }
  assert_equal "undefined method 'no_such_method' for an instance of Integer", e.message
  e = assert_raise(ArgumentError) { [1].each(&:+) }
  assert_equal "wrong number of arguments (given 0, expected 1)", e.message
end

test "each(&:name) sees an array that changes while it iterates" do
  a = [[1], [2]]
  a.each(&:pop)
  assert_equal [[], []], a
  grow = Class.new do
    def initialize(list) = @list = list
    def push_more = (@list << self.class.new(@list) if @list.size < 5)
  end
  list = []
  list << grow.new(list)
  list.each(&:push_more)
  assert_equal 5, list.size
end

# The call site remembers the method it found for the elements' class (interp/iter.rs);
# whatever changes the method, the class or the visibility must be seen at the next element.
class SymCacheA
  def initialize(log) = @log = log
  def touch = @log << :a
end

class SymCacheB
  def initialize(log) = @log = log
  def touch = @log << :b
end

def sym_cache_touch_all(objs) = objs.each(&:touch)

test "each(&:name) follows the element's class, redefinitions and visibility" do
  log = []
  a1, a2, b = SymCacheA.new(log), SymCacheA.new(log), SymCacheB.new(log)
  sym_cache_touch_all([a1, b, a2, b, b])
  assert_equal %i[a b a b b], log
  log.clear
  def a2.touch = @log << :singleton
  sym_cache_touch_all([a1, a2, a1])
  assert_equal %i[a singleton a], log
  redefiner = Class.new do
    def initialize(log) = @log = log
    def touch
      @log << :redefine
      SymCacheA.class_eval { def touch = @log << :a2 }
    end
  end
  log.clear
  sym_cache_touch_all([a1, redefiner.new(log), a1, a1])
  assert_equal %i[a redefine a2 a2], log
  hider = Class.new do
    def touch = SymCacheA.send(:private, :touch)
  end
  log.clear
  e = assert_raise(NoMethodError) { sym_cache_touch_all([a1, hider.new, a1]) }
  assert_equal "private method 'touch' called for an instance of SymCacheA", e.message
  assert_equal %i[a2], log
  SymCacheA.send(:public, :touch)
  log.clear
  assert_equal 2, 2.times(&:itself)
  sym_cache_touch_all([a1])
  assert_equal %i[a2], log
end

module SymRefinement
  refine Integer do
    def refined_double = self * 2
  end
end

using SymRefinement

test "each(&:name) and map(&:name) see refinements of the calling scope" do
  assert_equal [2, 4], [1, 2].map(&:refined_double)
  out = []
  [1, 2].each(&:refined_double).each { |v| out << v }
  assert_equal [1, 2], out
end

class SymYielder
  def initialize(items) = @items = items
  def each
    i = 0
    while i < @items.size
      yield @items[i]
      i += 1
    end
    self
  end
  def each_pair_of(x) = yield(x, 10)
  def each_kw(x) = yield(x, k: 5)
  include Enumerable
end

class SymArgs
  def add(n) = n + 1
  def kw(k: 0) = k
  def hidden_add = 0
  private :hidden_add
end

test "yield to a Symbol block calls the method on the first argument" do
  y = SymYielder.new([SymTarget.new(1), SymTarget.new(5)])
  assert_equal [1, 5], y.map(&:n)
  y.each(&:bump)
  assert_equal [2, 6], y.map(&:n)
  assert_equal 11, SymYielder.new([]).each_pair_of(SymArgs.new, &:add)
  assert_equal 5, SymYielder.new([]).each_kw(SymArgs.new, &:kw)
  e = assert_raise(ArgumentError) { SymYielder.new([SymArgs.new]).each(&:add) }
  assert_equal "wrong number of arguments (given 0, expected 1)", e.message
  assert_equal [:ghost, 1], SymYielder.new([SymTarget.new(1)]).map(&:ghost).first
  e = assert_raise(RuntimeError) { SymYielder.new([SymTarget.new(2)]).each(&:fail_on_two) }
  assert_equal "two", e.message
end
