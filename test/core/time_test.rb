require_relative "../assert"

test "construction" do
  ENV["TZ"] = "Asia/Tokyo"
  assert_equal "2000-01-02 03:04:05 UTC", Time.utc(2000, 1, 2, 3, 4, 5).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 1, 2, 3, 4, 5).inspect).encoding
  assert_equal "2000-01-02 00:00:00 UTC", Time.gm(2000, "jan", 2).inspect
  assert_equal Encoding::US_ASCII, (Time.gm(2000, "jan", 2).inspect).encoding
  assert_raise(ArgumentError, "mon out of range") { Time.utc(2000, 13) }
  assert_equal "2000-03-01 00:00:00 UTC", Time.utc(2000, 2, 30).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 2, 30).inspect).encoding
  assert_raise(ArgumentError, "argument out of range") { Time.utc(2000, 1, 32) }
  assert_equal "2000-01-02 00:00:00 UTC", Time.utc(2000, 1, 1, 24).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 1, 1, 24).inspect).encoding
  assert_raise(ArgumentError, "min out of range") { Time.utc(2000, 1, 1, 24, 1) }
  assert_equal "2000-01-01 00:01:00 UTC", Time.utc(2000, 1, 1, 0, 0, 60).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 1, 1, 0, 0, 60).inspect).encoding
  assert_equal "2000-01-01 00:00:01.5 UTC", Time.utc(2000, 1, 1, 0, 0, 1.5).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 1, 1, 0, 0, 1.5).inspect).encoding
  assert_equal "2000-01-01 00:00:00.0005 UTC", Time.utc(2000, 1, 1, 0, 0, 0, 500).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 1, 1, 0, 0, 0, 500).inspect).encoding
  assert_equal "2000-01-01 00:00:00 1/3 UTC", Time.utc(2000, 1, 1, 0, 0, Rational(1, 3)).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 1, 1, 0, 0, Rational(1, 3)).inspect).encoding
  assert_equal "2000-01-02 00:00:00 UTC", Time.utc(0, 0, 0, 2, 1, 2000, nil, nil, false, nil).inspect
  assert_equal Encoding::US_ASCII, (Time.utc(0, 0, 0, 2, 1, 2000, nil, nil, false, nil).inspect).encoding
  assert_equal "2000-01-02 03:04:05 +0900", Time.local(2000, 1, 2, 3, 4, 5).inspect
  assert_equal Encoding::US_ASCII, (Time.local(2000, 1, 2, 3, 4, 5).inspect).encoding
  assert_equal "2000-01-01 00:00:00 +0900", Time.mktime(2000).inspect
  assert_equal Encoding::US_ASCII, (Time.mktime(2000).inspect).encoding
  assert_equal "2000-01-02 03:04:05 +0900", Time.new(2000, 1, 2, 3, 4, 5, "+09:00").inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, 3, 4, 5, "+09:00").inspect).encoding
  assert_equal "2000-01-02 03:04:05 -0530", Time.new(2000, 1, 2, 3, 4, 5, "-05:30").inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, 3, 4, 5, "-05:30").inspect).encoding
  assert_equal "2000-01-02 03:04:05 UTC", Time.new(2000, 1, 2, 3, 4, 5, "Z").inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, 3, 4, 5, "Z").inspect).encoding
  assert_equal true, Time.new(2000, 1, 2, 3, 4, 5, "UTC").utc?
  assert_equal "2000-01-02 03:04:05 +0100", Time.new(2000, 1, 2, 3, 4, 5, 3600).inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, 3, 4, 5, 3600).inspect).encoding
  assert_equal "2000-01-02 00:00:00 -0300", Time.new(2000, 1, 2, in: "-03:00").inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, in: "-03:00").inspect).encoding
  assert_raise(ArgumentError, "utc_offset out of range") { Time.new(2000, 1, 2, 3, 4, 5, "+25:00") }
  assert_raise(ArgumentError, "\"+HH:MM\", \"-HH:MM\", \"UTC\" or \"A\"..\"I\",\"K\"..\"Z\" expected for utc_offset: junk") { Time.new(2000, 1, 2, 3, 4, 5, "junk") }
  assert_equal "2000-01-02 00:00:00 +0900", Time.new(2000, 1, 2).inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2).inspect).encoding
  assert_equal "2000-01-01 00:00:00 +0900", Time.new(2000).inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000).inspect).encoding
  assert_equal "2000-01-02 03:04:05 +0900", Time.new("2000-01-02 03:04:05").inspect
  assert_equal "2000-01-02 03:04:05.123 +0900", Time.new("2000-01-02 03:04:05.123 +09:00").inspect
  assert_equal "2000-01-02 03:04:05 UTC", Time.new("2000-01-02T03:04:05Z").inspect
  assert_equal "2000-01-02 03:04:05 +0100", Time.new("2000-01-02 03:04:05", in: "+01:00").inspect
  assert_raise(ArgumentError, "no time information") { Time.new("2000-01-02") }
  assert_equal "1970-01-01 09:00:00 +0900", Time.at(0).inspect
  assert_equal Encoding::US_ASCII, (Time.at(0).inspect).encoding
  assert_equal "1970-01-01 00:00:00 UTC", Time.at(0).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(0).utc.inspect).encoding
  assert_equal "1970-01-01 00:00:01.5 UTC", Time.at(1.5).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(1.5).utc.inspect).encoding
  assert_equal "1970-01-01 00:00:01 225179981368525/2251799813685248 UTC", Time.at(1.1).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(1.1).utc.inspect).encoding
  assert_equal "1970-01-01 00:00:00 1/3 UTC", Time.at(Rational(1, 3)).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(Rational(1, 3)).utc.inspect).encoding
  assert_equal "1970-01-01 00:00:01.5 UTC", Time.at(1, 500, :millisecond).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(1, 500, :millisecond).utc.inspect).encoding
  assert_equal "1970-01-01 00:00:01.123456789 UTC", Time.at(1, 123456789, :nsec).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(1, 123456789, :nsec).utc.inspect).encoding
  assert_equal "1970-01-01 00:00:01.000005 UTC", Time.at(1, 5).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(1, 5).utc.inspect).encoding
  assert_raise(ArgumentError, "unexpected unit: bogus") { Time.at(1, 5, :bogus) }
  assert_equal "1970-01-01 09:00:00 +0900", Time.at(0, in: "+09:00").inspect
  assert_equal Encoding::US_ASCII, (Time.at(0, in: "+09:00").inspect).encoding
  assert_equal "1970-01-01 00:00:00 UTC", Time.at(0, in: "UTC").inspect
  assert_equal Encoding::US_ASCII, (Time.at(0, in: "UTC").inspect).encoding
  assert_raise(TypeError, "can't convert String into an exact number") { Time.at("0") }
  assert_raise(TypeError, "can't convert NilClass into an exact number") { Time.at(nil) }
  assert_equal "2000-01-01 00:00:00 UTC", Time.at(Time.utc(2000, 1, 1)).inspect
  assert_equal Encoding::US_ASCII, (Time.at(Time.utc(2000, 1, 1)).inspect).encoding
  assert_equal Time, Time.now.class
  assert_equal true, (Time.now - Time.now).abs < 1
  assert_equal 32400, Time.now(in: "+09:00").utc_offset
