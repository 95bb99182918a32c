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
  src = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_nomem_#{Process.pid}.rb"
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

test "sizes from Ruby code reach allocations only through fallible reservations" do
  src = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_nomem2_#{Process.pid}.rb"
  File.write(src, <<~RUBY)
    def probe
      r = yield
      r.is_a?(String) || r.is_a?(Array) ? r.size : r
    rescue NoMemoryError => e
      e.message
    end
    p probe { Random.urandom(2**62 - 1) }
    p probe { Random.bytes(2**40) }
    p probe { Random.new(1).bytes(2**62) }
    p probe { [1].pack("x4611686018427387903") }
    p probe { ["a"].pack("a4611686018427387903") }
    p probe { [1].pack("@4611686018427387903") }
    p probe { [1, 2, 3].repeated_permutation(2**40) { } }
    p probe { [0] * 2**31 }
    p probe { [1, 2].fill(0, 0, 2**33) }
    p probe { [].insert(2**33, 1) }
    p probe { [1].values_at(0..2**33) }
  RUBY
  out = `ulimit -v 2000000; #{Support.carmine_path} #{src} 2>&1`
  File.delete(src)
  assert_equal 0, $?.exitstatus, out
  assert_equal "\"failed to allocate memory\"\n" * 11, out
end

test "digit counts and bit counts are C ints" do
  assert_raise(RangeError, "integer 1099511627776 too big to convert to 'int'") { 1.0.round(2**40) }
  assert_raise(RangeError, "integer -1099511627776 too small to convert to 'int'") { 12.5.round(-(2**40)) }
  assert_raise(RangeError, "integer 2147483648 too big to convert to 'int'") { 12.5.floor(2**31) }
  assert_raise(RangeError, "integer 1099511627776 too big to convert to 'int'") { "x".sum(2**40) }
  assert_equal 1.25, 1.25.round(2**31 - 1)
end

test "strftime widths: past a C int the directive is copied, past the size limit ERANGE" do
  t = Time.utc(2000, 1, 2, 3, 4, 5)
  assert_equal "%99999999999999999999Y", t.strftime("%99999999999999999999Y")
  assert_equal "%2147483648Y", t.strftime("%2147483648Y")
  assert_raise(Errno::ERANGE, "Numerical result out of range - %100000000N") { t.strftime("%100000000N") }
  assert_equal 70_000, t.strftime("%70000N").size
  assert_equal 70_000, t.strftime("%70000z").size
  assert_equal "+000000000|      +000", t.strftime("%10z|%_10z")
  assert_equal "000", t.strftime("%3N")
end

test "String#upto over digit strings wider than format! allows" do
  a = ("0" * 70_000).upto("0" * 69_999 + "2").to_a
  assert_equal 3, a.size
  assert_equal "0" * 69_999 + "2", a.last
end
