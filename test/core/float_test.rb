require_relative "../assert"

test "to_s" do
  assert_equal "1.0", 1.0.to_s
  assert_equal Encoding::US_ASCII, (1.0.to_s).encoding
  assert_equal "1.5", 1.5.to_s
  assert_equal Encoding::US_ASCII, (1.5.to_s).encoding
  assert_equal "100.0", 100.0.to_s
  assert_equal Encoding::US_ASCII, (100.0.to_s).encoding
  assert_equal "1.0e+15", 1e15.to_s
  assert_equal Encoding::US_ASCII, (1e15.to_s).encoding
  assert_equal "1.0e+16", 1e16.to_s
  assert_equal Encoding::US_ASCII, (1e16.to_s).encoding
  assert_equal "0.0001", 1.0e-4.to_s
  assert_equal Encoding::US_ASCII, (1.0e-4.to_s).encoding
  assert_equal "1.0e-05", 1.0e-5.to_s
  assert_equal Encoding::US_ASCII, (1.0e-5.to_s).encoding
  assert_equal "123456789.12345679", 123456789.123456789.to_s
  assert_equal Encoding::US_ASCII, (123456789.123456789.to_s).encoding
  assert_equal "-0.0", -0.0.to_s
  assert_equal Encoding::US_ASCII, (-0.0.to_s).encoding
  assert_equal "0.30000000000000004", (0.1 + 0.2).to_s
  assert_equal Encoding::US_ASCII, ((0.1 + 0.2).to_s).encoding
  assert_equal "2.5e+100", 2.5e100.to_s
  assert_equal Encoding::US_ASCII, (2.5e100.to_s).encoding
  assert_equal "1.7976931348623157e+308", 1.7976931348623157e308.to_s
  assert_equal Encoding::US_ASCII, (1.7976931348623157e308.to_s).encoding
  assert_equal "5.0e-324", 5e-324.to_s
  assert_equal Encoding::US_ASCII, (5e-324.to_s).encoding
  assert_equal "9.007199254740992e+15", 9007199254740993.0.to_s
  assert_equal Encoding::US_ASCII, (9007199254740993.0.to_s).encoding
  assert_equal "0.1", 0.1.inspect
  assert_equal Encoding::US_ASCII, (0.1.inspect).encoding
  assert_equal "1.0e+22", 1e22.to_s
  assert_equal Encoding::US_ASCII, (1e22.to_s).encoding
  assert_equal "1.0e+23", 1e23.to_s
  assert_equal Encoding::US_ASCII, (1e23.to_s).encoding
  assert_equal "-1.5e-07", -1.5e-7.to_s
  assert_equal Encoding::US_ASCII, (-1.5e-7.to_s).encoding
  assert_equal "0.3333333333333333", (1/3.0).to_s
  assert_equal Encoding::US_ASCII, ((1/3.0).to_s).encoding
  assert_equal "Infinity", Float::INFINITY.to_s
  assert_equal Encoding::US_ASCII, (Float::INFINITY.to_s).encoding
  assert_equal "-Infinity", (-Float::INFINITY).to_s
  assert_equal Encoding::US_ASCII, ((-Float::INFINITY).to_s).encoding
  assert_equal "NaN", Float::NAN.to_s
  assert_equal Encoding::US_ASCII, (Float::NAN.to_s).encoding
  assert_equal "12345678912345.678", 12345678912345.678.to_s
  assert_equal Encoding::US_ASCII, (12345678912345.678.to_s).encoding
  assert_equal "1234567.0", 1234567.0.to_s
  assert_equal Encoding::US_ASCII, (1234567.0.to_s).encoding
end

