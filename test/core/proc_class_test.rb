require_relative "../assert"

class ProcTestSub < Proc; end

test "Proc.new with a proc of the same class returns it; another class gets a copy" do
  pr = Proc.new { 1 }
  assert_same pr, Proc.new(&pr)
  sub = ProcTestSub.new(&pr)
  assert_false sub.equal?(pr)
  assert_equal ProcTestSub, sub.class
  assert_same sub, ProcTestSub.new(&sub)
  m = Proc.new(&:size)
  assert_same m, Proc.new(&m)
end

def proc_test_make = proc { 1 }

test "Proc#== tells apart procs made by different calls; dup leaves the singleton class" do
  a = proc_test_make
  assert_false a == proc_test_make
  assert_true a == a.dup
  pr = proc {}
  def pr.tag; end
  assert_false pr.dup.respond_to?(:tag)
  assert_true pr.clone.respond_to?(:tag)
end

test "Proc#inspect is binary; Proc#yield is Proc#call" do
  assert_equal Encoding::BINARY, proc {}.inspect.encoding
  assert_equal Proc.instance_method(:call), Proc.instance_method(:yield)
end

test "Class.allocate makes an uninitialized class that Class#initialize completes" do
  k = Class.allocate
  assert_raise(TypeError, "uninitialized class") { k.superclass }
  assert_raise(TypeError, "can't instantiate uninitialized class") { k.new }
  assert_false Object.subclasses.include?(k)
  base = Class.new { def self.cm = :cm; def hi = :hi }
  k.send(:initialize, base) { def extra = :extra }
  assert_equal base, k.superclass
  assert_equal :cm, k.cm
  assert_equal [:hi, :extra], [k.new.hi, k.new.extra]
  assert_true base.subclasses.include?(k)
  assert_raise(TypeError, "already initialized class") { k.send(:initialize) }
  assert_raise(TypeError, "already initialized class") { Integer.send(:initialize) }
  assert_raise(TypeError, "can't make subclass of Class") { Class.allocate.send(:initialize, Class) }
  assert_raise(TypeError, "can't copy the root class") { BasicObject.dup }
end

def proc_test_lambda_in(some, params)
  -> {}
end

test "a lambda's binding sees the locals of its method after the method returned" do
  b = proc_test_lambda_in(1, 2).binding
  assert_equal [:some, :params], b.local_variables
  assert_equal 3, b.eval("some + params")
end
