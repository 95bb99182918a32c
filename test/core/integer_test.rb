require_relative "../assert"

test "arithmetic" do
  assert_equal 10, 7 + 3
  assert_equal -3, 7 - 10
  assert_equal 42, 6 * 7
  assert_equal 3, 7 / 2
  assert_equal -4, -7 / 2
  assert_equal -4, 7 / -2
  assert_equal 1, 7 % 3
  assert_equal 2, -7 % 3
  assert_equal -2, 7 % -3
  assert_equal -1, -7.remainder(3)
  assert_equal 1, 7.remainder(-3)
  assert_equal [3, 1], 7.divmod(2)
  assert_equal [-4, 1], -7.divmod(2)
  assert_equal [-4, -1.0], 7.divmod(-2.0)
  assert_equal 3.5, 7.fdiv(2)
  assert_equal 9223372036854775808, 2**62 + 2**62
  assert_equal 18446744073709551615, (2**64) - 1
  assert_equal 340282366920938463463374607431768211456, (2**64) * (2**64)
  assert_equal 422550200076076467165567735125, (2**100) / 3
  assert_equal -422550200076076467165567735126, -(2**100) / 3
  assert_equal 2, (2**100) % 7
  assert_equal 5, -(2**100) % 7
  assert_equal [-181092942889747057356671886483, -5], (2**100).divmod(-7)
  assert_raise(ZeroDivisionError, "divided by 0") { 7 / 0 }
  assert_raise(ZeroDivisionError, "divided by 0") { 7 % 0 }
  assert_raise(ZeroDivisionError, "divided by 0") { 7.divmod(0) }
  assert_equal "Infinity", (7 / 0.0).inspect
  assert_equal "-Infinity", (-7 / 0.0).inspect
  assert_true((0 / 0.0).nan?)
  assert_equal 2, 7.div(2.5)
  assert_equal 2.0, 7.modulo(2.5)
  assert_equal "Infinity", (7.fdiv(0)).inspect
  assert_equal 10.0, (10**30).fdiv(10**29)
  assert_equal 2.0, (2**1000).fdiv(2**999)
  assert_equal 2.5, 1 + 1.5
  assert_equal "(3/1)", (1 + 2r).inspect
  assert_equal (1+2i), 1 + 2i
  assert_raise(TypeError, "nil can't be coerced into Integer") { 1 + nil }
  assert_raise(TypeError, "String can't be coerced into Integer") { 1 + "2" }
  assert_raise(TypeError, "nil can't be coerced into Integer") { 1 - nil }
  assert_raise(TypeError, ":a can't be coerced into Integer") { 1 * :a }
  assert_equal 5, -5.abs
  assert_equal 1180591620717411303424, (-2**70).abs
  assert_equal 4, 5.pred
  assert_equal 6, 5.succ
  assert_equal -4611686018427387904, -(2**62)
  assert_equal 4611686018427387904, -(-(2**62))
  assert_equal 4611686018427387904, 4611686018427387903 + 1
  assert_equal -4611686018427387905, -4611686018427387904 - 1
end

test "pow" do
  assert_equal 1024, 2**10
  assert_equal "(1/2)", (2**-1).inspect
  assert_equal "(1/4)", (2**-2).inspect
  assert_equal -8, (-2)**3
  assert_equal (1.0000000000000002+1.7320508075688772i), (-8)**(1.0/3)
  assert_equal 1.4142135623730951, 2**0.5
  assert_equal 1, 0**0
  assert_raise(ZeroDivisionError, "divided by 0") { 0**-1 }
  assert_equal 1267650600228229401496703205376, 2**100
  assert_equal 1, (-1)**(2**100)
  assert_equal 1, 1**(2**100)
  assert_equal 24, 2.pow(10, 1000)
  assert_equal 2, 2.pow(100, 7)
  assert_raise(RangeError, "Integer#pow() 1st argument cannot be negative when 2nd argument specified") { 3.pow(-1, 7) }
  assert_equal -6, 2.pow(3, -7)
  assert_raise(ZeroDivisionError, "divided by 0") { 2.pow(3, 0) }
  assert_raise(TypeError, "Integer#pow() 2nd argument not allowed unless a 1st argument is integer") { 2.pow(3.0, 7) }
  assert_equal 295837643, (2**70).pow(2**70, 10**9+7)
  assert_equal "(1/100)", (10**-2).inspect
  assert_equal 2.0, 4**0.5
  assert_equal (0.0+2.0i), (-4)**0.5
  assert_equal true, 2**(2**20) > 0
end

