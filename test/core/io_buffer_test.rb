require_relative "../assert"
require "tempfile"

test "IO::Buffer: typed values, strings, slices and masks" do
  b = IO::Buffer.new(16)
  assert_true b.internal?
  assert_equal 16, b.size
  b.set_value(:U32, 0, 0x01020304)
  assert_equal "\x01\x02\x03\x04".b, b.get_string(0, 4)
  b.set_value(:u16, 4, 0xABCD)
  assert_equal 0xABCD, b.get_value(:u16, 4)
  b.set_value(:f64, 8, 1.5)
  assert_equal 1.5, b.get_value(:f64, 8)
  b.set_value(:S8, 6, -2)
  assert_equal(-2, b.get_value(:S8, 6))
  s = b.slice(0, 4)
  s.set_string("ab")
  assert_equal "ab".b, b.get_string(0, 2)
  b.resize(2)
  assert_false s.valid?
  assert_raise(IO::Buffer::InvalidatedError, "Buffer has been invalidated!") { s.get_string }
  m = IO::Buffer.for("\xF0".b)
  assert_true m.readonly?
  assert_raise(IO::Buffer::AccessError, "Buffer is not writable!") { m.set_string("x") }
  assert_equal "\x00\x00".b, (IO::Buffer.for("\x0F\x0F".b) & m).get_string
  assert_raise(TypeError, "wrong argument type nil (expected IO::Buffer)") { b & nil }
  assert_raise(ArgumentError, "Size can't be negative!") { IO::Buffer.new(-1) }
  assert_equal "xyz", IO::Buffer.string(3) { |x| x.set_string("xyz") }
  str = +"abc"
  IO::Buffer.for(str) { |x| x.set_string("X", 1) }
  assert_equal "aXc", str
end

test "IO::Buffer reads and writes IOs and maps files" do
  r, w = IO.pipe
  b = IO::Buffer.for("ping")
  assert_equal 4, b.write(w)
  into = IO::Buffer.new(8)
  assert_equal 4, into.read(r, 4)
  assert_equal "ping".b, into.get_string(0, 4)
  r.nonblock = true
  assert_equal(-Errno::EAGAIN::Errno, into.read(r, 1))
  r.close
  w.close
  Tempfile.create("buf") do |f|
    f.write("mapped!")
    f.flush
    map = IO::Buffer.map(f)
    assert_equal "mapped!".b, map.get_string
    map.set_string("M")
    map.free
    f.rewind
    assert_equal "Mapped!", f.read
  end
end
