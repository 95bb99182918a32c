require_relative "../assert"

test "construction" do
  assert_equal (1+2i), Complex(1, 2)
  assert_equal (1+0i), Complex(1)
  assert_equal (1.5-2i), Complex(1.5, -2)
  assert_equal "((1/2)+3i)", (Complex(Rational(1, 2), 3)).inspect
  assert_equal (1+2i), Complex("1+2i")
  assert_equal (0+3i), Complex("3i")
  assert_equal (0-1i), Complex("-i")
  assert_equal (1.5-2.5i), Complex("1.5-2.5i")
  assert_equal "((1/2)+(3/4)*i)", (Complex("1/2+3/4i")).inspect
  assert_raise(ArgumentError, "invalid value for convert(): \"abc\"") { Complex("abc") }
  assert_equal (1+2i), Complex("1", "2")
  assert_raise(TypeError, "can't convert nil into Complex") { Complex(nil) }
  assert_raise(TypeError, "can't convert nil into Complex") { Complex(1, nil) }
  assert_equal (-3+5i), Complex(Complex(1, 2), Complex(3, 4))
  assert_equal nil, Complex("x", exception: false)
  assert_equal (1+2i), Complex.rect(1, 2)
  assert_equal (3+0i), Complex.rectangular(3)
  assert_raise(TypeError, "not a real") { Complex.rect(1, "2") }
  assert_raise(TypeError, "not a real") { Complex.rect(Complex(1, 2)) }
  assert_equal (1+0.0i), Complex.polar(1, 0)
  assert_equal (0.0+2i), Complex.polar(2, Math::PI / 2)
  assert_equal (1+0i), Complex.polar(1)
  assert_equal (1.0+0.0i), Complex.polar(1.0, 0.0)
  assert_equal (0+1i), Complex::I
  assert_equal (-1+0i), Complex::I * Complex::I
  assert_equal (0+3i), 3i
  assert_equal (0+2.5i), 2.5i
  assert_equal (1+2i), 1 + 2i
end

test "arithmetic" do
  assert_equal (4+6i), Complex(1, 2) + Complex(3, 4)
  assert_equal (-2-2i), Complex(1, 2) - Complex(3, 4)
  assert_equal (-5+10i), Complex(1, 2) * Complex(3, 4)
  assert_equal "((11/25)+(2/25)*i)", (Complex(1, 2) / Complex(3, 4)).inspect
  assert_equal (0.44+0.08i), Complex(1.0, 2) / Complex(3, 4)
  assert_equal "((1/2)+1i)", (Complex(1, 2) / 2).inspect
  assert_equal (0.5+1.0i), Complex(1, 2) / 2.0
  assert_equal "((1/2)+1i)", (Complex(1, 2).quo(2)).inspect
  assert_equal (0.5+1.0i), Complex(1, 2).fdiv(2)
  assert_equal (2+1i), Complex(4, 2) / Complex(2, 0)
  assert_equal (2+2i), Complex(1, 2) + 1
  assert_equal (2.5+5.0i), Complex(1, 2) * 2.5
  assert_equal "((3/2)+2i)", (Complex(1, 2) + Rational(1, 2)).inspect
  assert_equal (2+2i), 1 + Complex(1, 2)
  assert_equal (2.0+4.0i), 2.0 * Complex(1, 2)
  assert_equal "((-1/2)-2i)", (Rational(1, 2) - Complex(1, 2)).inspect
  assert_equal (-1-2i), -Complex(1, 2)
  assert_equal (-3+4i), Complex(1, 2) ** 2
  assert_equal (-11-2i), Complex(1, 2) ** 3
  assert_equal "((1/5)-(2/5)*i)", (Complex(1, 2) ** -1).inspect
  assert_equal (1+0i), Complex(1, 2) ** 0
  assert_equal (1+2i), Complex(1, 2) ** 1
  assert_equal (-1+0i), Complex(0, 1) ** 2
  assert_equal (0-8i), Complex(0, 2) ** 3
  assert_equal (9+0i), Complex(3, 0) ** 2
  assert_equal (1.272019649514069+0.7861513777574233i), Complex(1, 2) ** 0.5
  assert_equal (-0.24720004426291722+0.6964504870825432i), Complex(1, 2) ** Complex(1, 1)
  assert_equal (0+2i), Complex(1, 1) ** Rational(2)
  assert_equal (1.0000000000000002+1.7320508075688772i), Complex(-8) ** Rational(1, 3)
  assert_equal (1.5384778027279442+1.2779225526272695i), 2 ** Complex(1, 1)
  assert_raise(ZeroDivisionError, "divided by 0") { Complex(1, 2) / 0 }
  assert_raise(ZeroDivisionError, "divided by 0") { Complex(1.0, 2) / 0 }
  assert_raise(TypeError, "nil can't be coerced into Complex") { Complex(1, 2) + nil }
  assert_raise(TypeError, "String can't be coerced into Complex") { Complex(1, 2) * "a" }