test "comparison" do
  assert_equal -1, 1 <=> 2
  assert_equal 1, 2 <=> 1
  assert_equal 0, 1 <=> 1
  assert_equal 0, 1 <=> 1.0
  assert_equal -1, 1 <=> 1.5
  assert_equal nil, 1 <=> "a"
  assert_equal nil, 1 <=> nil
  assert_equal 0, (2**64) <=> (2**64)
  assert_equal 0, (2**64) <=> 2.0**64
  assert_equal 1, (2**64 + 1) <=> 2.0**64
  assert_equal 1, (2**53 + 1) <=> (2.0**53)
  assert_equal false, (2**53 + 1) == (2.0**53)
  assert_equal true, 1 == 1.0
  assert_equal false, 1.eql?(1.0)
  assert_equal true, 1.eql?(1)
  assert_equal true, 1.equal?(1)
  assert_equal true, (2**64).eql?(2**64)
  assert_equal true, 1 < 2.5
  assert_equal false, 1 < Float::NAN
  assert_equal false, 1 == Float::NAN
  assert_equal nil, 1 <=> Float::NAN
  assert_raise(ArgumentError, "comparison of Integer with String failed") { 1 < "a" }
  assert_raise(ArgumentError, "comparison of Integer with nil failed") { 1 > nil }
  assert_equal true, 3.between?(1, 5)
  assert_equal 4, 3.clamp(4, 6)
  assert_equal 2, 3.clamp(1..2)
  assert_equal true, 1 < 2r
  assert_equal true, 1 == 1r
  assert_equal false, (2**70) > Float::INFINITY
  assert_equal true, (2**70) < Float::INFINITY
end

test "bits" do
  assert_equal 1, 5 & 3
  assert_equal 7, 5 | 3
  assert_equal 6, 5 ^ 3
  assert_equal -6, ~5
  assert_equal 251, -5 & 0xff
  assert_equal 1024, 1 << 10
  assert_equal 18446744073709551616, 1 << 64
  assert_equal -8, -1 << 3
  assert_equal 4, 16 >> 2
  assert_equal -4, -16 >> 2
  assert_equal -1, -1 >> 100
  assert_equal 4, 1 >> -2
  assert_equal 0, 1 << -1
  assert_equal 1024, (2**70) >> 60
  assert_equal 0, (2**70) & (2**70 - 1)
  assert_equal 1, 5[0]
  assert_equal 0, 5[1]
  assert_equal 1, 5[2]
  assert_equal 1, -1[1000]
  assert_equal 1, (2**70)[70]
  assert_equal 1, 0b1010[1, 2]
  assert_equal 1, 0b1010[1..2]
  assert_equal 5, 0b1010[1..]
  assert_raise(ArgumentError, "The beginless range for Integer#[] results in infinity") { 0b1010[..2] }
  assert_equal 8, 255.bit_length
  assert_equal 8, -256.bit_length
  assert_equal 65, (2**64).bit_length
  assert_equal 0, 0.bit_length
  assert_equal 0, -1.bit_length
  assert_equal true, 5.allbits?(5)
  assert_equal false, 5.allbits?(7)
  assert_equal false, 5.anybits?(2)
  assert_equal true, 5.nobits?(2)
  assert_raise(TypeError, "1.5 can't be coerced into Integer") { 5 & 1.5 }
  assert_equal 8, 1.size
  assert_equal 9, (2**64).size
end

test "rounding" do
  assert_equal 20, 15.round(-1)
  assert_equal 30, 25.round(-1)
  assert_equal 20, 25.round(-1, half: :even)
  assert_equal 20, 25.round(-1, half: :down)
  assert_equal 30, 25.round(-1, half: :up)
  assert_equal -30, -25.round(-1)
  assert_equal -20, -25.round(-1, half: :even)
  assert_equal 1200, 1234.round(-2)
  assert_equal 1200, 1234.floor(-2)
  assert_equal 1300, 1234.ceil(-2)
  assert_equal -1300, -1234.floor(-2)
  assert_equal -1200, -1234.ceil(-2)
  assert_equal 1200, 1234.truncate(-2)
  assert_equal -1200, -1234.truncate(-2)
  assert_equal 1234, 1234.round(2)
  assert_equal 0, 1234.round(-10)
  assert_equal 5, 5.round(half: :foo)
  assert_equal 1000000000000000000000000000010, (10**30 + 5).round(-1)
  assert_equal 20, 15.round(-1, half: nil)
  assert_equal 5, 5.floor
  assert_equal 5, 5.ceil(1)
end

