require_relative "../assert"

test "construction" do
  assert_equal "(1/3)", (Rational(1, 3)).inspect
  assert_equal "(1/2)", (Rational(2, 4)).inspect
  assert_equal "(-1/3)", (Rational(-1, 3)).inspect
  assert_equal "(-1/3)", (Rational(1, -3)).inspect
  assert_equal "(0/1)", (Rational(0, 5)).inspect
  assert_equal "(5/1)", (Rational(5)).inspect
  assert_equal "(3/2)", (Rational(1.5)).inspect
  assert_equal "(3/4)", (Rational(0.75)).inspect
  assert_equal "(1/3)", (Rational("1/3")).inspect
  assert_equal "(3/4)", (Rational("0.75")).inspect
  assert_equal "(1/2)", (Rational(" 2/4 ")).inspect
  assert_equal "(100/1)", (Rational("1e2")).inspect
  assert_equal "(-1/2)", (Rational("-3/6")).inspect
  assert_raise(ArgumentError, "invalid value for convert(): \"abc\"") { Rational("abc") }
  assert_raise(ZeroDivisionError, "divided by 0") { Rational("1/0") }
  assert_raise(ZeroDivisionError, "divided by 0") { Rational(1, 0) }
  assert_raise(TypeError, "can't convert nil into Rational") { Rational(nil) }
  assert_raise(TypeError, "can't convert nil into Rational") { Rational(1, nil) }
  assert_equal "(3/2)", (Rational(Rational(1, 2), Rational(1, 3))).inspect
  assert_equal "(3/4)", (Rational(1.5, 2)).inspect
  assert_equal "(1/1)", (Rational(Complex(1, 0))).inspect
  assert_equal "(1/3)", (Rational("1/3", exception: false)).inspect
  assert_equal nil, Rational("x", exception: false)
  assert_equal "(3/1)", (3r).inspect
  assert_equal "(1/3)", (1/3r).inspect
  assert_equal "(3/2)", (1.5r).inspect
  assert_equal "(100/1)", (Rational(10**30, 10**28)).inspect
end

test "arithmetic" do
  assert_equal "(5/6)", (Rational(1, 2) + Rational(1, 3)).inspect
  assert_equal "(1/6)", (Rational(1, 2) - Rational(1, 3)).inspect
  assert_equal "(1/3)", (Rational(1, 2) * Rational(2, 3)).inspect
  assert_equal "(2/1)", (Rational(1, 2) / Rational(1, 4)).inspect
  assert_equal "(3/2)", (Rational(1, 2) + 1).inspect
  assert_equal 1.0, Rational(1, 2) + 0.5
  assert_equal "(1/1)", (Rational(1, 2) * 2).inspect
  assert_raise(ZeroDivisionError, "divided by 0") { Rational(1, 2) / 0 }
  assert_equal "Infinity", (Rational(1, 2) / 0.0).inspect
  assert_equal "(1/4)", (Rational(1, 2) ** 2).inspect
  assert_equal "(4/1)", (Rational(1, 2) ** -2).inspect
  assert_equal 0.6666666666666666, Rational(4, 9) ** 0.5
  assert_equal (0.33333333333333337+0.5773502691896257i), Rational(-8, 27) ** Rational(1, 3)
  assert_equal "(4/9)", (Rational(2, 3) ** Rational(2)).inspect
  assert_raise(ZeroDivisionError, "divided by 0") { Rational(0) ** -1 }
  assert_equal "(1/6)", (Rational(1, 2) % Rational(1, 3)).inspect
  assert_equal "(1/2)", (Rational(-7, 2) % 2).inspect
  assert_equal "[1, (3/2)]", (Rational(7, 2).divmod(2)).inspect
  assert_equal "[-11, (1/6)]", (Rational(-7, 2).divmod(Rational(1, 3))).inspect
  assert_equal 1, Rational(7, 2).div(2)
  assert_equal "(-1/2)", (Rational(7, 2).modulo(-2)).inspect
  assert_equal "(3/2)", (Rational(7, 2).remainder(2)).inspect
  assert_equal "(-3/2)", (Rational(-7, 2).remainder(2)).inspect
  assert_equal 0.16666666666666666, Rational(1, 3).fdiv(2)
  assert_equal "(1/6)", (Rational(1, 3).quo(2)).inspect
  assert_equal "(-1/3)", (-Rational(1, 3)).inspect
  assert_equal "(1/3)", (+Rational(1, 3)).inspect
  assert_equal "(1/3)", (Rational(-1, 3).abs).inspect
  assert_equal "(3/2)", (1 + Rational(1, 2)).inspect
  assert_equal 2.0, 1.5 + Rational(1, 2)
  assert_equal "(1/2)", (1 - Rational(1, 2)).inspect
  assert_equal "(2/3)", (2 * Rational(1, 3)).inspect
  assert_equal "(3/1)", (1 / Rational(1, 3)).inspect
  assert_equal 1.4142135623730951, 2 ** Rational(1, 2)
  assert_raise(TypeError, "nil can't be coerced into Rational") { Rational(1, 2) + nil }
  assert_equal "((3/2)+1i)", (Rational(1, 2) + Complex(1, 1)).inspect