end

test "properties" do
  assert_equal 5.0, Complex(3, 4).abs
  assert_equal 3, Complex(3, 0).abs
  assert_equal 4, Complex(0, -4).abs
  assert_equal 3.0, Complex(3.0, 0).abs
  assert_equal 25, Complex(3, 4).abs2
  assert_equal 25.0, Complex(3.0, 4).abs2
  assert_equal 0.9272952180016122, Complex(3, 4).arg
  assert_equal 3.141592653589793, Complex(-1, 0).arg
  assert_equal 1.5707963267948966, Complex(0, 1).angle
  assert_equal [5.0, 0.9272952180016122], Complex(3, 4).polar
  assert_equal [3, 4], Complex(3, 4).rect
  assert_equal [3, 4], Complex(3, 4).rectangular
  assert_equal 3, Complex(3, 4).real
  assert_equal 4, Complex(3, 4).imaginary
  assert_equal 4, Complex(3, 4).imag
  assert_equal (3-4i), Complex(3, 4).conjugate
  assert_equal (3-4i), Complex(3, 4).conj
  assert_equal false, Complex(3, 4).real?
  assert_equal true, Complex(3, 4).finite?
  assert_equal false, Complex(Float::INFINITY, 4).finite?
  assert_equal 1, Complex(Float::INFINITY, 4).infinite?
  assert_equal nil, Complex(3, 4).infinite?
  assert_equal 6, Complex(Rational(1, 2), Rational(1, 3)).denominator
  assert_equal (3+2i), Complex(Rational(1, 2), Rational(1, 3)).numerator
  assert_equal true, Complex(3, 4).hash == Complex(3, 4).hash
  assert_equal true, Complex(3, 4).frozen?
end

test "comparison" do
  assert_equal true, Complex(1, 2) == Complex(1, 2)
  assert_equal true, Complex(1, 2) == Complex(1.0, 2.0)
  assert_equal true, Complex(1, 0) == 1
  assert_equal true, Complex(1, 0.0) == 1
  assert_equal true, 1 == Complex(1, 0)
  assert_equal true, 1.0 == Complex(1, 0)
  assert_equal false, Complex(1, 2) == 1
  assert_equal true, Complex(1, 2).eql?(Complex(1, 2))
  assert_equal false, Complex(1, 2).eql?(Complex(1.0, 2))
  assert_equal -1, Complex(1, 0) <=> Complex(2, 0)
  assert_equal -1, Complex(1, 0) <=> 2
  assert_equal nil, Complex(1, 2) <=> Complex(1, 2)
  assert_equal nil, Complex(1, 0) <=> "a"
  assert_equal 1, Complex(3, 0) <=> 1.5
end

