require_relative "../assert"

def tmp_path(name)
  "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_io_enc_#{Process.pid}_#{name}"
end

def with_default_internal(enc)
  saved = Encoding.default_internal
  Encoding.default_internal = enc
  yield
ensure
  Encoding.default_internal = saved
end

test "an IO captures Encoding.default_internal when it is opened" do
  path = tmp_path("defint")
  File.write(path, "abc")
  with_default_internal(Encoding::UTF_16LE) do
    File.open(path, "w") { |f| assert_equal Encoding::UTF_8, f.external_encoding }
    File.open(path, "r") do |f|
      assert_equal Encoding::UTF_8, f.external_encoding
      assert_equal Encoding::UTF_16LE, f.internal_encoding
      Encoding.default_internal = nil
      assert_equal Encoding::UTF_16LE, f.internal_encoding
    end
  end
  File.open(path, "w") { |f| assert_equal nil, f.external_encoding }
  File.open(path, "rb") { |f| assert_equal nil, f.internal_encoding }
  File.delete(path)
end

test "set_encoding takes Encodings, names, 'ext:int', '-' and nil" do
  path = tmp_path("setenc")
  File.write(path, "abc")
  File.open(path) do |f|
    f.set_encoding("utf-8:utf-16be")
    assert_equal Encoding::UTF_8, f.external_encoding
    assert_equal Encoding::UTF_16BE, f.internal_encoding
    f.set_encoding(Encoding::UTF_8, "-")
    assert_equal nil, f.internal_encoding
    f.set_encoding(Encoding::BINARY, Encoding::IBM437)
    assert_equal nil, f.internal_encoding
    assert_raise(TypeError) { f.set_encoding(nil, Encoding::UTF_8) }
    assert_raise(ArgumentError, "ASCII incompatible encoding needs binmode") { f.set_encoding(Encoding::UTF_16BE) }
    assert_raise(ArgumentError, "unexpected value for newline option: bad") { f.set_encoding("utf-8", newline: :bad) }
    f.binmode
    assert_raise(ArgumentError, "newline decorator with binary mode") { f.set_encoding("utf-8", newline: :lf) }
    f.set_encoding(Encoding::UTF_16BE)
    assert_equal Encoding::UTF_16BE, f.external_encoding
  end
  File.delete(path)
end

test "a BOM| mode and set_encoding_by_bom take the encoding from the byte-order mark" do
  path = tmp_path("bom")
  File.binwrite(path, "\xEF\xBB\xBFhi")
  assert_raise(ArgumentError, "ASCII incompatible encoding needs binmode") { File.open(path, "r:BOM|utf-16le") }
  File.open(path, "rb:BOM|utf-16le") do |f|
    assert_equal Encoding::UTF_8, f.external_encoding
    assert_equal "hi", f.read
  end
  File.open(path, "rb") do |f|
    assert_equal Encoding::UTF_8, f.set_encoding_by_bom
    assert_equal "hi", f.read
  end
  File.binwrite(path, "\xFF\xFEa\x00")
  File.open(path, "rb") { |f| assert_equal Encoding::UTF_16LE, f.set_encoding_by_bom }
  File.binwrite(path, "\xEF\xBB")
  File.open(path, "rb") { |f| assert_equal nil, f.set_encoding_by_bom }
  File.open(path, "r") do |f|
    assert_raise(ArgumentError, "ASCII incompatible encoding needs binmode") { f.set_encoding_by_bom }
  end
  File.delete(path)
end

test "binmode is a flag of its own and closed IOs raise" do
  path = tmp_path("binmode")
  File.write(path, "x")
  f = File.open(path)
  assert_equal false, f.binmode?
  f.binmode
  assert_equal true, f.binmode?
  assert_equal Encoding::BINARY, f.external_encoding
  f.close
  assert_raise(IOError, "closed stream") { f.binmode }
  assert_raise(IOError, "closed stream") { f.binmode? }
  File.delete(path)
end

test "write converts to the external encoding; newline: :crlf converts newlines" do
  path = tmp_path("write")
  File.open(path, "w:utf-16be") { |f| assert_equal 4, f.write("hi") }
  assert_equal "\x00h\x00i".b, File.binread(path)
  File.open(path, "w:utf-16be") { |f| assert_raise(Encoding::UndefinedConversionError) { f.write("\xff".b) } }
  File.open(path, "w", newline: :crlf) { |f| f.puts "a" }
  assert_equal "a\r\n", File.binread(path)
  File.delete(path)
end

test "IO.pipe and IO.popen set encodings from their arguments" do
  IO.pipe("utf-8:iso-8859-1") do |r, w|
    assert_equal Encoding::UTF_8, r.external_encoding
    assert_equal Encoding::ISO_8859_1, r.internal_encoding
  end
  IO.pipe(Encoding::UTF_8, Encoding::UTF_16BE) { |r, w| assert_equal Encoding::UTF_16BE, r.internal_encoding }
  IO.popen("echo hi", "r:iso-8859-1") do |io|
    assert_equal Encoding::ISO_8859_1, io.external_encoding
    assert_equal Encoding::ISO_8859_1, io.read.encoding
  end
end

test "line reading: separators, limits, paragraphs and $." do
  path = tmp_path("lines")
  File.write(path, "a\n\n\n\nb\nc\n\n")
  File.open(path) do |f|
    assert_equal ["a\n\n", "b\nc\n\n"], f.readlines("")
    assert_equal 2, $.
  end
  File.open(path) { |f| assert_equal ["a", "b\nc"], f.readlines("", chomp: true) }
  File.open(path) { |f| assert_equal "", f.gets(0) }
  File.open(path) { |f| assert_raise(ArgumentError, "invalid limit: 0 for readlines") { f.readlines(0) } }
  File.open(path) { |f| assert_raise(ArgumentError, "invalid limit: 0 for each_line") { f.each_line(0) {} } }
  File.open(path) { |f| assert_raise(RangeError) { f.gets(2**128) } }
  limit = Object.new
  def limit.to_int = 1
  File.open(path) { |f| assert_equal "a", f.gets(limit) }
  File.write(path, "朝日")
  File.open(path) { |f| assert_equal "朝", f.gets(1) }
  File.delete(path)
end

test "IO.write with open_args and IO.read of a |command" do
  path = tmp_path("openargs")
  assert_equal 8, IO.write(path, "hi", open_args: ["w", nil, {encoding: Encoding::UTF_32LE}])
  assert_raise(ArgumentError, "encoding specified twice") { IO.write(path, "hi", mode: "w:UTF-16LE", encoding: Encoding::UTF_32LE) }
  assert_equal "hello\n", IO.read("|echo hello")
  File.delete(path)
end
