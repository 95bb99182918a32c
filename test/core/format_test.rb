require_relative "../assert"

test "integers" do
  assert_equal "42", format("%d", 42)
  assert_equal "-42", format("%d", -42)
  assert_equal "   42|42   |00042", format("%5d|%-5d|%05d", 42, 42, 42)
  assert_equal "+5  5 -5 -5", format("%+d % d %+d % d", 5, 5, -5, -5)
  assert_equal "+0042", format("%+05d", 42)
  assert_equal " 0042", format("% 05d", 42)
  assert_equal "+42  |", format("%-+5d|", 42)
  assert_equal "007", format("%.3d", 7)
  assert_equal "-007", format("%.3d", -7)
  assert_equal "  007", format("%5.3d", 7)
  assert_equal "  007", format("%05.3d", 7)
  assert_equal "007  |", format("%-5.3d|", 7)
  assert_equal "", format("%.0d", 0)
  assert_equal "     |", format("%5.0d|", 0)
  assert_equal "3 4", format("%i %u", 3, 4)
  assert_equal "12345678901234567890", format("%d", 12345678901234567890)
  assert_equal "-12345678901234567890", format("%d", -12345678901234567890)
  assert_equal "3", format("%d", 3.99)
  assert_equal "-3", format("%d", -3.99)
  assert_equal "31", format("%d", "0x1f")
  assert_equal "12", format("%d", "12")
  assert_raise(ArgumentError, "invalid value for Integer(): \"abc\"") { format("%d", "abc") }
  assert_raise(TypeError, "can't convert nil into Integer") { format("%d", nil) }
  assert_equal "250000000000000000000", format("%d", 2.5e20)
  assert_raise(FloatDomainError, "Infinity") { format("%d", Float::INFINITY) }
  assert_equal "0", format("%d", 1r/2)
  assert_equal "3", format("%d", Rational(7, 2))
  assert_equal "1/1", format("%s", 1r)
end

test "radix" do
  assert_equal "ff FF 10 101 101", format("%x %X %o %b %B", 255, 255, 8, 5, 5)
  assert_equal "0xff 0XFF 010 0b101 0B101", format("%#x %#X %#o %#b %#B", 255, 255, 8, 5, 5)
  assert_equal "0 0 0", format("%#x %#o %#b", 0, 0, 0)
  assert_equal "..f01", format("%x", -255)
  assert_equal "..F01", format("%X", -255)
  assert_equal "..70", format("%o", -8)
  assert_equal "..1011", format("%b", -5)
  assert_equal "..1", format("%b", -1)
  assert_equal "..f", format("%x", -1)
  assert_equal "..f00", format("%x", -256)
  assert_equal "-ff", format("%+x", -255)
  assert_equal "-ff", format("% x", -255)
  assert_equal "0x..f01", format("%#x", -255)
  assert_equal "..ffffff", format("%08x", -1)
  assert_equal "     ..f|", format("%8x|", -1)
  assert_equal "..f01   |", format("%-8x|", -255)
  assert_equal "..fff", format("%.5x", -1)
  assert_equal "000ff", format("%.5x", 255)
  assert_equal "00000101", format("%08b", 5)
  assert_equal "0x000000ff", format("%#010x", 255)
  assert_equal "400000000000000000", format("%x", 2**70)
  assert_equal "..fc00000000000000000", format("%x", -(2**70))
  assert_equal "..7600000000000000000000000", format("%o", -(2**70))
  assert_equal "0", format("%b", 0)
  assert_equal "3", format("%x", 3.7)
  assert_equal "010", format("%#.3o", 8)
  assert_equal "0x001|", format("%#5.3x|", 1)
end

