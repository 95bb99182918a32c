require_relative "../assert"

def make_matchers
  set = proc { "mis-matched" =~ /s(-)m(.)/ }
  get = proc { [$~ && $~[0], defined?($&), $1, $2] }
  [set, get]
end

test "blocks of one method share $~ after the method returned" do
  set, get = make_matchers
  set.call
  assert_equal ["s-ma", "global-variable", "-", "a"], get.call
end

def match_in_block_then_read
  [1].each { "xy" =~ /x(y)/ }
  $1
end

test "a match in a block sets $~ of the method" do
  assert_equal "y", match_in_block_then_read
end

def lambda_match
  l = -> { "q" =~ /q/ }
  l.()
  $~ && $~[0]
end

test "a lambda shares $~ with its method" do
  assert_equal "q", lambda_match
end

def own_match
  "abc" =~ /b/
  inner = proc { $~[0] }
  helper_that_matches
  [inner.call, $~[0]]
end

def helper_that_matches
  "zzz" =~ /z/
end

test "$~ stays local to each method" do
  assert_equal ["b", "b"], own_match
end
