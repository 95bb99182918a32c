require_relative "../assert"
require_relative "stdlib_path"
require "date"
require "time"

test "civil dates, the calendar reform and arithmetic" do
  d = Date.new(2001, 2, 3)
  assert_equal [2001, 2, 3, 6, 34, 2451944], [d.year, d.mon, d.mday, d.wday, d.yday, d.jd]
  assert_equal Date.new(2001, 3, 5), d + 30
  assert_equal Date.new(2001, 2, 28), Date.new(2001, 1, 31) >> 1
  assert_equal Rational(399), d - Date.new(2000, 1, 1)
  assert_equal Date.new(2001, 2, 28), Date.new(2001, 2, -1)
  assert_equal Date.new(1582, 10, 15), Date.new(1582, 10, 4) + 1
  assert_raise(Date::Error, "invalid date") { Date.new(2001, 2, 29) }
  assert_raise(Date::Error, "invalid date") { Date.new(1582, 10, 10) }
  assert_true Date.valid_date?(2000, 2, 29)
  assert_equal "Saturday 03 February 2001", d.strftime("%A %d %B %Y")
  assert_equal "#<Date: 2001-02-03 ((2451944j,0s,0n),+0s,2299161j)>", d.inspect
  assert_equal [1, 2, 3], (Date.new(2001, 1, 1)...Date.new(2001, 1, 4)).map(&:day)
  assert_equal d, Marshal.load(Marshal.dump(d))
end

test "DateTime, offsets and formats" do
  dt = DateTime.new(2001, 2, 3, 4, 5, 6, "+07:00")
  assert_equal "2001-02-03T04:05:06+07:00", dt.to_s
  assert_equal [4, 5, 6, Rational(7, 24)], [dt.hour, dt.min, dt.sec, dt.offset]
  assert_equal "2001-02-02T21:05:06+00:00", dt.new_offset(0).iso8601
  assert_equal "Fri, 02 Feb 2001 21:05:06 GMT", dt.httpdate
  assert_raise(ArgumentError) { DateTime.new(2001, 2, 3, 25) }
end

test "parsing: Date.parse, _iso8601, strptime, and time.rb on top" do
  want = Date.new(2001, 2, 3)
  ["2001-02-03", "Sat, 3 Feb 2001 04:05:06 +0700", "Feb 3 2001", "3rd Feb 2001", "2001/02/03", "20010203", "3-feb-2001"].each do |s|
    assert_equal want, Date.parse(s), s
  end
  h = Date._parse("2001-02-03T04:05:06.5+07:00")
  assert_equal [2001, 2, 3, 4, 5, 6, Rational(1, 2), 25200], h.values_at(:year, :mon, :mday, :hour, :min, :sec, :sec_fraction, :offset)
  assert_equal want, Date.strptime("03/02/2001", "%d/%m/%Y")
  assert_nil Date._strptime("x", "%Y")
  assert_equal Time.utc(2001, 2, 3, 4, 5, 6), Time.parse("2001-02-03 04:05:06 UTC")
  assert_equal Time.utc(2001, 2, 3, 4, 5, 6), Time.iso8601("2001-02-03T04:05:06Z")
  assert_equal "2001-02-03T04:05:06Z", Time.utc(2001, 2, 3, 4, 5, 6).iso8601
  assert_equal want, Time.utc(2001, 2, 3, 4).to_date
end