end

test "accessors" do
  ENV["TZ"] = "Asia/Tokyo"
  t = Time.utc(2000, 1, 2, 3, 4, 5, 678901.5)
  assert_equal 2000, t.year
  assert_equal 1, t.month
  assert_equal 1, t.mon
  assert_equal 2, t.day
  assert_equal 2, t.mday
  assert_equal 3, t.hour
  assert_equal 4, t.min
  assert_equal 5, t.sec
  assert_equal 678901, t.usec
  assert_equal 678901500, t.nsec
  assert_equal "(1357803/2000000)", (t.subsec).inspect
  assert_equal 0, t.wday
  assert_equal 2, t.yday
  assert_equal "UTC", t.zone
  assert_equal Encoding::US_ASCII, (t.zone).encoding
  assert_equal 0, t.utc_offset
  assert_equal 0, t.gmt_offset
  assert_equal true, t.utc?
  assert_equal true, t.gmt?
  assert_equal false, t.dst?
  assert_equal true, t.sunday?
  assert_equal false, t.monday?
  assert_equal 946782245, t.to_i
  assert_equal 946782245.6789016, t.to_f
  assert_equal "(1893564491357803/2000000)", (t.to_r).inspect
  assert_equal [5, 4, 3, 2, 1, 2000, 0, 2, false, "UTC"], t.to_a
  l = Time.local(2000, 7, 1, 12)
  assert_equal "JST", l.zone
  assert_equal Encoding::US_ASCII, (l.zone).encoding
  assert_equal 32400, l.utc_offset
  assert_equal false, l.utc?
  assert_equal [0, 0, 12, 1, 7, 2000, 6, 183, false, "JST"], l.to_a
  assert_equal 12, l.hour
  f = Time.new(2000, 1, 2, 3, 4, 5, "+05:45")
  assert_equal nil, f.zone
  assert_equal 20700, f.utc_offset
  assert_equal [5, 4, 3, 2, 1, 2000, 0, 2, false, nil], f.to_a
  assert_equal 366, Time.utc(2000, 12, 31).yday
  assert_equal 366, Time.utc(2004, 12, 31).yday
  assert_equal -1, Time.utc(1969, 12, 31, 23, 59, 59).to_i
  assert_equal 4, Time.utc(1900, 3, 1).wday
  assert_equal "1969-12-31 23:59:58.5 UTC", Time.at(-1.5).utc.inspect
  assert_equal Encoding::US_ASCII, (Time.at(-1.5).utc.inspect).encoding
  assert_equal 500000, Time.at(-1.5).usec