test "arithmetic" do
  assert_equal 3.5, 1.5 + 2
  assert_equal -0.5, 1.5 - 2r
  assert_equal 3.0, 1.5 * 2
  assert_equal 3.5, 7.0 / 2
  assert_equal "Infinity", (7.0 / 0).inspect
  assert_equal "-Infinity", (-7.0 / 0).inspect
  assert_true((0.0 / 0).nan?)
  assert_equal 1.0, 7.0 % 3
  assert_equal 2.0, -7.0 % 3
  assert_equal -2.0, 7.0 % -3
  assert_equal 1.5, 7.5 % 2
  assert_raise(ZeroDivisionError, "divided by 0") { 7.0 % 0.0 }
  assert_equal -0.5, 7.0.modulo(-2.5)
  assert_equal [3, 1.0], 7.0.divmod(2)
  assert_equal [-4, 1.0], -7.0.divmod(2)
  assert_equal [-4, -0.5], 7.5.divmod(-2)
  assert_raise(ZeroDivisionError, "divided by 0") { 7.0.divmod(0.0) }
  assert_equal FloatDomainError, Float::NAN.divmod(1) rescue $!.class
  assert_equal FloatDomainError, Float::INFINITY.divmod(1) rescue $!.class
  assert_equal [0, 1.0], 1.0.divmod(Float::INFINITY)
  assert_equal "[-1, Infinity]", (-1.0.divmod(Float::INFINITY)).inspect
  assert_equal 3, 7.0.div(2)
  assert_equal ZeroDivisionError, 7.0.div(0) rescue $!.class
  assert_equal ZeroDivisionError, 7.0.div(0.0) rescue $!.class
  assert_equal -1.5, -7.5.remainder(2)
  assert_equal 1.5, 7.5.remainder(-2)
  assert_equal 5.0, 5.0.remainder(Float::INFINITY)
  assert_equal 1024.0, 2.0**10
  assert_equal 1.4142135623730951, 2.0**0.5
  assert_equal (1.0000000000000002+1.7320508075688772i), (-8.0)**(1.0/3)
  assert_equal 4.0, (-2.0)**2
  assert_equal -0.5, (-2.0)**-1
  assert_equal "Infinity", (0.0**-1).inspect
  assert_equal "Infinity", (2.0**(2**100)).inspect
  assert_equal 0.75, 1.5.fdiv(2)
  assert_equal 0.75, 1.5.quo(2)
  assert_equal 1.5, 6.0.quo(4)
  assert_raise(TypeError, "nil can't be coerced into Float") { 1.0 + nil }
  assert_raise(TypeError, "String can't be coerced into Float") { 1.0 * "2" }
  assert_equal 1.5, -1.5.abs
  assert_equal 1.5, 1.5.magnitude
  assert_equal -1.5, -(1.5)
  assert_equal [2.0, 1.0], 1.0.coerce(2)
  assert_equal [2.5, 1.0], 1.0.coerce("2.5")
  assert_equal [2.0, 1.0], 1.0.coerce(2r)
  assert_true((Float::INFINITY - Float::INFINITY).nan?)
end

test "comparison" do
  assert_equal true, 1.0 == 1
  assert_equal false, 1.0.eql?(1)
  assert_equal true, 1.0.eql?(1.0)
  assert_equal true, 1.0.equal?(1.0)
  assert_equal false, Float::NAN == Float::NAN
  assert_equal true, Float::NAN.equal?(Float::NAN)
  assert_equal -1, 1.5 <=> 2
  assert_equal 1, 1.5 <=> 1
  assert_equal 0, 1.0 <=> 1
  assert_equal nil, 1.0 <=> "a"
  assert_equal nil, Float::NAN <=> 1
  assert_equal 1, Float::INFINITY <=> 2**1000
  assert_equal 0, (2.0**64) <=> 2**64
  assert_equal false, (2.0**64) == 2**64 + 1
  assert_equal true, 1.0 < 2r
  assert_raise(ArgumentError, "comparison of Float with nil failed") { 1.0 < nil }
  assert_equal false, 0.1 + 0.2 == 0.3
  assert_equal true, -0.0 == 0.0
  assert_equal true, -0.0.eql?(0.0)
  assert_equal true, 1.0.hash == 1.0.hash
  assert_equal true, 0.0.hash == -0.0.hash
  assert_equal true, 1.5.between?(1, 2)
  assert_equal 2, 1.5.clamp(2, 3)
end

