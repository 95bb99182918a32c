require_relative "../assert"

# Builtin classes' `new` is allocate + initialize, so an `initialize` defined by reopening
# the class or in a subclass runs (and reaches the builtin one with `super`).

class Random
  alias_method :__test_orig_initialize, :initialize
  def initialize(*args)
    @made_by_test = true
    __test_orig_initialize(*args)
  end
  def made_by_test? = @made_by_test
end

test "Random.new runs a reopened initialize; seeds still work" do
  assert_true Random.new.made_by_test?
  assert_equal Random.new(3).rand(1000), Random.new(3).rand(1000)
end

class TimeWithMonth < Time
  def initialize(year) = super(year, 5)
end

test "Time.new runs a subclass's initialize; an allocated Time is uninitialized" do
  t = TimeWithMonth.new(2001)
  assert_equal [TimeWithMonth, 2001, 5], [t.class, t.year, t.month]
  assert_raise(TypeError, "uninitialized Time") { Time.allocate.year }
end

class TaggedFiber < Fiber
  attr_reader :tag
  def initialize(&b)
    @tag = :t
    super(&b)
  end
end

test "Fiber.new runs a subclass's initialize; initializing twice and resuming an allocated fiber fail" do
  f = TaggedFiber.new { 42 }
  assert_equal [:t, 42], [f.tag, f.resume]
  assert_raise(RuntimeError, "cannot initialize twice") { Fiber.new { }.send(:initialize) { } }
  assert_raise(FiberError, "uninitialized fiber") { Fiber.allocate.resume }
end

class SuffixedFile < File
  def initialize(name) = super(name + ".txt", "w")
end

test "File.new and File.open run a subclass's initialize" do
  base = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_builtin_new_#{Process.pid}"
  SuffixedFile.open(base) { |f| f.write("hi"); assert_kind_of SuffixedFile, f }
  assert_equal "hi", File.read(base + ".txt")
  File.delete(base + ".txt")
end

# `Hash.new` with at most a default value skips calling Hash's own `initialize`, and
# `Class#new` calls a builtin `initialize` directly: what `initialize` does must still happen,
# a redefined `initialize` must still run, and errors must come from under `initialize` and
# `new` as before.
class CountingHash < Hash
  attr_reader :count
  def initialize(*a, &b)
    @count = 1
    super
  end
end

test "Hash.new sets the default; a subclass's or a redefined initialize runs" do
  assert_equal [nil, 5], [Hash.new[1], Hash.new(5)[1]]
  assert_equal 6, Hash.new { |h, k| h[k] = k * 2 }[3]
  h = CountingHash.new(7)
  assert_equal [CountingHash, 1, 7], [h.class, h.count, h[0]]
  class Hash
    alias_method :__test_hash_initialize, :initialize
    def initialize(*a, &b)
      __test_hash_initialize(*a, &b)
      self[:made] = true
    end
  end
  begin
    assert_equal({made: true}, Hash.new)
    assert_equal 3, Hash.new(3)[:x]
  ensure
    class Hash
      alias_method :initialize, :__test_hash_initialize
      remove_method :__test_hash_initialize
    end
  end
  assert_equal({}, Hash.new)
end

test "a builtin initialize called by Class#new raises under initialize and new" do
  e = assert_raise(ArgumentError) { Hash.new(1) { } }
  labels = e.backtrace_locations.map(&:label)
  assert_true labels.index { |l| l.end_with?("initialize") } < labels.index { |l| l.end_with?("new") }
  e = assert_raise(ArgumentError) { RuntimeError.new(1, 2) }
  assert_true e.backtrace_locations.map(&:label).any? { |l| l.end_with?("new") }
  assert_equal ["x", RuntimeError], [RuntimeError.new("x").message, RuntimeError.new("x").class]
  assert_equal "abc", String.new("abc", capacity: 10)
end

class NewSiteA
  attr_reader :v
  def initialize(x) = (@v = [:a, x])
end

class NewSiteB < NewSiteA
  def initialize(x) = (@v = [:b, x])
end

test "one new call site over several classes, and initialize redefined or added later" do
  make = ->(k, x) { k.new(x) }
  assert_equal [[:a, 1], [:b, 2], [:a, 3]], [make.(NewSiteA, 1).v, make.(NewSiteB, 2).v, make.(NewSiteA, 3).v]
  NewSiteB.class_eval { def initialize(x) = (@v = [:b2, x]) }
  assert_equal [[:b2, 4], [:a, 5]], [make.(NewSiteB, 4).v, make.(NewSiteA, 5).v]
  plain = Class.new(NewSiteA)
  assert_equal [:a, 6], make.(plain, 6).v
  plain.class_eval { def initialize(x) = (@v = [:plain, x]) }
  assert_equal [:plain, 7], make.(plain, 7).v
  assert_raise(ArgumentError) { make.(Class.new, 1) }
end
