require_relative "../assert"

def tmp_path(name)
  "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_io_cm_#{Process.pid}_#{name}"
end

test "IO.read/write/binread/binwrite/readlines/foreach with offsets and open keywords" do
  path = tmp_path("rw")
  assert_equal 5, IO.write(path, "a\nb\nc")
  assert_equal "a\nb\nc", IO.read(path)
  assert_equal "b", IO.read(path, 1, 2)
  assert_equal Encoding::BINARY, IO.binread(path).encoding
  assert_equal ["a", "b", "c"], IO.readlines(path, chomp: true)
  assert_equal ["a\n", "b\n", "c"], IO.foreach(path).to_a
  IO.write(path, "XY", 1)
  assert_equal "aXY\nc", IO.read(path)
  IO.binwrite(path, "\xff".b)
  assert_equal "\xff".b, IO.binread(path)
  assert_raise(ArgumentError, "negative length -1 given") { IO.read(path, -1) }
  assert_raise(Errno::ENOENT, "No such file or directory @ rb_sysopen - /nonexistent/x") { IO.read("/nonexistent/x") }
  File.delete(path)
end

test "File.open with integer flags, perm, and mode keywords" do
  path = tmp_path("flags")
  File.open(path, File::WRONLY | File::CREAT | File::TRUNC, 0600) { |f| f.write "x" }
  assert_equal 0600, File.stat(path).mode & 0777
  assert_raise(Errno::EEXIST) { File.open(path, File::CREAT | File::EXCL | File::WRONLY) }
  assert_raise(ArgumentError, "mode specified twice") { File.open(path, "r", mode: "r") }
  assert_raise(ArgumentError, "invalid access mode q") { File.open(path, "q") }
  File.open(path, "r", binmode: true) { |f| assert_equal Encoding::BINARY, f.read.encoding }
  File.open(path, "w") { |f| assert_raise(IOError, "not opened for reading") { f.read } }
  File.delete(path)
end

test "getc, ungetc, each_char and each_codepoint read characters in the IO's encoding" do
  r, w = IO.pipe
  w.write "aé"
  assert_equal "a", r.getc
  r.ungetc("xy")
  assert_equal "xy", r.read(2)
  assert_equal "é", r.getc
  w.write "zü"
  w.close
  assert_equal ["z", "ü"], r.each_char.to_a
  r.close
  r, w = IO.pipe
  w.write "hé"
  w.close
  assert_equal [104, 233], r.each_codepoint.to_a
  r.close
end

test "IO.select with timeouts, buffered input and closed streams" do
  r, w = IO.pipe
  assert_nil IO.select([r], nil, nil, 0.01)
  assert_equal [[], [w], []], IO.select(nil, [w])
  w.write "ab"
  r.getc
  assert_equal [[r], [], []], IO.select([r], nil, nil, 0)
  assert_raise(ArgumentError, "time interval must not be negative") { IO.select([r], nil, nil, -1) }
  r.close
  assert_raise(IOError, "closed stream") { IO.select([r]) }
  w.close
end

test "sysseek, pread, pwrite, syswrite and copy_stream" do
  path = tmp_path("sys")
  File.write(path, "0123456789")
  File.open(path, "r+") do |f|
    assert_equal "345", f.pread(3, 3)
    assert_equal 0, f.pos
    f.pwrite("ab", 8)
    assert_equal 4, f.sysseek(4)
    assert_equal 2, f.syswrite("XY")
  end
  assert_equal "0123XY67ab", File.read(path)
  dest = tmp_path("copy")
  assert_equal 4, IO.copy_stream(path, dest, 4, 2)
  assert_equal "23XY", File.read(dest)
  r, w = IO.pipe
  File.open(path) { |f| IO.copy_stream(f, w) }
  w.close
  assert_equal "0123XY67ab", r.read
  [path, dest].each { |p| File.delete(p) }
end

test "reopen redirects a stream to a file" do
  path = tmp_path("reopen")
  out, err, status = run_carmine("$stdout.reopen(#{path.inspect}, 'w'); puts 'to file'; $stdout.flush; STDERR.puts File.read(#{path.inspect})")
  assert_equal "", out
  assert_equal "to file\n", err
  assert_equal true, status.success?
  File.delete(path)
end

test "io/wait and io/nonblock: wait_readable, wait_writable, wait, ready?, nonblock" do
  require "io/wait"
  require "io/nonblock"
  r, w = IO.pipe
  assert_nil r.wait_readable(0.01)
  assert_equal false, r.ready?
  assert_same w, w.wait_writable(0)
  assert_equal IO::WRITABLE, w.wait(IO::WRITABLE, 0)
  assert_raise(ArgumentError, "Events must be positive integer!") { w.wait(0, 0) }
  w << "x"
  assert_same r, r.wait_readable(1)
  assert_same r, r.wait(0, :read)
  r.nonblock = true
  assert_equal true, r.nonblock?
  r.nonblock(false) { assert_equal false, r.nonblock? }
  assert_equal true, r.nonblock?
  r.close
  assert_raise(IOError, "closed stream") { r.wait_readable(0) }
  w.close
end