test "predicates" do
  assert_equal true, Float::NAN.nan?
  assert_equal false, 1.0.nan?
  assert_equal 1, Float::INFINITY.infinite?
  assert_equal -1, (-Float::INFINITY).infinite?
  assert_equal nil, 1.0.infinite?
  assert_equal true, 1.0.finite?
  assert_equal false, Float::NAN.finite?
  assert_equal true, 0.0.zero?
  assert_equal true, -0.0.zero?
  assert_equal true, 1.0.positive?
  assert_equal false, -0.0.negative?
  assert_equal true, -1.0.negative?
  assert_equal false, 1.0.integer?
  assert_equal 1.0, 1.0.nonzero?
  assert_equal nil, 0.0.nonzero?
end

test "rounding" do
  assert_equal 3, 2.5.round
  assert_equal 4, 3.5.round
  assert_equal -3, -2.5.round
  assert_equal 2, 2.5.round(half: :even)
  assert_equal 2, 2.5.round(half: :down)
  assert_equal 3, 2.5.round(half: :up)
  assert_equal -2, -2.5.round(half: :even)
  assert_equal -2, -2.5.round(half: :down)
  assert_equal 2.68, 2.675.round(2)
  assert_equal 2.68, 2.675.round(2, half: :even)
  assert_equal 2.67, 2.675.round(2, half: :down)
  assert_equal 1.01, 1.005.round(2)
  assert_equal 1.02, 1.015.round(2)
  assert_equal 1, 0.5.round
  assert_equal 2, 1.5.round
  assert_equal 0, 0.49999999999999994.round
  assert_equal 12345.7, 12345.6789.round(1)
  assert_equal 12345.679, 12345.6789.round(3)
  assert_equal -12345.7, -12345.6789.round(1)
  assert_equal 12300, 12345.6789.round(-2)
  assert_equal 12000, 12345.6789.round(-3)
  assert_equal -12000, -12345.6789.round(-3)
  assert_equal 20, 15.0.round(-1)
  assert_equal 30, 25.0.round(-1)
  assert_equal 20, 25.0.round(-1, half: :even)
  assert_equal 1.23456789, 1.23456789.round(20)
  assert_equal 1.0e+20, 1e20.round(2)
  assert_equal 1.5, 1.5.round(300)
  assert_equal 0.0, 0.0.round(2)
  assert_equal 0, 0.0.round
  assert_equal 0.0, 1.0e-20.round(5)
  assert_equal 0, 123.456.round(-5)
  assert_raise(ArgumentError, "invalid rounding mode: foo") { 1.5.round(half: :foo) }
  assert_equal 2, 1.5.round(half: "even")
  assert_equal "Infinity", Float::INFINITY.round rescue $!.message
  assert_equal "NaN", Float::NAN.round rescue $!.message
  assert_equal "Infinity", (Float::INFINITY.round(2)).inspect
  assert_equal 1.23, 1.23456.floor(2)
  assert_equal 1.24, 1.23456.ceil(2)
  assert_equal -1.24, -1.23456.floor(2)
  assert_equal -1.23, -1.23456.ceil(2)
  assert_equal 12300, 12345.6789.floor(-2)
  assert_equal 12400, 12345.6789.ceil(-2)
  assert_equal -12400, -12345.6789.floor(-2)
  assert_equal 1.1, 1.1.floor(1)
  assert_equal 2.3, 2.3.ceil(1)
  assert_equal 0.1, 0.1.floor(20)
  assert_equal 1, 1.99999.floor
  assert_equal -1, -1.1.ceil
  assert_equal -1, -1.9.truncate
  assert_equal 1, 1.9.truncate
  assert_equal 12345.67, 12345.6789.truncate(2)
  assert_equal -12345.67, -12345.6789.truncate(2)
  assert_equal 1000000000000000019884624838656, 1e30.to_i
  assert_equal -1, -1.9.to_i
  assert_equal 1, 1.9.to_int
  assert_equal 1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000, 1e300.round(-298)
  assert_equal 0.3, 0.3.floor(1)
  assert_equal 0.3, (0.1 * 3).floor(1)
  assert_equal 5.02, 5.015.round(2)
  assert_equal 10, 10.0.floor(-1)
  assert_equal 1.5, 1.5.round(1, half: :even)
end