test "floats" do
  assert_equal "3.141590", format("%f", 3.14159)
  assert_equal "3.14", format("%.2f", 3.14159)
  assert_equal "2", format("%.0f", 2.5)
  assert_equal "4", format("%.0f", 3.5)
  assert_equal "0", format("%.0f", 0.5)
  assert_equal "0.2", format("%.1f", 0.25)
  assert_equal "0.4", format("%.1f", 0.35)
  assert_equal "2.68", format("%.2f", 2.675)
  assert_equal "     3.142|", format("%10.3f|", 3.14159)
  assert_equal "3.142     |", format("%-10.3f|", 3.14159)
  assert_equal "-00003.142", format("%010.3f", -3.14159)
  assert_equal "+3.142", format("%+.3f", 3.14159)
  assert_equal " 3.142", format("% .3f", 3.14159)
  assert_equal "3.", format("%#.0f", 3.0)
  assert_equal "100000000000000000000.000000", format("%f", 1e20)
  assert_equal "0.000000", format("%f", 1.0e-10)
  assert_equal "0.10000000000000000555", format("%.20f", 0.1)
  assert_equal "0.000000000000000000010000000000", format("%.30f", 1e-20)
  assert_equal "123456789012345680.000000", format("%f", 123456789012345678.0)
  assert_equal "1.234568e+04", format("%e", 12345.678)
  assert_equal "1.234568E+04", format("%E", 12345.678)
  assert_equal "1.23e-04", format("%.2e", 0.000123456)
  assert_equal "0.000000e+00", format("%e", 0.0)
  assert_equal "1.000000e-300", format("%e", 1e-300)
  assert_equal "1.000000e+300", format("%e", 1e300)
  assert_equal "2e+04", format("%.0e", 15000)
  assert_equal "2.e+04", format("%#.0e", 15000)
  assert_equal "12345.7", format("%g", 12345.678)
  assert_equal "1.23457e+08", format("%g", 123456789.0)
  assert_equal "0.0001234", format("%g", 0.0001234)
  assert_equal "1.234e-05", format("%g", 0.00001234)
  assert_equal "100000", format("%g", 100000.0)
  assert_equal "1e+06", format("%g", 1000000.0)
  assert_equal "0", format("%g", 0.0)
  assert_equal "1E-10", format("%G", 1e-10)
  assert_equal "3.14", format("%.3g", 3.14159)
  assert_equal "0.3333333333", format("%.10g", 1.0/3)
  assert_equal "1.00000", format("%#g", 1.0)
  assert_equal "1.00", format("%#.3g", 1.0)
  assert_equal "1e+100", format("%g", 1e100)
  assert_equal "     3.142|", format("%10.4g|", 3.14159)
  assert_equal "3.142     |", format("%-10.4g|", 3.14159)
  assert_equal "0x1p+0", format("%a", 1.0)
  assert_equal "0x1p-1", format("%a", 0.5)
  assert_equal "0x1.91eb851eb851fp+1", format("%a", 3.14)
  assert_equal "0X1.91EB851EB851FP+1", format("%A", 3.14)
  assert_equal "-0x0p+0", format("%a", -0.0)
  assert_equal "0x0p+0", format("%a", 0.0)
  assert_equal "0x1.fap-1064", format("%a", 1e-320)
  assert_equal "0x1.91fp+1", format("%.3a", 3.14)
  assert_equal "0x1p+1", format("%.0a", 1.5)
  assert_equal "Inf", format("%f", Float::INFINITY)
  assert_equal "-Inf", format("%f", -Float::INFINITY)
  assert_equal "NaN", format("%f", Float::NAN)
  assert_equal "  NaN|", format("%5.1f|", Float::NAN)
  assert_equal "Inf     |", format("%-8f|", Float::INFINITY)
  assert_equal "+Inf", format("%+f", Float::INFINITY)
  assert_equal "     Inf", format("%08f", Float::INFINITY)
  assert_equal "Inf", format("%e", Float::INFINITY)
  assert_equal "NaN", format("%g", Float::NAN)
  assert_equal "3.000000", format("%f", 3)
  assert_equal "12345678901234567890.000000", format("%f", 12345678901234567890)
  assert_equal "0.333", format("%.3f", 1r/3)
  assert_equal "0.3", format("%.1f", Rational(1, 4))
  assert_equal "1.500000", format("%f", "1.5")
  assert_raise(ArgumentError, "invalid value for Float(): \"abc\"") { format("%f", "abc") }
  assert_raise(TypeError, "can't convert nil into Float") { format("%f", nil) }
  assert_equal "-0.000000", format("%f", -0.0)
  assert_equal "-0.0", format("%.1f", -0.04)
  assert_equal "0.100000000000000", format("%.15f", 0.1)
  assert_equal "0.10000000000000001", format("%.17g", 0.1)
  assert_equal "1000000000000000.000", format("%.3f", 1e15)
  assert_equal "99.50%", format("%5.2f%%", 99.5)