end

test "conversion and zones" do
  ENV["TZ"] = "Asia/Tokyo"
  t = Time.utc(2000, 1, 2, 3, 4, 5)
  assert_equal "2000-01-02 12:04:05 +0900", t.getlocal.inspect
  assert_equal Encoding::US_ASCII, (t.getlocal.inspect).encoding
  assert_equal "2000-01-02 04:04:05 +0100", t.getlocal("+01:00").inspect
  assert_equal Encoding::US_ASCII, (t.getlocal("+01:00").inspect).encoding
  assert_equal "2000-01-02 02:04:05 -0100", t.getlocal(-3600).inspect
  assert_equal Encoding::US_ASCII, (t.getlocal(-3600).inspect).encoding
  assert_equal "2000-01-02 03:04:05 UTC", t.getutc.inspect
  assert_equal Encoding::US_ASCII, (t.getutc.inspect).encoding
  assert_equal "2000-01-02 12:04:05 +0900", t.localtime.inspect
  assert_equal Encoding::US_ASCII, (t.localtime.inspect).encoding
  assert_equal "2000-01-02 12:04:05 +0900", t.inspect
  assert_equal Encoding::US_ASCII, (t.inspect).encoding
  assert_equal "2000-01-02 03:04:05 UTC", t.utc.inspect
  assert_equal Encoding::US_ASCII, (t.utc.inspect).encoding
  assert_equal true, t.gmtime.equal?(t)
  assert_raise(FrozenError, "can't modify frozen Time: 2000-01-01 00:00:00 UTC") { Time.utc(2000, 1, 1).freeze.localtime }
  assert_equal "2000-01-01 00:00:00 UTC", Time.utc(2000, 1, 1).freeze.utc.inspect
  assert_equal Encoding::US_ASCII, (Time.utc(2000, 1, 1).freeze.utc.inspect).encoding
  assert_equal "2000-01-02 03:04:05 UTC", t.dup.inspect
  assert_equal Encoding::US_ASCII, (t.dup.inspect).encoding
  assert_equal false, t.clone.frozen?
  assert_equal true, t.freeze.clone.frozen?
  assert_equal false, t.clone(freeze: false).frozen?
end