test "digits and conversions" do
  assert_equal [4, 3, 2, 1], 1234.digits
  assert_equal [34, 12], 1234.digits(100)
  assert_equal [0], 0.digits
  assert_raise(Math::DomainError, "out of domain") { -1.digits }
  assert_raise(ArgumentError, "invalid radix 1") { 10.digits(1) }
  assert_raise(ArgumentError, "negative radix") { 10.digits(-2) }
  assert_equal [0, 0, 64], (2**70).digits(2**32)
  assert_equal "11111111", 255.to_s(2)
  assert_equal Encoding::US_ASCII, (255.to_s(2)).encoding
  assert_equal "ff", 255.to_s(16)
  assert_equal Encoding::US_ASCII, (255.to_s(16)).encoding
  assert_equal "-ff", -255.to_s(16)
  assert_equal Encoding::US_ASCII, (-255.to_s(16)).encoding
  assert_equal "3ewfdnca0n6ld1ggvfgg", (2**100).to_s(36)
  assert_equal Encoding::US_ASCII, ((2**100).to_s(36)).encoding
  assert_raise(ArgumentError, "invalid radix 1") { 255.to_s(1) }
  assert_raise(ArgumentError, "invalid radix 37") { 255.to_s(37) }
  assert_equal "255", 255.inspect
  assert_equal Encoding::US_ASCII, (255.inspect).encoding
  assert_equal "A", 65.chr
  assert_equal Encoding::US_ASCII, (65.chr).encoding
  assert_equal "\"\\xFF\"", (255.chr).inspect
  assert_raise(RangeError, "256 out of char range") { 256.chr }
  assert_equal "あ", 0x3042.chr(Encoding::UTF_8)
  assert_raise(RangeError, "12354 out of char range") { 0x3042.chr }
  assert_raise(RangeError, "invalid codepoint 0xD800 in UTF-8") { 0xD800.chr("UTF-8") }
  assert_equal "A", 65.chr("US-ASCII")
  assert_equal Encoding::US_ASCII, (65.chr("US-ASCII")).encoding
  assert_raise(RangeError, "invalid codepoint 0xC8 in US-ASCII") { 200.chr("US-ASCII") }
  assert_raise(RangeError, "-1 out of char range") { -1.chr }
  assert_equal 97, 97.ord
  assert_equal 5.0, 5.to_f
  assert_equal 1.8446744073709552e+19, (2**64).to_f
  assert_equal "Infinity", ((2**1024).to_f).inspect
  assert_equal "(5/1)", (5.to_r).inspect
  assert_equal (5+0i), 5.to_c
  assert_equal "(5/1)", (5.rationalize).inspect
  assert_equal 5, 5.numerator
  assert_equal 1, 5.denominator
  assert_equal true, 5.integer?
  assert_equal true, 5.finite?
  assert_equal nil, 5.infinite?
  assert_equal false, 5.zero?
  assert_equal true, 0.zero?
  assert_equal true, 5.positive?
  assert_equal true, -5.negative?
  assert_equal false, 5.even?
  assert_equal true, 5.odd?
  assert_equal true, (2**70).even?
  assert_equal [2.5, 5.0], 5.coerce(2.5)
  assert_equal [2, 5], 5.coerce(2)
  assert_equal [3.0, 5.0], 5.coerce("3")
  assert_equal [1, 1180591620717411303424], (2**70).coerce(1)
  assert_equal 4, Integer.sqrt(24)
  assert_equal 5, Integer.sqrt(25)
  assert_equal 100000000000000000000, Integer.sqrt(10**40)
  assert_raise(Math::DomainError, "Numerical argument is out of domain - \"isqrt\"") { Integer.sqrt(-1) }
  assert_equal 1, Integer.sqrt(2.5)
  assert_equal 2, 10.gcd(4)
  assert_equal 20, 10.lcm(4)
  assert_equal [2, 20], 10.gcdlcm(4)
  assert_equal 2, -10.gcd(4)
  assert_equal 34359738368, (2**70).gcd(2**35 * 3)
  assert_raise(TypeError, "not an integer") { 10.gcd(2.0) }
  assert_equal 4, 7.ceildiv(2)
  assert_equal 4, 7.ceildiv(2)
  assert_equal -3, -7.ceildiv(2)
  assert_equal -3, 7.ceildiv(-2)
  assert_equal 4, -7.ceildiv(-2)
  assert_equal 1, (2**70).ceildiv(2**70)
  assert_equal true, 1.hash == 1.hash
  assert_equal 5, 5.dup
  assert_equal true, 5.frozen?
end