test "conversions" do
  assert_equal "(3/2)", (1.5.to_r).inspect
  assert_equal "(3602879701896397/36028797018963968)", (0.1.to_r).inspect
  assert_equal "(-3/4)", (-0.75.to_r).inspect
  assert_equal "(253/25300281663413827294061918339864663381194581220517764794612669753428792445999418361495047962679640561898384733039601488923726092173224184608376674992592313740189678034570795170558363467761652042654970959809093133570250935428086587327262919456144944542601257064044846194041676826903812816523290938580750782913463467636686848)", (1.0e-320.to_r).inspect
  assert_equal "(1/10)", (0.1.rationalize).inspect
  assert_equal "(333/1000)", (0.333.rationalize).inspect
  assert_equal "(1/3)", (0.333.rationalize(0.01)).inspect
  assert_equal "(3/2)", (1.5.rationalize(1r/100)).inspect
  assert_equal "(201/64)", (3.14159.rationalize(0.001)).inspect
  assert_equal "(-1/10)", (-0.1.rationalize).inspect
  assert_equal "(1/1)", (1.0.rationalize).inspect
  assert_equal "(100000000000000000000/1)", (1e20.rationalize).inspect
  assert_equal "Infinity", Float::INFINITY.to_r rescue $!.message
  assert_equal "NaN", Float::NAN.rationalize rescue $!.message
  assert_equal (1.5+0i), 1.5.to_c
  assert_equal 3, 1.5.numerator
  assert_equal 2, 1.5.denominator
  assert_equal 3602879701896397, 0.1.numerator
  assert_equal "Infinity", (Float::INFINITY.numerator).inspect
  assert_equal 1, 1.5.to_i
  assert_equal 1.5, 1.5.to_f
  assert_equal 1.0000000000000002, 1.0.next_float
  assert_equal 0.9999999999999999, 1.0.prev_float
  assert_equal 5.0e-324, 0.0.next_float
  assert_equal -5.0e-324, 0.0.prev_float
  assert_equal "Infinity", (Float::MAX.next_float).inspect
  assert_equal 1.7976931348623157e+308, Float::INFINITY.prev_float
  assert_equal -1.7976931348623157e+308, (-Float::INFINITY).next_float
  assert_equal 0.0, 5e-324.prev_float
  assert_equal true, Float::NAN.next_float.nan?
  assert_equal 2.220446049250313e-16, Float::EPSILON
  assert_equal 1.7976931348623157e+308, Float::MAX
  assert_equal 2.2250738585072014e-308, Float::MIN
  assert_equal 15, Float::DIG
  assert_equal 53, Float::MANT_DIG
  assert_equal 2, Float::RADIX
  assert_equal 1024, Float::MAX_EXP
  assert_equal -1021, Float::MIN_EXP
  assert_equal 308, Float::MAX_10_EXP
  assert_equal -307, Float::MIN_10_EXP
  assert_equal 0, 1.5.arg
  assert_equal 3.141592653589793, -1.5.arg
  assert_equal 3.141592653589793, -1.5.angle
  assert_equal true, 1.5.real?
  assert_equal 1.5, 1.5.real
  assert_equal 0, 1.5.imag
  assert_equal 1.5, 1.5.conj
  assert_equal [1.5, 0], 1.5.rect
  assert_equal [2.0, 3.141592653589793], -2.0.polar
  assert_equal [1.5, 2.0, 2.5, 3.0], 1.5.step(3.0, 0.5).to_a
  assert_equal [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7000000000000002, 1.8, 1.9, 2.0], 1.0.step(2.0, 0.1).to_a
  assert_equal 11, 1.0.step(2.0, 0.1).size
end


test "Float#<=> with infinite? objects; % by zero" do
  inf = Object.new
  def inf.infinite? = 1
  fin = Object.new
  def fin.infinite? = nil
  assert_equal 0, Float::INFINITY <=> inf
  assert_equal 1, Float::INFINITY <=> fin
  assert_equal(-1, -Float::INFINITY <=> fin)
  assert_raise(ZeroDivisionError) { 1.0 % 0.0 }
  assert_raise(ZeroDivisionError) { 1.0 % 0 }
  bad = Object.new
  def bad.coerce(_) = :incorrect
  assert_raise(TypeError, "coerce must return [x, y]") { 4.2 <=> bad }
end