end

test "strings and chars" do
  assert_equal "abc", format("%s", "abc")
  assert_equal "   ab|ab   |", format("%5s|%-5s|", "ab", "ab")
  assert_equal "ab", format("%.2s", "abcdef")
  assert_equal "   ab|", format("%5.2s|", "abcdef")
  assert_equal "sym", format("%s", :sym)
  assert_equal "", format("%s", nil)
  assert_equal "[1, \"a\"]", format("%s", [1, "a"])
  assert_equal "\"abc\"", format("%p", "abc")
  assert_equal "nil", format("%p", nil)
  assert_equal ":sym", format("%p", :sym)
  assert_equal "       \"a\"|", format("%10p|", "a")
  assert_equal "nil       |", format("%-10p|", nil)
  assert_equal "\"ab", format("%.3p", "abcdef")
  assert_equal "A", format("%c", 65)
  assert_equal "h", format("%c", "hello")
  assert_equal "あ", format("%c", 0x3042)
  assert_equal "    A|", format("%5c|", 65)
  assert_equal "x    |", format("%-5c|", "x")
  assert_equal "", format("%c", "")
  assert_equal "\xFF", format("%c", -1)
  assert_equal "日本語", format("%s", "日本語")
  assert_equal "   日本|", format("%5s|", "日本")
  assert_equal "日", format("%.1s", "日本")
  assert_equal "%", format("%%")
  assert_equal "100%", format("100%%")
  assert_raise(ArgumentError, "invalid format character - %") { format("%-%") }
  assert_equal "a b", format("%s %s", "a", "b")
end

test "named and positional" do
  assert_equal "1 x", format("%<a>d %<b>s", a: 1, b: "x")
  assert_equal "1-x", format("%{a}-%{b}", a: 1, b: "x")
  assert_equal "003.1", format("%<a>05.1f", a: 3.14159)
  assert_equal "", format("%{a}", {a: nil})
  assert_raise(KeyError, "key<a> not found") { format("%<a>s", {"a" => 1}) }
  assert_raise(KeyError, "key{x} not found") { format("%{x}", {}) }
  assert_raise(KeyError, "key<x> not found") { format("%<x>d", {}) }
  assert_raise(ArgumentError, "one hash required") { format("%{a}", 1) }
  assert_raise(ArgumentError, "one hash required") { format("%<a>d %d", {a: 1}, 2) }
  assert_equal "a b a", format("%1$s %2$s %1$s", "a", "b")
  assert_equal "2 1", format("%2$d %1$d", 1, 2)
  assert_equal "       5|", format("%1$*2$d|", 5, 8)
  assert_equal "   42|", format("%*d|", 5, 42)
  assert_equal "42   |", format("%-*d|", 5, 42)
  assert_equal "42   |", format("%*d|", -5, 42)
  assert_equal "3.14", format("%.*f", 2, 3.14159)
  assert_equal "    3.14|", format("%*.*f|", 8, 2, 3.14159)
  assert_raise(ArgumentError, "unnumbered(1) mixed with numbered") { format("%1$s %s", "a") }
  assert_raise(ArgumentError, "numbered(1) after unnumbered(1)") { format("%s %1$s", "a") }
  assert_equal "11", format("%{a}%<a>s", a: 1)
  assert_equal "    x|", format("%5{a}|", a: "x")
  assert_equal "x    |", format("%-5{a}|", a: "x")
  assert_equal "da", format("%{a}", Hash.new { |h, k| "d#{k}" })
  assert_equal "def", format("%<a>s", Hash.new("def"))
end