test "iteration" do
  assert_equal [0, 1, 2], (a = []; 3.times { |i| a << i }; a)
  assert_equal [0, 1, 2], 3.times.to_a
  assert_equal 3, 3.times.size
  assert_equal [1, 2, 3], (a = []; 1.upto(3) { |i| a << i }; a)
  assert_equal [1, 2, 3], 1.upto(3).to_a
  assert_equal [3, 2, 1], (a = []; 3.downto(1) { |i| a << i }; a)
  assert_equal 3, 3.downto(1).size
  assert_equal [1, 4, 7, 10], 1.step(10, 3).to_a
  assert_equal [10, 7, 4, 1], 10.step(1, -3).to_a
  assert_equal [1.0, 1.5, 2.0], 1.step(2, 0.5).to_a
  assert_equal [1, 3, 5], 1.step(by: 2, to: 6).to_a
  assert_equal [1.0, 1.5, 2.0], 1.0.step(2.0, 0.5).to_a
  assert_equal [1, 2, 3], 1.step(3).to_a
  assert_equal [], 1.upto(0).to_a
  assert_equal [], -2.times.to_a
  assert_equal ArgumentError, 1.step(10, 0) rescue $!.class
  assert_equal 5, 1.step(3, 0.5).size
  assert_equal [0, 2, 4, 6, 8], 5.times.map { _1 * 2 }
end


test "step" do
  assert_equal [1, 4, 7, 10], 1.step(10, 3).to_a
  assert_equal 4, 1.step(10, 3).size
  assert_equal [10, 7, 4, 1], 10.step(1, -3).to_a
  assert_equal [], 10.step(1).to_a
  assert_equal [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7000000000000002, 1.8, 1.9, 2.0], 1.0.step(2.0, 0.1).to_a
  assert_equal 11, 1.0.step(2.0, 0.1).size
  assert_equal [1, 0, -1], 1.step(by: -1).first(3)
  assert_equal [1, 3, 5, 7], 1.step(by: 2, to: 7).to_a
  assert_raise(ArgumentError, "step can't be 0") { 1.step(3, 0) }
  assert_raise(ArgumentError, "step can't be 0") { 1.step(3, 0) { break } }
  assert_raise(ArgumentError, "step can't be 0") { 1.step(3, by: 0) { break } }
  assert_equal [1.0, 3.0], 1.step(Float::INFINITY, 2).first(2)
  assert_equal "[1, (3/2), (2/1)]", (1.step(2, 0.5r).to_a).inspect
  assert_equal [1.0, 1.5, 2.0], 1.step(2r, 0.5).to_a
  assert_equal [0.1, 0.2, 0.30000000000000004, 0.4, 0.5], 0.1.step(0.5, 0.1).to_a
  assert_equal [1.0, 0.75, 0.5, 0.25, 0.0], 1.0.step(0.0, -0.25).to_a
  assert_equal [2, 10, 18], 1.step(10, 4).map { _1 * 2 }
  assert_equal Enumerator::ArithmeticSequence, 1.step(5, 2).class
  assert_equal "(1.step(5, 2))", 1.step(5, 2).inspect
  assert_equal [1.0, 1.5, 2.0], 1.0.step(by: 0.5).first(3)
  assert_equal [1, 2], 1.step(5, nil).first(2)
  assert_equal [1, 3], 1.step(nil, 2).first(2)
  assert_raise(ArgumentError, "comparison of String with 0 failed") { 1.step(5, "a").to_a }
  assert_equal Enumerator, 1.step(5, "a").class
  assert_raise(ArgumentError, "comparison of Integer with String failed") { 1.step("x") { } }
  assert_raise(ArgumentError, "comparison of Integer with String failed") { 1.step("x").to_a }
  assert_raise(TypeError, "step must be numeric") { 1.step(3, nil) { } }
  assert_equal 0, 3.step(1).size
  assert_equal [1], 1.step(1, 1).to_a
  assert_equal [1.0, 2.0, 3.0], 1.step(3, 1.0).to_a
  assert_equal [1, 2, 3], 1.step(3, by: 1).to_a
  assert_raise(ArgumentError, "step is given twice") { 1.step(3, 1, by: 1) }
  assert_raise(ArgumentError, "to is given twice") { 1.step(3, to: 1) }
  assert_raise(ArgumentError, "unknown keyword: :foo") { 1.step(3, foo: 1) { } }
  assert_raise(TypeError, "0 can't be coerced into Object") { 1.step(3, Object.new) { } }
  assert_equal [1, 3, 5, 7], (a = []; 1.step(by: 2) { |x| a << x; break if x > 5 }; a)
  assert_equal [1, 0, -1, -2, -3, -4], (a = []; 1.step(nil, -1) { |x| a << x; break if x < -3 }; a)
  assert_equal [1, 3, 5, 7], (a = []; 1.step(Float::INFINITY, 2) { |x| a << x; break if x > 5 }; a)
  assert_equal [], (a = []; 1.step(-Float::INFINITY, 2) { |x| a << x; break if x > 5 }; a)
  assert_equal "[(1/1), (4/3), (5/3), (2/1)]", ((a = []; 1r.step(2, 1/3r) { |x| a << x }; a)).inspect
  assert_equal [18446744073709551616, 18446744073709551617, 18446744073709551618], (a = []; (2**64).step(2**64+2) { |x| a << x }; a)
  assert_equal [1.0, 2.0], (a = []; 1.step(2.5) { |x| a << x }; a)
  assert_equal [1, 2, 3], (a = []; 1.step(3r) { |x| a << x }; a)
  assert_equal [1, 9223372036854775809], (a = []; 1.step(2**64, 2**63) { |x| a << x }; a)
  assert_equal [4611686018427387902, 4611686018427387903, 4611686018427387904, 4611686018427387905], (a = []; (2**62-2).step(2**62+1) { |x| a << x }; a)
  assert_equal [1.0], (a = []; 1.0.step(2.0, Float::INFINITY) { |x| a << x }; a)
  assert_equal [10.0, 5.5, 1.0], (a = []; 10.step(1, -4.5) { |x| a << x }; a)
  assert_equal [1.44, 1.9599999999999997, 2.5600000000000005, 3.24, 4.0], (a = []; 1.2.step(by: 0.2, to: 2.0) { |f| a << f * f }; a)
  assert_equal [27.0, 3.375, 0.0, -3.375, -27.0], (a = []; 3.step(by: -1.5, to: -3) { |i| a << i * i * i }; a)
  assert_equal 1, 1.step(2, 0.5) { }
