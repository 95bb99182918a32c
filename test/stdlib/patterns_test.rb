# delegate, forwardable, singleton, observer, shellwords: the small pure-Ruby libraries.
require_relative "helper"
StdlibTest.require_libs("delegate", "forwardable", "singleton", "observer", "shellwords")

test "SimpleDelegator forwards, overrides call super, and the target can change" do
  klass = Class.new(SimpleDelegator) { def size; super + 100; end }
  w = klass.new([1, 2])
  assert_equal 102, w.size
  assert_equal 1, w.first
  assert_equal [1, 2], w.__getobj__
  assert w.respond_to?(:each)
  assert_equal w, [1, 2]
  w.__setobj__([5])
  assert_equal 101, w.size
  assert_raise(NoMethodError) { w.no_such_method }
end

test "DelegateClass builds a class delegating a class's methods" do
  stack = Class.new(DelegateClass(Array)) do
    def initialize; super([]); end
    def peek; last; end
  end.new
  stack.push(1, 2)
  assert_equal 2, stack.peek
  assert_equal [2, 4], stack.map { |x| x * 2 }
  assert stack.instance_of?(stack.class)
end

test "Forwardable def_delegators, def_delegator with an alias, delegate" do
  q = Class.new do
    extend Forwardable
    def_delegators :@items, :size, :<<, :first, :[]
    def_delegator :@items, :push, :enqueue
    def_delegator "self.class", :name, :class_name
    delegate [:last, :empty?] => :@items
    def initialize; @items = []; end
  end.new
  q << 1
  q.enqueue(2)
  assert_equal [2, 1, 2, 2, false], [q.size, q.first, q[1], q.last, q.empty?]
  assert_nil q.class_name
end

test "SingleForwardable on an object" do
  o = Object.new
  o.extend SingleForwardable
  o.def_delegator :@s, :length
  o.instance_variable_set(:@s, "abc")
  assert_equal 3, o.length
end

test "Singleton gives one instance and hides new" do
  k = Class.new { include Singleton; attr_accessor :v }
  k.instance.v = 5
  assert_same k.instance, k.instance
  assert_equal 5, k.instance.v
  assert_raise(NoMethodError) { k.new }
  assert_raise(TypeError) { k.instance.dup }
end

test "Observable notifies observers when changed" do
  ticker = Class.new do
    include Observable
    def tick(v)
      changed
      notify_observers(:tick, v)
    end
  end.new
  seen = []
  watcher = Object.new
  watcher.define_singleton_method(:update) { |*a| seen << a }
  ticker.add_observer(watcher)
  ticker.add_observer(proc { |*a| seen << [:proc, *a] }, :call)
  ticker.tick(1)
  ticker.notify_observers(:not_changed)
  assert_equal [[:tick, 1], [:proc, :tick, 1]], seen
  assert_equal 2, ticker.count_observers
  ticker.delete_observer(watcher)
  assert_equal 1, ticker.count_observers
end

test "Shellwords split, escape and join" do
  assert_equal ["a", "b c", "d e", "f g", ""], Shellwords.split(%q{a 'b c' "d e" f\ g ""})
  assert_equal "it\\'s", "it's".shellescape
  assert_equal "a b\\ c", %w[a b\ c].shelljoin
  assert_equal ["x", "y"], "x y".shellsplit
  assert_raise(ArgumentError) { Shellwords.split("a 'b") }
  assert_equal "''", Shellwords.escape("")
end

Assert.report