test "arithmetic and comparison" do
  ENV["TZ"] = "Asia/Tokyo"
  t = Time.utc(2000, 1, 2, 3, 4, 5)
  assert_equal "2000-01-02 03:04:06 UTC", (t + 1).inspect
  assert_equal Encoding::US_ASCII, ((t + 1).inspect).encoding
  assert_equal "2000-01-02 03:04:06.5 UTC", (t + 1.5).inspect
  assert_equal Encoding::US_ASCII, ((t + 1.5).inspect).encoding
  assert_equal "2000-01-02 03:04:05 1/3 UTC", (t + Rational(1, 3)).inspect
  assert_equal Encoding::US_ASCII, ((t + Rational(1, 3)).inspect).encoding
  assert_equal "2000-01-01 03:04:05 UTC", (t - 86400).inspect
  assert_equal Encoding::US_ASCII, ((t - 86400).inspect).encoding
  assert_equal "(3602879701896397/36028797018963968)", ((t + 0.1).subsec).inspect
  assert_equal 97445.0, t - Time.utc(2000, 1, 1)
  assert_equal Float, (t - Time.utc(2000, 1, 1)).class
  assert_raise(TypeError, "time + time?") { t + t }
  assert_raise(TypeError, "can't convert String into an exact number") { t + "1" }
  assert_raise(TypeError, "can't convert NilClass into an exact number") { t + nil }
  assert_equal -1, t <=> Time.utc(2001)
  assert_equal 0, t <=> t
  assert_equal nil, t <=> 1
  assert_equal true, t == Time.utc(2000, 1, 2, 3, 4, 5)
  assert_equal true, t == Time.new(2000, 1, 2, 12, 4, 5, "+09:00")
  assert_equal true, t.eql?(Time.utc(2000, 1, 2, 3, 4, 5))
  assert_equal true, t.eql?(Time.utc(2000, 1, 2, 3, 4, 5.0))
  assert_equal true, t.hash == Time.utc(2000, 1, 2, 3, 4, 5).hash
  assert_equal true, t < Time.utc(2001)
  assert_equal true, t.between?(Time.utc(1999), Time.utc(2001))
  assert_equal 2001, [Time.utc(2002), Time.utc(2001)].min.year
  assert_equal false, t.respond_to?(:succ)
  assert_equal "2000-01-02 03:04:05.123 UTC", (t + 0.123456789).round(3).inspect
  assert_equal Encoding::US_ASCII, ((t + 0.123456789).round(3).inspect).encoding
  assert_equal "2000-01-02 03:04:06 UTC", (t + 0.5).round.inspect
  assert_equal Encoding::US_ASCII, ((t + 0.5).round.inspect).encoding
  assert_equal "2000-01-02 03:04:05 UTC", (t + 0.4).round.inspect
  assert_equal Encoding::US_ASCII, ((t + 0.4).round.inspect).encoding
  assert_equal "2000-01-02 03:04:05.12 UTC", (t + 0.123456789).floor(2).inspect
  assert_equal Encoding::US_ASCII, ((t + 0.123456789).floor(2).inspect).encoding
  assert_equal "2000-01-02 03:04:05.13 UTC", (t + 0.123456789).ceil(2).inspect
  assert_equal Encoding::US_ASCII, ((t + 0.123456789).ceil(2).inspect).encoding
  assert_raise(ArgumentError, "negative ndigits given") { (t + 0.5).round(-1) }
  assert_equal 584554051223, (Time.at(0) + (2**64)).year
end

