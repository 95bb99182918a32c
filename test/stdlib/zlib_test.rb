require_relative "../assert"
require "zlib"
require "stringio"
require "tmpdir"

test "deflate and inflate round trip" do
  data = "hello world " * 1000
  [Zlib::NO_COMPRESSION, Zlib::BEST_SPEED, Zlib::DEFAULT_COMPRESSION, Zlib::BEST_COMPRESSION].each do |level|
    c = Zlib::Deflate.deflate(data, level)
    assert_equal Encoding::BINARY, c.encoding
    assert_equal data, Zlib::Inflate.inflate(c)
  end
  assert_equal data, Zlib.inflate(Zlib.deflate(data))
  assert_equal [120, 156, 75, 76, 74, 6, 0, 2, 77, 1, 39], Zlib::Deflate.deflate("abc").bytes
end

test "streams: <<, flush, finish, window bits, strategies" do
  d = Zlib::Deflate.new(Zlib::BEST_COMPRESSION, -Zlib::MAX_WBITS, 9, Zlib::FILTERED)
  d << "abc"
  out = d.flush
  out << d.deflate("def", Zlib::FINISH)
  assert_true d.finished?
  d.close
  assert_true d.closed?
  assert_equal "abcdef", Zlib::Inflate.new(-Zlib::MAX_WBITS).inflate(out)
  gz = Zlib::Deflate.new(6, 31).deflate("gzip body", Zlib::FINISH)
  assert_equal [0x1f, 0x8b], gz.bytes[0, 2]
  assert_equal "gzip body", Zlib::Inflate.new(47).inflate(gz)
  [Zlib::HUFFMAN_ONLY, Zlib::RLE, Zlib::FIXED].each do |st|
    c = Zlib::Deflate.new(6, 15, 8, st).deflate("aaaaabbbbbccccc" * 10, Zlib::FINISH)
    assert_equal "aaaaabbbbbccccc" * 10, Zlib.inflate(c)
  end
  i = Zlib::Inflate.new
  res = +""
  Zlib.deflate("x" * 5000).each_char { |ch| res << i.inflate(ch) }
  assert_equal "x" * 5000, res
  assert_true i.finished?
end

test "errors" do
  assert_raise(Zlib::DataError, "incorrect header check") { Zlib.inflate("abc") }
  assert_raise(Zlib::DataError, "invalid stored block lengths") { Zlib::Inflate.inflate("\x78\x9c\x00\x05\x00\x00\x00hello") }
  assert_raise(Zlib::BufError, "buffer error") { Zlib.inflate(Zlib.deflate("hello")[0..-3]) }
  assert_raise(Zlib::StreamError, "stream error") { Zlib::Deflate.new(10) }
  d = Zlib::Deflate.new
  d.close
  assert_raise(Zlib::Error, "stream is not ready") { d.deflate("x") }
  assert_raise(Zlib::GzipFile::Error, "not in gzip format") { Zlib::GzipReader.new(StringIO.new("not gzip data")) }
  assert_raise(RangeError) { Zlib.crc32("x", 2**128) }
end

test "checksums" do
  assert_equal 891568578, Zlib.crc32("abc")
  assert_equal 891568578, Zlib.crc32("c", Zlib.crc32("ab"))
  assert_equal 0, Zlib.crc32
  assert_equal 38600999, Zlib.adler32("abc")
  assert_equal 1, Zlib.adler32
  assert_equal 256, Zlib.crc_table.size
  assert_equal Zlib.crc32("abcdef"), Zlib.crc32_combine(Zlib.crc32("abc"), Zlib.crc32("def"), 3)
end

test "gzip writer and reader" do
  io = StringIO.new("".b)
  Zlib::GzipWriter.wrap(io) do |g|
    g.mtime = 1
    g.orig_name = "name.txt"
    g.comment = "a comment"
    g.puts "line 1", "line 2"
    g.print "x"
    g << "y\n"
    assert_equal 17, g.pos
  end
  r = Zlib::GzipReader.new(StringIO.new(io.string))
  assert_equal [1, "name.txt", "a comment", Zlib::OS_UNIX], [r.mtime.to_i, r.orig_name, r.comment, r.os_code]
  assert_equal "line 1\n", r.gets
  assert_equal "l", r.getc
  r.ungetc("L")
  assert_equal ["Line 2\n", "xy\n"], r.readlines
  assert_true r.eof?
  assert_nil r.read(1)
  r.close
  assert_equal "ab", Zlib.gunzip(Zlib.gzip("ab"))
  two = Zlib.gzip("one\n") + Zlib.gzip("two\n")
  assert_equal "one\ntwo\n", Zlib::GzipReader.zcat(StringIO.new(two))
  bad = Zlib.gzip("abcdef")
  bad[-4] = "\x00"
  r = Zlib::GzipReader.new(StringIO.new(bad))
  r.read
  assert_raise(Zlib::GzipFile::LengthError) { r.close }
end

test "gzip files interoperate with the gzip command" do
  if system("gzip --version > /dev/null 2>&1")
    Dir.mktmpdir do |dir|
      path = File.join(dir, "a.txt.gz")
      text = (1..2000).map { |i| "line #{i}\n" }.join
      Zlib::GzipWriter.open(path) { |gz| gz.write(text) }
      assert_equal text, `gzip -dc #{path}`
      plain = File.join(dir, "b.txt")
      File.write(plain, text * 2)
      system("gzip", "-9", plain)
      assert_equal text * 2, Zlib::GzipReader.open(plain + ".gz") { |gz| gz.read }
      lines = []
      Zlib::GzipReader.open(plain + ".gz") { |gz| gz.each_line { |l| lines << l } }
      assert_equal 4000, lines.size
    end
  else
    puts "skipped: no gzip command"
  end
end
