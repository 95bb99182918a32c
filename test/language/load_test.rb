require_relative "../assert"

test "removing a file from $LOADED_FEATURES lets require load it again" do
  path = File.expand_path("fixtures/require_again.rb", __dir__)
  assert_true require(path)
  assert_false require(path)
  assert_equal path, $LOADED_FEATURES.last
  $LOADED_FEATURES.pop
  assert_true require(path)
  assert_equal 2, $require_test_count
end

test "an xstring passes a frozen command" do
  o = Object.new
  seen = nil
  o.define_singleton_method(:`) { |s| seen = s.frozen? }
  o.instance_exec { `echo` }
  assert_true seen
end