end

test "comparison" do
  assert_equal true, Rational(1, 2) == Rational(2, 4)
  assert_equal true, Rational(1, 2) == 0.5
  assert_equal true, Rational(2, 1) == 2
  assert_equal 1, Rational(1, 2) <=> Rational(1, 3)
  assert_equal -1, Rational(1, 3) <=> 0.5
  assert_equal -1, Rational(1, 2) <=> 1
  assert_equal nil, Rational(1, 2) <=> "a"
  assert_equal true, Rational(1, 2) < 1
  assert_equal true, Rational(1, 2).eql?(Rational(1, 2))
  assert_equal false, Rational(1, 2).eql?(0.5)
  assert_equal true, Rational(1, 2).hash == Rational(2, 4).hash
  assert_equal "(1/2)", ([Rational(1, 2), Rational(1, 3)].max).inspect
  assert_equal true, Rational(1, 2).between?(0, 1)
  assert_raise(ArgumentError, "comparison of Rational with nil failed") { Rational(1, 2) < nil }
end

test "rounding" do
  assert_equal 3, Rational(5, 2).round
  assert_equal -3, Rational(-5, 2).round
  assert_equal 2, Rational(5, 2).round(half: :even)
  assert_equal 2, Rational(5, 2).round(half: :down)
  assert_equal "(233/100)", (Rational(7, 3).round(2)).inspect
  assert_equal "(233/100)", (Rational(7, 3).floor(2)).inspect
  assert_equal "(117/50)", (Rational(7, 3).ceil(2)).inspect
  assert_equal "(-233/100)", (Rational(-7, 3).truncate(2)).inspect
  assert_equal 1200, Rational(1234, 1).round(-2)
  assert_equal 1200, Rational(1250, 1).round(-2, half: :even)
  assert_equal 2, Rational(7, 3).floor
  assert_equal -3, Rational(-7, 3).floor
  assert_equal 3, Rational(7, 3).ceil
  assert_equal -2, Rational(-7, 3).ceil
  assert_equal -2, Rational(-7, 3).truncate
  assert_equal 2, Rational(7, 3).to_i
  assert_equal -2, Rational(-7, 3).to_i
  assert_equal Rational, Rational(1, 3).round(1).class
end

test "conversions" do
  assert_equal "1/3", Rational(1, 3).to_s
  assert_equal Encoding::US_ASCII, (Rational(1, 3).to_s).encoding
  assert_equal "-1/3", Rational(-1, 3).to_s
  assert_equal Encoding::US_ASCII, (Rational(-1, 3).to_s).encoding
  assert_equal "(1/3)", Rational(1, 3).inspect
  assert_equal Encoding::US_ASCII, (Rational(1, 3).inspect).encoding
  assert_equal "3/1", Rational(3, 1).to_s
  assert_equal Encoding::US_ASCII, (Rational(3, 1).to_s).encoding
  assert_equal 0.3333333333333333, Rational(1, 3).to_f
  assert_equal "Infinity", (Rational(10**400, 3).to_f).inspect
  assert_equal 0.0, Rational(1, 10**400).to_f
  assert_equal "(1/3)", (Rational(1, 3).to_r).inspect
  assert_equal "((1/3)+0i)", (Rational(1, 3).to_c).inspect
  assert_equal 1, Rational(1, 3).numerator
  assert_equal 3, Rational(-1, 3).denominator
  assert_equal "(1/3)", (Rational(1, 3).rationalize).inspect
  assert_equal "(1/3)", (Rational(1, 3).rationalize(Rational(1, 100))).inspect
  assert_equal "(1/3)", (Rational(333, 1000).rationalize(Rational(1, 100))).inspect
  assert_equal "(-1/3)", (Rational(-333, 1000).rationalize(0.01)).inspect
  assert_equal false, Rational(1, 2).zero?
  assert_equal true, Rational(0).zero?
  assert_equal true, Rational(1, 2).positive?
  assert_equal true, Rational(-1, 2).negative?
  assert_equal false, Rational(1, 2).integer?
  assert_equal true, Rational(1, 2).finite?
  assert_equal nil, Rational(1, 2).infinite?
  assert_equal true, Rational(1, 2).real?
  assert_equal "[(1/1), (1/2)]", (Rational(1, 2).coerce(1)).inspect
  assert_equal [1.5, 0.5], Rational(1, 2).coerce(1.5)
  assert_equal "[(1/3), (1/2)]", (Rational(1, 2).coerce(Rational(1, 3))).inspect
  assert_equal true, Rational(1, 2).frozen?
  assert_equal "(3/1)", (3.to_r).inspect
  assert_equal "(1/2)", (0.5.to_r).inspect
  assert_equal "(2/3)", ("2/3".to_r).inspect
  assert_equal "(7/2)", (Rational(7, 2).magnitude).inspect
end

