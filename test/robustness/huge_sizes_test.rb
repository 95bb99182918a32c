require_relative "../assert"
require_relative "../support/process"

# Sizes chosen by Ruby code (format widths, repeat counts, indexes, rounding digits) end as
# Ruby exceptions with CRuby's classes and messages, never as an aborted allocation or a
# panic. Found by the panic-freedom check (crates/carmine-fuzz).

test "format widths and precisions beyond a C int are ArgumentErrors" do
  assert_raise(ArgumentError, "width too big") { "%99999999999d" % 1 }
  assert_raise(ArgumentError, "width too big") { "%99999999999999999999$d" % 1 }
  assert_raise(ArgumentError, "precision too big") { "%.99999999999d" % 1 }
  assert_raise(ArgumentError, "precision too big") { "%.99999999999f" % 1.0 }
end

test "format * arguments beyond a C int are RangeErrors" do
  assert_raise(RangeError, "integer 4611686018427387904 too big to convert to 'int'") { "%-*d" % [2**62, 1] }
  assert_raise(RangeError, "integer 1099511627776 too big to convert to 'int'") { format("%*s", 2**40, "x") }
  assert_raise(RangeError, "integer 1099511627776 too big to convert to 'int'") { "%.*f" % [2**40, 1.0] }
end

test "float precisions past Rust's formatter limit are zero-filled" do
  s = "%.100000f" % 1.0
  assert_equal 100_002, s.size
  assert_equal "1.000", s[0, 5]
  assert_equal "1.5000", ("%.70000e" % 1.5)[0, 6]
  assert_equal "e+00", ("%.70000e" % 1.5)[-4..]
  assert_equal "1.5", "%.100000g" % 1.5
  assert_equal "0.1000000000000000055511151231257827", ("%.3000f" % 0.1)[0, 36]
end

test "large but valid widths still work" do
  assert_equal 100_000, ("%100000d" % 1).size
  assert_equal "    1", "%5d" % 1
  assert_equal "1    |", "%-5d|" % 1
end

test "String#* and justification with huge counts" do
  assert_raise(ArgumentError, "argument too big") { "a" * (2**62) }
  assert_raise(ArgumentError, "argument too big") { "ab" * (2**61) }
  assert_equal "", "" * (2**62)
  assert_raise(ArgumentError, "argument too big") { "a".ljust(2**62) }
  assert_equal "  a  ", "a".center(5)
end

test "Array index assignment far past the end" do
  a = [1]
  assert_raise(IndexError, "index 4611686018427387904 too big") { a[2**62] = 1 }
  assert_raise(IndexError) { a[2**62, 1] = [1] }
  a[3, 0] = [9]
  assert_equal [1, nil, nil, 9], a
  assert_raise(ArgumentError, "array size too big") { Array.new(2**40) }
end

test "Integer rounding to huge negative digit counts" do
  assert_equal 0, 1.round(-(2**31))
  assert_equal 0, 12345.floor(-(2**20))
  assert_equal 0, (2**70).round(-500)
  assert_equal 12000, 12345.round(-3)
  assert_equal(-20, -15.round(-1))
  assert_raise(RangeError, "integer -4611686018427387904 too small to convert to 'int'") { 1.round(-(2**62)) }
end

test "an allocation that fails is a NoMemoryError, not an abort" do
  src = "/tmp/carmine_nomem_#{Process.pid}.rb"
  File.write(src, <<~RUBY)
    def probe
      yield
      :no_error
    rescue NoMemoryError => e
      e.message
    end
    p probe { "a".center(2**39) }
    p probe { "%2147483647d" % 1 }
    p probe { "abc" * (2**31 - 1) }
    p probe { a = [1]; a[2**35] = 1 }
    p probe { Array.new(2**32, 0) }
  RUBY
  out = `ulimit -v 2000000; #{Support.carmine_path} #{src} 2>&1`
  File.delete(src)
  assert_equal 0, $?.exitstatus, out
  assert_equal "\"failed to allocate memory\"\n" * 5, out
end
