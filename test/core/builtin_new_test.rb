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