test "formatting" do
  ENV["TZ"] = "Asia/Tokyo"
  t = Time.utc(2000, 1, 2, 3, 4, 5, 123456.789)
  assert_equal "2000-01-02 03:04:05 UTC", t.to_s
  assert_equal Encoding::US_ASCII, (t.to_s).encoding
  assert_equal "2000-01-02 03:04:05 +0900", Time.new(2000, 1, 2, 3, 4, 5, "+09:00").to_s
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, 3, 4, 5, "+09:00").to_s).encoding
  assert_equal "2000-01-02 03:04:05 +0900", Time.new(2000, 1, 2, 3, 4, 5, "+09:00:30").to_s
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, 3, 4, 5, "+09:00:30").to_s).encoding
  assert_equal "2000-01-02 03:04:05 +090030", Time.new(2000, 1, 2, 3, 4, 5, "+09:00:30").inspect
  assert_equal Encoding::US_ASCII, (Time.new(2000, 1, 2, 3, 4, 5, "+09:00:30").inspect).encoding
  assert_equal "2000-01-02 03:04:05 8483885939586761/68719476736000000 UTC", t.inspect
  assert_equal Encoding::US_ASCII, (t.inspect).encoding
  assert_equal "2000-01-02 00:00:00 +0900", Time.local(2000, 1, 2).to_s
  assert_equal Encoding::US_ASCII, (Time.local(2000, 1, 2).to_s).encoding
  assert_equal "Sun Jan  2 03:04:05 2000", t.ctime
  assert_equal Encoding::US_ASCII, (t.ctime).encoding
  assert_equal "Sun Jan  2 03:04:05 2000", t.asctime
  assert_equal Encoding::US_ASCII, (t.asctime).encoding
  assert_equal "2000-01-02 03:04:05", t.strftime("%Y-%m-%d %H:%M:%S")
  assert_equal "00 20 01 1  1 02 2  2 002 2", t.strftime("%y %C %m %-m %_m %d %-d %e %j %-j")
  assert_equal "03 3  3 03  3 AM am am 04 05", t.strftime("%H %-H %k %I %l %p %P %#p %M %S")
  assert_equal "123 123456789 123 123456 123456789 123456789000 1", t.strftime("%L %N %3N %6N %9N %12N %1N")
  assert_equal "+0000 +00:00 +00:00:00 +00 UTC", t.strftime("%z %:z %::z %:::z %Z")
  assert_equal "-0930 -09:30 -09:30:00 -09:30 |", Time.new(2000, 1, 2, 3, 4, 5, "-09:30").strftime("%z %:z %::z %:::z %Z|")
  assert_equal "-0030  -030 -000000030 -0030", Time.new(2000, 1, 2, 3, 4, 5, "-00:30").strftime("%z %_z %10z %-z")
  assert_equal "Sun Sunday Jan January Jan SUN JANUARY SUN JANUARY     Sunday Sunday| 0000Sunday", t.strftime("%a %A %b %B %h %^a %^B %#a %#B %10A %-10A| %010A")
  assert_equal "7 0 01 00 1999 99 52", t.strftime("%u %w %U %W %G %g %V")
  assert_equal "2020 53 00 00 5", Time.utc(2021, 1, 1).strftime("%G %V %U %W %u")
  assert_equal "2020 53 366", Time.utc(2020, 12, 31).strftime("%G %V %j")
  assert_equal "2009 01", Time.utc(2008, 12, 29).strftime("%G %V")
  assert_equal "946782245 %Q", t.strftime("%s %Q")
  assert_equal "Sun Jan  2 03:04:05 2000|01/02/00|2000-01-02|03:04:05|03:04|03:04:05 AM|01/02/00|03:04:05", t.strftime("%c|%D|%F|%T|%R|%r|%x|%X")
  assert_equal "%+", t.strftime("%+")
  assert_equal " 2-JAN-2000", t.strftime("%v")
  assert_equal "%|\n|\t|%q|%E|    %", t.strftime("%%|%n|%t|%q|%E|%5%")
  assert_equal "0000002000|2000|    2|00002|005", t.strftime("%10Y|%-Y|%_5d|%05e|%3S")
  assert_equal "", t.strftime("")
  assert_equal "literal only", t.strftime("literal only")
  assert_raise(ArgumentError, "invalid format: %") { t.strftime("%") }
  assert_equal "日本 2000", t.strftime("日本 %Y")
  assert_equal "-0001 -1 99", Time.utc(-1, 1, 1).strftime("%Y %C %y")
  assert_equal "12345", Time.utc(12345, 1, 1).strftime("%Y")
  assert_equal "0005 0005", Time.utc(5, 1, 1).strftime("%Y %4Y")