test "errors" do
  assert_raise(ArgumentError, "too few arguments") { format("%d") }
  assert_raise(ArgumentError, "too few arguments") { format("%d %d", 1) }
  assert_raise(ArgumentError, "malformed format string - %z") { format("%z", 1) }
  assert_raise(ArgumentError, "incomplete format specifier; use %% (double %) instead") { format("%", 1) }
  assert_raise(ArgumentError, "incomplete format specifier; use %% (double %) instead") { format("abc%") }
  assert_raise(ArgumentError, "malformed format string - %*[0-9]") { format("%5", 1) }
  assert_raise(ArgumentError, "malformed format string - %*[0-9]") { format("%.", 1) }
  assert_equal "a a", format("%1$s %1$s", "a")
  assert_raise(ArgumentError, "malformed format string - %$") { format("%0$s", "a") }
  assert_raise(ArgumentError, "too few arguments") { format("%3$s", "a", "b") }
  assert_raise(ArgumentError, "malformed name - unmatched parenthesis") { format("%<a", a: 1) }
  assert_raise(ArgumentError, "malformed name - unmatched parenthesis") { format("%{a", a: 1) }
  assert_raise(ArgumentError, "invalid value for Integer(): \"1.5\"") { format("%d", "1.5") }
  assert_raise(TypeError, "can't convert Array into Integer") { format("%d", []) }
  assert_raise(TypeError, "can't convert Array into Float") { format("%f", []) }
  assert_raise(TypeError, "no implicit conversion of nil into Integer") { format("%c", nil) }
  assert_equal "a b", format("%s %s", "a", "b", "c")
  assert_raise(ArgumentError, "width given twice") { format("%**d", 1, 2, 3) }
  assert_raise(ArgumentError, "value given twice - 1$") { format("%1$1$d", 1) }
  assert_raise(ArgumentError, "invalid format character - %") { format("% %d", 1) }
  assert_equal "a", format("%#s", "a")
  assert_equal "a", format("%+s", "a")
  assert_equal "    a", format("%05s", "a")
  assert_equal "3    |", format("%-05d|", 3)
  assert_raise(ArgumentError, "malformed format string - %l") { format("%ld", 3) }
  assert_raise(ArgumentError, "malformed format string - %h") { format("%hd", 3) }
  assert_raise(ArgumentError, "malformed format string - %q") { format("%qd", 3) }
end

test "kernel and string forms" do
  assert_equal "03.14", sprintf("%05.2f", 3.14159)
  assert_equal "a and b", "%s and %s" % ["a", "b"]
  assert_equal "[1, 2]", "%s" % [[1, 2]]
  assert_equal "50%", "%d%%" % 50
  assert_equal "ab  |", "%-4s|" % :ab
  assert_equal "Hi", "%c%c" % [72, "i"]
  assert_equal "1", "%{x}" % {x: 1}
  assert_equal "", "%s" % nil
  assert_equal "abc", "%.3s" % "abcdef"
  assert_equal "ff", "%x" % "255"
  assert_equal "1.000000e+00", "%e" % 1
  assert_equal "3.142e+00", "%08.3e" % 3.14159
  assert_equal "-1.23e+03", "%+.2e" % -1234.5
  assert_equal "\"abc\"", (format("%s", "abc".encode("UTF-16LE")) rescue $!.class).inspect
  assert_equal "#<Encoding:UTF-8>", (format("%s".b, "é").encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (format("%s", "é").encoding).inspect
  assert_equal "#<Encoding:UTF-8>", (format("é%s", "a".b).encoding).inspect
end


test "Ruby 3.4 format details: %c with strings, malformed directives, unused arguments" do
  assert_equal "a", format("%c", "abc")
  assert_equal "  é", format("%3c", "éx")
  assert_equal "", format("%c", "")
  assert_raise(TypeError, "no implicit conversion of nil into Integer") { format("%c", nil) }
  assert_raise(RangeError, "1286 out of char range") { format("%c".encode("US-ASCII"), 1286) }
  assert_raise(ArgumentError, /incomplete format specifier/) { format("%") }
  assert_raise(ArgumentError, /malformed format string/) { format("%\n") }
  assert_raise(ArgumentError, /malformed format string/) { format("hello %1$", "foo") }
  old, $DEBUG = $DEBUG, true
  begin
    assert_raise(ArgumentError, "too many arguments for format string") { format("", 1) }
    assert_equal "test", format("test", {})
  ensure
    $DEBUG = old
  end
end
