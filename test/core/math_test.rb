require_relative "../assert"

test "basic" do
  assert_equal 2.0, Math.sqrt(4)
  assert_equal 1.4142135623730951, Math.sqrt(2)
  assert_equal 0.0, Math.sqrt(0)
  assert_equal "0.0", Math.sqrt(-0.0).to_s
  assert_equal Encoding::US_ASCII, (Math.sqrt(-0.0).to_s).encoding
  assert_raise(Math::DomainError, "Numerical argument is out of domain - sqrt") { Math.sqrt(-1) }
  assert_equal 1.0e+50, Math.sqrt(10**100)
  assert_equal 2.0, Math.sqrt(4r)
  assert_equal 3.0, Math.cbrt(27)
  assert_equal -2.0, Math.cbrt(-8)
  assert_equal 1.2599210498948732, Math.cbrt(2)
  assert_equal 1.0e+100, Math.cbrt(1e300)
  assert_equal 0.0, Math.sin(0)
  assert_equal 1.0, Math.sin(Math::PI / 2)
  assert_equal -1.0, Math.cos(Math::PI)
  assert_equal 1.5574077246549023, Math.tan(1)
  assert_equal 1.5707963267948966, Math.asin(1)
  assert_raise(Math::DomainError, "Numerical argument is out of domain - asin") { Math.asin(2) }
  assert_equal 3.141592653589793, Math.acos(-1)
  assert_raise(Math::DomainError, "Numerical argument is out of domain - acos") { Math.acos(1.5) }
  assert_equal 0.7853981633974483, Math.atan(1)
  assert_equal 0.7853981633974483, Math.atan2(1, 1)
  assert_equal 3.141592653589793, Math.atan2(0.0, -0.0)
  assert_equal -3.141592653589793, Math.atan2(-0.0, -0.0)
  assert_equal 0.0, Math.atan2(0, 0)
  assert_equal 0.0, Math.atan2(1, Float::INFINITY)
  assert_equal 1.1752011936438014, Math.sinh(1)
  assert_equal 1.5430806348152437, Math.cosh(1)
  assert_equal 0.7615941559557649, Math.tanh(1)
  assert_equal 0.881373587019543, Math.asinh(1)
  assert_equal 0.0, Math.acosh(1)
  assert_raise(Math::DomainError, "Numerical argument is out of domain - acosh") { Math.acosh(0.5) }
  assert_equal 0.5493061443340548, Math.atanh(0.5)
  assert_equal "Infinity", (Math.atanh(1)).inspect
  assert_equal "-Infinity", (Math.atanh(-1)).inspect
  assert_raise(Math::DomainError, "Numerical argument is out of domain - atanh") { Math.atanh(2) }
  assert_equal 2.718281828459045, Math.exp(1)
  assert_equal "Infinity", (Math.exp(710)).inspect
  assert_equal 1.0, Math.log(Math::E)
  assert_equal "-Infinity", (Math.log(0)).inspect
  assert_raise(Math::DomainError, "Numerical argument is out of domain - log") { Math.log(-1) }
  assert_equal 3.0, Math.log(8, 2)
  assert_equal 2.0, Math.log(100, 10)
  assert_equal 2302.5850929940457, Math.log(10**1000)
  assert_equal 709.782712893384, Math.log(2**1024)
  assert_equal "-0.0", (Math.log(1, 0)).to_s
  assert_raise(Math::DomainError, "Numerical argument is out of domain - log") { Math.log(-1, 2) }
  assert_raise(Math::DomainError, "Numerical argument is out of domain - log") { Math.log(2, -1) }
  assert_equal 3.0, Math.log2(8)
  assert_equal 2000.0, Math.log2(2**2000)
  assert_equal "-Infinity", (Math.log2(0)).inspect
  assert_raise(Math::DomainError, "Numerical argument is out of domain - log2") { Math.log2(-1) }
  assert_equal 3.0, Math.log10(1000)
  assert_equal 400.0, Math.log10(10**400)
  assert_raise(Math::DomainError, "Numerical argument is out of domain - log10") { Math.log10(-1) }
  assert_equal 5.0, Math.hypot(3, 4)
  assert_equal [0.6025390625, 11], Math.frexp(1234.0)
  assert_equal [0.0, 0], Math.frexp(0)
  assert_equal 1234.0, Math.ldexp(0.6025390625, 11)
  assert_equal "Infinity", (Math.ldexp(1, 2000)).inspect
  assert_equal 0.8427007929497149, Math.erf(1)
  assert_equal 0.15729920705028513, Math.erfc(1)
  assert_equal 0.5204998778130465, Math.erf(0.5)
  assert_equal 24.0, Math.gamma(5)
  assert_equal 1.772453850905516, Math.gamma(0.5)
  assert_equal 1.0, Math.gamma(1)
  assert_equal 1.1240007277776077e+21, Math.gamma(23)
  assert_raise(Math::DomainError, "Numerical argument is out of domain - gamma") { Math.gamma(-1) }
  assert_equal 2.363271801207355, Math.gamma(-1.5)
  assert_equal "Infinity", (Math.gamma(0.0)).inspect
  assert_equal "-Infinity", (Math.gamma(-0.0)).inspect
  assert_equal 7.257415615307999e+306, Math.gamma(171)
  assert_equal "Infinity", (Math.gamma(172)).inspect
  assert_equal "Infinity", (Math.gamma(Float::INFINITY)).inspect
  assert_raise(Math::DomainError, "Numerical argument is out of domain - gamma") { Math.gamma(-Float::INFINITY) }
  assert_equal [3.1780538303479458, 1], Math.lgamma(5)
  assert_equal [0.5723649429247001, 1], Math.lgamma(0.5)
  assert_equal [1.2655121234846454, -1], Math.lgamma(-0.5)
  assert_equal "[Infinity, 1]", (Math.lgamma(0)).inspect
  assert_equal "[Infinity, -1]", (Math.lgamma(-0.0)).inspect
  assert_equal "[Infinity, 1]", (Math.lgamma(-1)).inspect
  assert_equal "[Infinity, 1]", (Math.lgamma(Float::INFINITY)).inspect
  assert_raise(Math::DomainError, "Numerical argument is out of domain - lgamma") { Math.lgamma(-Float::INFINITY) }
  assert_raise(TypeError, "can't convert String into Float") { Math.sqrt("4") }
  assert_raise(TypeError, "can't convert nil into Float") { Math.sqrt(nil) }
  assert_raise(TypeError, "can't convert true into Float") { Math.sin(true) }
  assert_equal 3.141592653589793, Math::PI
  assert_equal 2.718281828459045, Math::E
  assert_equal true, Math.sqrt(Float::NAN).nan?
  assert_equal true, Math.log(Float::NAN).nan?
  assert_equal false, Math::DomainError.ancestors.include?(ArgumentError)
  assert_equal true, Math.respond_to?(:sqrt)
end