end

test "xmlschema and deconstruct_keys (Ruby 3.2+)" do
  ENV["TZ"] = "Asia/Tokyo"
  t = Time.utc(2000, 1, 2, 3, 4, 5, 123456.789)
  assert_equal "2000-01-02T03:04:05Z", t.xmlschema
  assert_equal "2000-01-02T03:04:05.123Z", t.iso8601(3)
  assert_equal "2000-01-02T03:04:05+09:00", Time.new(2000, 1, 2, 3, 4, 5, "+09:00").xmlschema
  assert_equal "2000-01-02T03:04:05.000000+09:00", Time.new(2000, 1, 2, 3, 4, 5, "+09:00").xmlschema(6)
  assert_equal "2000-01-02T00:00:00+09:00", Time.local(2000, 1, 2).xmlschema
  assert_equal({year: 2000, month: 1}, t.deconstruct_keys([:year, :month]))
  assert_equal [:year, :month, :day, :yday, :wday, :hour, :min, :sec, :subsec, :dst, :zone], t.deconstruct_keys(nil).keys
  assert_equal Rational(8483885939586761, 68719476736000000), t.deconstruct_keys([:subsec])[:subsec]
  case t
  in {year: 2000, month: 1, day: d}
    assert_equal 2, d
  end
end

class TestZone
  def initialize(offset, abbr = nil)
    @offset = offset
    @abbr = abbr
  end

  def local_to_utc(t)
    t - @offset
  end

  def utc_to_local(t)
    t + @offset
  end

  def abbr(_t)
    @abbr
  end
end

test "timezone objects" do
  zone = TestZone.new(5 * 3600 + 30 * 60, "IST")
  t = Time.new(2000, 1, 1, 12, 0, 0, zone)
  assert_same zone, t.zone
  assert_equal 19800, t.utc_offset
  assert_equal "2000-01-01 12:00:00 +0530", t.inspect
  assert_equal "IST", t.strftime("%Z")
  assert_equal Time.utc(2000, 1, 1, 6, 30), t.getutc
  t2 = t + 60
  assert_same zone, t2.zone
  assert_equal 1, t2.min
  t3 = Time.at(0, in: zone)
  assert_equal [5, 30], [t3.hour, t3.min]
  assert_same zone, Time.utc(2000).getlocal(zone).zone
  only_utc_to_local = Object.new
  def only_utc_to_local.utc_to_local(t) = t
  assert_raise(TypeError, "can't convert Object into an exact number") { Time.new(2000, 1, 1, 0, 0, 0, only_utc_to_local) }
  far = Object.new
  def far.local_to_utc(t) = t + 86400
  assert_raise(ArgumentError, "utc_offset out of range") { Time.new(2000, 1, 1, 0, 0, 0, far) }
end

test "zone names through find_timezone, offset strings" do
  klass = Class.new(Time) do
    def self.find_timezone(name) = TestZone.new(3600, name)
  end
  t = klass.new(2000, 1, 1, 0, 0, 0, "Europe/Somewhere")
  assert_equal "Europe/Somewhere", t.strftime("%Z")
  assert_raise(ArgumentError, '"+HH:MM", "-HH:MM", "UTC" or "A".."I","K".."Z" expected for utc_offset: +00:60') { Time.new(2000, 1, 1, 0, 0, 0, "+00:60") }
  assert_equal true, Time.new(2000, 1, 1, 0, 0, 0, "-00:00").utc?
  assert_equal(-3600, Time.new(2000, 1, 1, 0, 0, 0, "N").utc_offset)
  assert_equal Time, (klass.new(2000) + 1).class
  assert_equal Time, klass.new(2000).round.class
end

test "Time#<=> with other objects" do
  t = Time.at(100)
  later = Object.new
  def later.<=>(_other) = 1
  assert_equal(-1, t <=> later)
  assert_equal nil, t <=> 2
  assert_equal nil, 2 <=> t
end
