require_relative "../assert"

def with_tmp(content)
  path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_io_test_#{Process.pid}_#{rand(1_000_000)}"
  File.write(path, content)
  yield path
ensure
  File.delete(path) if File.exist?(path)
end

test "external and internal encodings of the standard streams and of files" do
  assert_equal Encoding.default_external, STDIN.external_encoding
  assert_nil STDIN.internal_encoding
  assert_nil STDOUT.external_encoding
  with_tmp("abc") do |path|
    File.open(path, "r:ISO-8859-1") do |f|
      assert_equal Encoding::ISO_8859_1, f.external_encoding
      assert_equal Encoding::ISO_8859_1, f.read.encoding
    end
    File.open(path, "rb") { |f| assert_equal Encoding::BINARY, f.read.encoding }
    File.open(path, encoding: "US-ASCII") { |f| assert_equal Encoding::US_ASCII, f.gets.encoding }
    File.open(path, "r:UTF-8:UTF-8") { |f| assert_nil f.internal_encoding }
  end
end

test "set_encoding with two encodings, a spec string, or nil" do
  with_tmp("x\n") do |path|
    File.open(path) do |f|
      f.set_encoding(Encoding::IBM775, Encoding::IBM866)
      assert_equal ["IBM775", "IBM866"], [f.external_encoding.name, f.internal_encoding.name]
      f.set_encoding("ISO-8859-1:ISO-8859-1")
      assert_equal [Encoding::ISO_8859_1, nil], [f.external_encoding, f.internal_encoding]
      f.set_encoding(nil)
      assert_equal [Encoding.default_external, nil], [f.external_encoding, f.internal_encoding]
    end
  end
end

test "Encoding.default_external and default_internal can be changed" do
  ext, int = Encoding.default_external, Encoding.default_internal
  begin
    Encoding.default_external = "ISO-8859-16"
    assert_equal Encoding::ISO_8859_16, Encoding.default_external
    assert_equal Encoding::ISO_8859_16, STDIN.external_encoding
    Encoding.default_internal = Encoding::IBM437
    assert_equal Encoding::IBM437, Encoding.default_internal
    assert_nil STDIN.internal_encoding
    assert_raise(ArgumentError, "default external can not be nil") { Encoding.default_external = nil }
  ensure
    Encoding.default_external = ext
    Encoding.default_internal = int
  end
  assert_equal Encoding::UTF_8, Encoding.default_external
  assert_nil Encoding.default_internal
end

test "seek, pos and rewind" do
  with_tmp("line1\nline2\nline3\n") do |path|
    File.open(path) do |f|
      assert_equal "line1\n", f.gets
      assert_equal 6, f.pos
      f.seek(2, IO::SEEK_CUR)
      assert_equal "ne2\n", f.gets
      f.seek(-6, :END)
      assert_equal "line3\n", f.read
      f.rewind
      assert_equal [0, 0], [f.pos, f.lineno]
      f.pos = 12
      assert_equal "line3\n", f.gets
    end
  end
end

test "File.binread reads bytes, with length and offset" do
  with_tmp("h\u00e9llo") do |path|
    s = File.binread(path)
    assert_equal Encoding::BINARY, s.encoding
    assert_equal 6, s.bytesize
    assert_equal "\xC3\xA9".b, File.binread(path, 2, 1)
    assert_equal "", File.binread(path, 0, 10)
    assert_nil File.binread(path, 1, 10)
  end
end

test "IO.popen runs a command: read, write, both ways, and sets $?" do
  assert_equal "hi\n", IO.popen(["echo", "hi"], &:read)
  assert_true $?.success?
  assert_equal "x y\n", IO.popen("echo x y").read.tap { $?.nil? }
  io = IO.popen("cat", "r+")
  io.write "abc"
  io.close_write
  assert_equal "abc", io.read
  io.close
  assert_equal 0, $?.exitstatus
  IO.popen("cat >/dev/null; exit 3", "w") { |w| w.puts "x" }
  assert_equal 3, $?.exitstatus
  assert_equal "err\n", IO.popen(["sh", "-c", "echo err >&2", { err: [:child, :out] }], &:read)
  assert_equal "v\n", IO.popen({ "CARMINE_T" => "v" }, "echo $CARMINE_T", &:read)
  assert_raise(Errno::ENOENT) { IO.popen(["carmine_no_such_command_x"]) }
end

test "IO.pipe connects a reader and a writer" do
  r, w = IO.pipe
  w.write "zz"
  w.close
  assert_equal "zz", r.read
  r.close
  assert_equal "ok", IO.pipe { |a, b| b.write("ok"); b.close; a.read }
end

test "Dir.chdir changes the directory, restoring it after a block" do
  here = Dir.pwd
  assert_equal :done, Dir.chdir("/") { |p| assert_equal "/", p; assert_equal "/", Dir.pwd; :done }
  assert_equal here, Dir.pwd
  assert_raise(RuntimeError) { Dir.chdir("/") { raise "x" } }
  assert_equal here, Dir.pwd
  assert_raise(Errno::ENOENT) { Dir.chdir("/carmine/no/such/dir") }
end

test "DATA is the main script after __END__" do
  out, _err, status = run_carmine("p DATA.class\np DATA.read\nDATA.rewind\np DATA.gets\n__END__\ndata here\n")
  assert_equal 0, status.exitstatus
  assert_equal "File\n\"data here\\n\"\n\"p DATA.class\\n\"\n", out
  out, = run_carmine("p defined?(DATA)\n")
  assert_equal "nil\n", out
end

test "IO#dup gives an independent IO on the same file" do
  with_tmp("abc\ndef\n") do |path|
    f = File.open(path)
    g = f.dup
    assert_equal "abc\n", g.gets
    g.close
    assert_false f.closed?
    f.close
  end
  o = STDOUT.dup
  assert_equal 1, STDOUT.fileno
  assert_true o.fileno > 2
  o.close
end

test "read, readpartial, sysread and read_nonblock fill the caller's buffer" do
  r, w = IO.pipe
  w.write "hello world"
  buf = +"old"
  assert_same buf, r.read(5, buf)
  assert_equal "hello", buf
  assert_equal " wo", r.readpartial(3, buf)
  assert_equal " wo", buf
  assert_equal "rld", r.read_nonblock(100, buf)
  assert_equal :wait_readable, r.read_nonblock(10, exception: false)
  assert_raise(IO::WaitReadable) { r.read_nonblock(10) }
  w.write "xyz"
  assert_equal "xyz", r.sysread(10, buf)
  assert_equal "xyz", buf
  w.close
  assert_raise(EOFError) { r.sysread(1, buf) }
  assert_equal "", buf
  assert_raise(EOFError) { r.readpartial(1) }
  assert_nil r.read_nonblock(5, exception: false)
  buf = +"zz"
  assert_nil r.read(3, buf)
  assert_equal "", buf
  r.close
end

test "reads and writes on a non-blocking descriptor wait instead of raising EAGAIN" do
  require "io/nonblock"
  r, w = IO.pipe
  r.nonblock = true
  pid = spawn("sleep 0.05; echo hi", out: w)
  w.close
  assert_equal "hi\n", r.gets
  assert_equal "", r.read
  Process.wait(pid)
  r.close
  r, w = IO.pipe
  w.nonblock = true
  pid = spawn("sleep 0.05; wc -c", in: r, out: (out_r, out_w = IO.pipe)[1])
  r.close
  out_w.close
  w.write("x" * 300_000)
  w.close
  assert_equal "300000", out_r.read.strip
  Process.wait(pid)
ensure
  out_r&.close
end
