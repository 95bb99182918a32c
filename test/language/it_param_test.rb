require_relative "../assert"

test "the it parameter is not a binding local" do
  assert_equal [], -> { it; binding.local_variables }.call(1)
  assert_raise(NameError) { proc { it; binding.local_variable_get(:it) }.call(1) }
  assert_equal [2, 4], [1, 2].map { it * 2 }
end

test "it and numbered parameters in #parameters and binding" do
  assert_equal [[:req]], -> { it }.parameters
  assert_equal [[:opt, nil]], proc { it }.parameters
  assert_equal [:_1], -> { _1; binding.local_variables }.call("a")
end
