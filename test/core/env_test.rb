require_relative "../assert"

# ENV's own rules, where they differ from a Hash's.

class ToStr
  def initialize(s) = @s = s
  def to_str = @s
end

test "readers convert names and values with to_str" do
  ENV["CARMINE_ENV_TEST"] = "value"
  name = ToStr.new("CARMINE_ENV_TEST")
  assert_equal "value", ENV[name]
  assert_equal "value", ENV.fetch(name)
  assert_equal ["CARMINE_ENV_TEST", "value"], ENV.assoc(name)
  assert_true ENV.include?(name)
  assert_true ENV.key?(name)
  assert_equal "CARMINE_ENV_TEST", ENV.key(ToStr.new("value"))
  assert_equal ["CARMINE_ENV_TEST", "value"], ENV.rassoc(ToStr.new("value"))
  assert_true ENV.value?(ToStr.new("value"))
  assert_nil ENV.value?(Object.new)
  assert_nil ENV.rassoc(Object.new)
  assert_equal ["value", nil], ENV.values_at(name, "CARMINE_ENV_TEST_NONE")
  assert_equal({ name => "value" }, ENV.slice(name, "CARMINE_ENV_TEST_NONE"))
  assert_equal "value", ENV.delete(name)
  assert_nil ENV["CARMINE_ENV_TEST"]
  [:[], :fetch, :assoc, :include?, :key, :delete].each do |m|
    assert_raise(TypeError) { ENV.send(m, Object.new) }
  end
  assert_raise(TypeError) { ENV.values_at(Object.new) }
end

test "update stores pairs one by one, replace checks every pair first" do
  ENV["CARMINE_ENV_A"] = "0"
  assert_raise(TypeError) { ENV.update("CARMINE_ENV_A" => "1", Object.new => "2") }
  assert_equal "1", ENV["CARMINE_ENV_A"]
  assert_raise(Errno::EINVAL) { ENV.merge!("BAD=NAME" => "x") }
  assert_raise(Errno::EINVAL) { ENV.update("" => "x") }
  ENV.update("CARMINE_ENV_A" => "3") { |_name, old, new| old + new }
  assert_equal "13", ENV["CARMINE_ENV_A"]
  saved = ENV.to_hash
  # A bad pair stops the replacement before any name is removed.
  assert_raise(TypeError) { ENV.replace(Object.new => "1", "CARMINE_ENV_B" => "1") }
  assert_raise(Errno::EINVAL) { ENV.replace("X=Y" => "1") }
  assert_equal saved, ENV.to_hash
  assert_raise(TypeError) { ENV.replace("CARMINE_ENV_B" => "1", "CARMINE_ENV_C" => Object.new) }
  assert_equal saved.merge("CARMINE_ENV_B" => "1"), ENV.to_hash
  ENV.replace("CARMINE_ENV_ONLY" => "1")
  assert_equal({ "CARMINE_ENV_ONLY" => "1" }, ENV.to_hash)
  ENV.replace(saved)
  assert_equal saved, ENV.to_hash
ensure
  ENV.delete("CARMINE_ENV_A")
end

test "ENV is not a copyable object; to_hash is a copy" do
  assert_equal "ENV", ENV.to_s
  assert_nil ENV.rehash
  assert_raise(TypeError) { ENV.dup }
  assert_raise(TypeError) { ENV.clone }
  assert_raise(ArgumentError) { ENV.clone(freeze: 1) }
  h = ENV.to_hash
  assert(!h.equal?(ENV))
  h["CARMINE_ENV_COPY"] = "x"
  assert_nil ENV["CARMINE_ENV_COPY"]
  assert_equal ENV.to_hash, ENV.to_h
  assert_equal({ "k" => "v" }, ENV.to_h { |_k, _v| ["k", "v"] })
end

test "values read out are in the locale encoding, or transcoded to default_internal" do
  ENV["CARMINE_ENV_ENC"] = "\xC3\xB8".b
  assert_equal Encoding::UTF_8, ENV["CARMINE_ENV_ENC"].encoding
  ENV["CARMINE_ENV_ENC"] = "abc"
  old = Encoding.default_internal
  begin
    Encoding.default_internal = Encoding::IBM437
    assert_equal Encoding::IBM437, ENV["CARMINE_ENV_ENC"].encoding
    ENV.each_pair { |k, v| assert_equal Encoding::IBM437, k.encoding if k == "CARMINE_ENV_ENC" }
  ensure
    Encoding.default_internal = old
  end
ensure
  ENV.delete("CARMINE_ENV_ENC")
end
