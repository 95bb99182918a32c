require_relative "../assert"

module VisibilityTestLambda
  private

  -> { def lambda_defined; end }.call
end

test "def in a lambda uses the visibility of the enclosing class body" do
  assert_equal [:lambda_defined], VisibilityTestLambda.private_instance_methods(false)
end

test "private in a Class.new block applies to its defs, nested defs are public" do
  cls = Class.new do
    private
    def do_def
      def new_def = 1
    end
  end
  obj = cls.new
  assert_raise(NoMethodError) { obj.do_def }
  obj.send(:do_def)
  assert_equal 1, obj.new_def
end

test "self[k] op-assign may call private [] and []=" do
  klass = Class.new do
    def initialize(h) = @a = h
    def bump(k, n) = self[k] += n
    private
    def [](k) = @a[k]
    def []=(k, v)
      @a[k] = v
    end
  end
  assert_equal 2, klass.new({ k: 0 }).bump(:k, 2)
end
