# Array#dup (Kernel#dup): the copy has the elements, instance variables and class of the
# original, is unfrozen and independent of it; `initialize_dup` and `initialize_copy` run
# whenever they are not the builtins (or a TracePoint watches calls).
require_relative "../assert"

test "the copy has the elements and is independent" do
  a = [1, "two", :three, [4]]
  b = a.dup
  assert_equal a, b
  assert_false a.equal?(b)
  b[0] = 9
  b << 5
  assert_equal [1, "two", :three, [4]], a
  assert_same a[3], b[3]
  big = (1..100).to_a
  c = big.dup
  c.shift
  assert_equal 100, big.size
  assert_equal 99, c.size
end

test "a frozen Array's copy is unfrozen, instance variables and class come along" do
  a = [1, 2].freeze
  assert_false a.dup.frozen?
  b = [3]
  b.instance_variable_set(:@tag, :x)
  assert_equal :x, b.dup.instance_variable_get(:@tag)
  sub = Class.new(Array)
  s = sub.new([1, 2])
  assert_equal sub, s.dup.class
  t = [1]
  def t.extra = 1
  assert_false t.dup.respond_to?(:extra)
end

test "initialize_copy and initialize_dup of subclasses run" do
  log = []
  sub = Class.new(Array) do
    define_method(:initialize_copy) do |o|
      log << [:copy, o.size]
      super(o)
    end
  end
  assert_equal [1, 2], sub.new([1, 2]).dup.to_a
  assert_equal [[:copy, 2]], log
  sub2 = Class.new(Array) do
    define_method(:initialize_dup) do |o|
      log << :dup
      super(o)
      push(:added)
    end
  end
  assert_equal [1, :added], sub2.new([1]).dup.to_a
  assert_equal [[:copy, 2], :dup], log
end

test "a redefined Array#initialize_copy and a TracePoint see the call" do
  out, err, = run_carmine(<<~RUBY)
    class Array
      def initialize_copy(o)
        print "copy "
        replace(o.reverse)
      end
    end
    p [1, 2, 3].dup
  RUBY
  assert_equal "", err
  assert_equal "copy [3, 2, 1]\n", out
  calls = []
  tp = TracePoint.new(:c_call) { |t| calls << t.method_id if t.method_id.to_s.start_with?("initialize") }
  tp.enable { [1].dup }
  assert_equal [:initialize_dup, :initialize_copy], calls
end