end


class CoerceRaises
  def coerce(_other) = raise(IOError, "from coerce")
end

class CoerceToTwo
  def coerce(other) = [other, 2]
end

test "coerce exceptions propagate from comparisons; div coerces" do
  assert_raise(IOError, "from coerce") { 1 < CoerceRaises.new }
  assert_raise(IOError, "from coerce") { (2**70) <=> CoerceRaises.new }
  assert_raise(IOError, "from coerce") { 1.5 >= CoerceRaises.new }
  assert_equal 3, 7.div(CoerceToTwo.new)
  assert_equal nil, 1 <=> Object.new
end

test "shift limits, round ndigits, upto/downto sizes, no new" do
  assert_raise(RangeError, "shift width too big") { 1 << 2**32 }
  assert_equal 0, 0 >> -(2**64)
  assert_equal 0, 0 << 2**40
  assert_raise(RangeError, "integer 2147483648 too big to convert to 'int'") { 42.round(2**31) }
  assert_raise(ArgumentError, "comparison of Integer with String failed") { 1.upto("a").size }
  assert_equal 3, 3.downto(1).size
  assert_raise(NoMethodError) { Integer.new }
  assert_raise(NoMethodError) { Float.new }
  assert_raise(NoMethodError) { Symbol.new }
end

test "ceil and floor to more digits than self has round away from zero only outward" do
  assert_equal 10**20, 5.ceil(-20)
  assert_equal(-10**20, -5.floor(-20))
  assert_equal 0, 5.floor(-20)
  assert_equal 0, -5.ceil(-20)
  assert_equal 0, 5.round(-20)
  assert_equal 10**20, 5.0.ceil(-20)
  assert_equal(-10**20, -5.0.floor(-20))
end

test "multiplication and powers of big numbers (number-theoretic transform past ~77,000 bits)" do
  a = 3**200_000
  b = 7**150_000
  c = a * b
  assert_equal 738_096, c.bit_length
  m = 1_000_000_007
  assert_equal (a % m) * (b % m) % m, c % m
  assert_equal 3.pow(200_000, m) * 7.pow(150_000, m) % m, c % m
  assert_equal a, c / b
  assert_equal 0, c % a
  assert_equal(-c, -a * b)
  assert_equal c, (-a) * (-b)
  sq = a * a
  assert_equal 3**400_000, sq
  assert_equal a.pow(2, m), sq % m
  d = (a + 1)**3
  assert_equal (a + 1) * (a + 1) * (a + 1), d
  assert_equal (a + 1).pow(3, m), d % m
  ones = 2**200_000 - 1
  assert_equal 2**400_000 - 2**200_001 + 1, ones * ones
end