test "conversions" do
  assert_equal "1+2i", Complex(1, 2).to_s
  assert_equal Encoding::US_ASCII, (Complex(1, 2).to_s).encoding
  assert_equal "1-2i", Complex(1, -2).to_s
  assert_equal Encoding::US_ASCII, (Complex(1, -2).to_s).encoding
  assert_equal "1.5-2.5i", Complex(1.5, -2.5).to_s
  assert_equal Encoding::US_ASCII, (Complex(1.5, -2.5).to_s).encoding
  assert_equal "1+0.0i", Complex(1, 0.0).to_s
  assert_equal Encoding::US_ASCII, (Complex(1, 0.0).to_s).encoding
  assert_equal "1-0.0i", Complex(1, -0.0).to_s
  assert_equal Encoding::US_ASCII, (Complex(1, -0.0).to_s).encoding
  assert_equal "0+Infinity*i", Complex(0, Float::INFINITY).to_s
  assert_equal Encoding::US_ASCII, (Complex(0, Float::INFINITY).to_s).encoding
  assert_equal "0+NaN*i", Complex(0, Float::NAN).to_s
  assert_equal Encoding::US_ASCII, (Complex(0, Float::NAN).to_s).encoding
  assert_equal "0-Infinity*i", Complex(0, -Float::INFINITY).to_s
  assert_equal Encoding::US_ASCII, (Complex(0, -Float::INFINITY).to_s).encoding
  assert_equal "1/2-3/4i", Complex(Rational(1, 2), Rational(-3, 4)).to_s
  assert_equal Encoding::US_ASCII, (Complex(Rational(1, 2), Rational(-3, 4)).to_s).encoding
  assert_equal "(1+2i)", Complex(1, 2).inspect
  assert_equal Encoding::US_ASCII, (Complex(1, 2).inspect).encoding
  assert_equal "(1.5-2.5i)", Complex(1.5, -2.5).inspect
  assert_equal Encoding::US_ASCII, (Complex(1.5, -2.5).inspect).encoding
  assert_equal "((1/2)+(3/4)*i)", Complex(Rational(1, 2), Rational(3, 4)).inspect
  assert_equal Encoding::US_ASCII, (Complex(Rational(1, 2), Rational(3, 4)).inspect).encoding
  assert_equal "(0+NaN*i)", Complex(0, Float::NAN).inspect
  assert_equal Encoding::US_ASCII, (Complex(0, Float::NAN).inspect).encoding
  assert_equal 3, Complex(3, 0).to_i
  assert_equal 3.0, Complex(3, 0).to_f
  assert_equal "(3/1)", (Complex(3, 0).to_r).inspect
  assert_raise(RangeError, "can't convert 3+2i into Integer") { Complex(3, 2).to_i }
  assert_raise(RangeError, "can't convert 3+0.0i into Integer") { Complex(3, 0.0).to_i }
  assert_equal "(1/3)", (Complex(Rational(1, 3), 0).rationalize(Rational(1, 10))).inspect
  assert_equal (3+2i), Complex(3, 2).to_c
  assert_equal [(3+0i), (1+2i)], Complex(1, 2).coerce(3)
  assert_equal [(3+4i), (1+2i)], Complex(1, 2).coerce(Complex(3, 4))
  assert_raise(TypeError, "String can't be coerced into Complex") { Complex(1, 2).coerce("a") }
  assert_equal (5+0i), 5.to_c
  assert_equal (1.5+0i), 1.5.to_c
  assert_equal "((1/2)+0i)", (Rational(1, 2).to_c).inspect
  assert_equal (0+5i), 5.i
  assert_equal 5, 5.real
  assert_equal 0, 5.imag
  assert_equal 3.141592653589793, -5.arg
  assert_equal [5, 0], 5.rect
  assert_equal 5, 5.conj
  assert_equal 25, 5.abs2
  assert_equal [5, 3.141592653589793], -5.polar
  assert_equal (1+2i), Complex(1, 2).to_c
end

