require_relative "../assert"
require_relative "stdlib_path"
require "bigdecimal"
require "bigdecimal/util"

def bd(s) = BigDecimal(s)

test "money arithmetic is exact where Float is not" do
  prices = %w[19.99 5.01 0.10 0.20 1234.56]
  total = prices.sum(BigDecimal("0")) { |p| BigDecimal(p) }
  assert_equal bd("1259.86"), total
  assert_equal "1259.86", total.to_s("F")
  assert_equal bd("0.3"), bd("0.1") + bd("0.2")
  assert_false 0.1 + 0.2 == 0.3
  tax = (total * bd("0.0825")).round(2)
  assert_equal bd("103.94"), tax
  assert_equal "1363.8", (total + tax).to_s("F")
  q, r = bd("100").divmod(3)
  assert_equal [bd("33"), bd("1")], [q, r]
  assert_equal bd("-2"), bd("-7") % 5 - bd("5")
  assert_equal bd("3"), bd("-7") % 5
  assert_equal bd("-2"), bd("-7").remainder(5)
  assert_equal 2, bd("7").div(3)
  assert_equal bd("0.233e1"), bd("7").div(3, 3)
end

test "division keeps CRuby's precision and rounds the last digit" do
  assert_equal "0.333333333333333333333333333333333333e0", (bd("1") / 3).to_s
  assert_equal "0.666666666666666666666666666666666667e0", (bd("2") / 3).to_s
  assert_equal "0.176366841446142857142857142857142857e9", (bd("1234567890.123") / 7).to_s
  assert_equal bd("0.5"), bd("1").quo(2)
  assert_equal "0.33333e0", bd("1").div(3, 5).to_s
  assert_equal BigDecimal::INFINITY, bd("1") / 0
  assert_true (bd("0") / 0).nan?
  assert_raise(ZeroDivisionError) { bd("1").div(0) }
end

test "rounding modes" do
  x = bd("2.5")
  assert_equal 3, x.round
  assert_equal 2, x.round(0, :half_even).to_i
  assert_equal bd("2"), x.round(0, half: :down)
  assert_equal bd("3"), x.round(0, BigDecimal::ROUND_UP)
  assert_equal bd("-3"), bd("-2.1").floor
  assert_equal bd("-2"), bd("-2.9").ceil
  assert_equal bd("123.45"), bd("123.456").truncate(2)
  assert_equal bd("120"), bd("123.456").round(-1)
  BigDecimal.save_rounding_mode do
    BigDecimal.mode(BigDecimal::ROUND_MODE, :banker)
    assert_equal bd("0.2e1"), bd("2.5").round(0)
    assert_equal BigDecimal::ROUND_HALF_EVEN, BigDecimal.mode(BigDecimal::ROUND_MODE)
  end
  assert_equal BigDecimal::ROUND_HALF_UP, BigDecimal.mode(BigDecimal::ROUND_MODE)
  assert_raise(ArgumentError) { BigDecimal.mode(BigDecimal::ROUND_MODE, :nonsense) }
end

test "limit and exception modes" do
  BigDecimal.save_limit do
    BigDecimal.limit(3)
    assert_equal bd("2.23"), bd("1.23456") + 1
    assert_equal bd("0.333"), bd("1") / 3
  end
  assert_equal 0, BigDecimal.limit
  BigDecimal.save_exception_mode do
    BigDecimal.mode(BigDecimal::EXCEPTION_NaN, true)
    assert_raise(FloatDomainError) { bd("NaN") + 1 }
  end
  assert_true (bd("NaN") + 1).nan?
end

test "to_s formats" do
  x = bd("1234567.891")
  assert_equal "0.1234567891e7", x.to_s
  assert_equal "1234567.891", x.to_s("F")
  assert_equal "123 456 7.891", x.to_s("3F")
  assert_equal "+0.123 456 789 1e7", x.to_s("+3E")
  assert_equal " 0.00 00 12 34", bd("0.00001234").to_s(" 2F")
  assert_equal "-0.1234 5678 91e7", (-x).to_s(4)
  assert_equal "100.0", bd("100").to_s("F")
  assert_equal "-0.0", bd("-0").to_s
  assert_equal "-Infinity", bd("-Infinity").inspect
  assert_equal Encoding::US_ASCII, x.to_s.encoding
  assert_equal "1234567.891", x.to_digits
end

test "conversions and queries" do
  x = bd("-123.4500")
  assert_equal(-123, x.to_i)
  assert_equal(-123.45, x.to_f)
  assert_equal Rational(-2469, 20), x.to_r
  assert_equal [-1, "12345", 10, 3], x.split
  assert_equal [5, 2, 3], [x.precision, x.scale, x.exponent]
  assert_equal(-2, x.sign)
  assert_equal bd("0.45"), x.frac.abs
  assert_equal bd("0.15e1"), "1.5xyz".to_d
  assert_equal bd("0.25e1"), 2.5.to_d
  assert_equal bd("0.333e0"), Rational(1, 3).to_d(3)
  assert_equal bd("5"), 5.to_d
  assert_true bd("1.5") == Rational(3, 2)
  assert_true bd("0.1") == 0.1
  assert_equal(-1, bd("1") <=> 2)
  assert_nil bd("NaN") <=> 1
  assert_equal [bd("2"), bd("1.5")], bd("1.5").coerce(2)
  assert_equal bd("1.5").hash, bd("1.50").hash
  assert_true bd("1.5").eql?(bd("1.50"))
  assert_raise(ArgumentError, 'invalid value for BigDecimal(): "1x"') { BigDecimal("1x") }
  assert_nil BigDecimal("junk", exception: false)
  assert_raise(FloatDomainError) { bd("Infinity").to_i }
  assert_raise(TypeError) { BigDecimal(nil) }
  assert_raise(NoMethodError) { BigDecimal.new("1") }
end

test "powers and square roots" do
  assert_equal bd("1024"), bd("2") ** 10
  assert_equal bd("0.25"), bd("2") ** -2
  assert_equal "0.111111111111111111111111111111111111e0", bd("3").power(-2).to_s
  s = bd("2").sqrt(50)
  assert_equal "1.41421356237309504880168872420969807856967187537694", s.to_s("F")[0, 52]
  assert_true (s * s - 2).abs < bd("1e-50")
  assert_raise(FloatDomainError) { bd("-1").sqrt(10) }
  assert_equal "0.2718281828e1", BigMath.exp(1, 10).to_s
  assert_equal "0.693147180559945309417232112588603776354688e0", BigMath.log(bd("2"), 10).to_s
  assert_equal "0.1414213562373095048801689e1", (bd("2") ** 0.5).to_s
  assert_equal "0.1648721270700128146848651e1", BigMath.exp(bd("0.5"), 25).to_s
  assert_raise(Math::DomainError) { BigMath.log(bd("-1"), 10) }
end

test "Marshal round trip" do
  [bd("3.14159"), bd("-0.5e-20"), bd("0"), bd("-Infinity")].each do |x|
    y = Marshal.load(Marshal.dump(x))
    assert_equal x.to_s, y.to_s
    assert_kind_of BigDecimal, y
  end
  assert_true Marshal.load(Marshal.dump(bd("NaN"))).nan?
  assert_equal "18:0.125e2", bd("12.5")._dump
  assert_equal bd("12.5"), BigDecimal._load("18:0.125e2")
end
