require_relative "../assert"

test "def in instance_eval of an Integer raises TypeError" do
  assert_raise(TypeError, "can't define singleton") { 1.instance_eval { def foo; end } }
  assert_raise(TypeError, "can't define singleton") { :sym.instance_eval { alias foo to_s } }
  assert_raise(TypeError, "can't define singleton") { 1.instance_exec { def foo; end } }
end

test "def in instance_eval of nil defines on NilClass" do
  v = nil.instance_eval do
    def instance_eval_test_method; 3; end
    instance_eval_test_method
  end
  assert_equal 3, v
  NilClass.send(:remove_method, :instance_eval_test_method)
end

test "names of core classes are Strings" do
  assert_equal String, Integer.name.class
  assert_equal "RuntimeError", RuntimeError.name
  assert_equal "Comparable", Comparable.name.dup
end

test "raise and const_missing do not appear in backtraces" do
  e = begin
    raise "x"
  rescue => err
    err
  end
  assert_match(/in 'block in <main>'|in '<main>'/, e.backtrace[0])
  refute_raise_frame = e.backtrace.none? { |l| l.include?("Kernel#raise") }
  assert_true refute_raise_frame
  n = begin
    NoSuchConstantHere
  rescue NameError => err
    err
  end
  assert_true n.backtrace.none? { |l| l.include?("const_missing") }
end

test "Encoding.find accepts the special names" do
  assert_equal Encoding::UTF_8, Encoding.find("locale")
  assert_equal Encoding::UTF_8, Encoding.find("filesystem")
end
