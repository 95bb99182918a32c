require_relative "../assert"

# Times whose years span the whole 64-bit range: the calendar arithmetic runs in 128 bits
# (it overflowed: a panic in debug builds, a wrong date in release builds). Found by the
# panic-freedom check (HugeNumber mutations of core/time specs).

test "Time.local/utc with years at the edges of 64 bits" do
  assert_equal "4611686018427387904-01-01 00:00:00 UTC", Time.utc(2**62).to_s
  assert_equal 2**62, Time.utc(2**62).year
  assert_equal 9223372036854775807, Time.utc(9223372036854775807, 12, 31).year
  assert_equal "-9223372036854775808-12-31 23:59:59 UTC", Time.utc(-9223372036854775808, 12, 31, 23, 59, 59).to_s
  assert_equal(-(2**62), Time.utc(-(2**62)).year)
  assert_equal 2**62, Time.utc(2**62).to_a[5]
  assert_equal 2**62, Time.utc(2**62).deconstruct_keys([:year])[:year]
  assert_equal "00 001 Fri", Time.utc(2**62).strftime("%U %j %a")
end

test "ordinary dates are unchanged" do
  assert_equal 61, Time.utc(2000, 3, 1).yday
  assert_equal "2000-03-01 00:00:00 UTC", Time.utc(2000, 3, 1).to_s
  assert_equal 146138514283, Time.at(2**62).utc.year
  assert_equal(-146138510344, Time.at(-(2**62)).utc.year)
end
