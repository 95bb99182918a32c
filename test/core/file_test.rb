require_relative "../assert"

DIR = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_file_test_#{Process.pid}"
Dir.mkdir(DIR)
at_exit { Dir.glob("#{DIR}/**/*").sort.reverse.each { |f| File.directory?(f) && !File.symlink?(f) ? Dir.rmdir(f) : File.delete(f) }; Dir.rmdir(DIR) }

def open_fds = Dir.children("/proc/self/fd").size

test "File::Stat fields and predicates of a regular file" do
  path = "#{DIR}/stat"
  File.write(path, "hello")
  File.chmod(0o640, path)
  s = File.stat(path)
  assert_equal 5, s.size
  assert_equal 5, s.size?
  assert_true s.file?
  assert_false s.directory?
  assert_equal "file", s.ftype
  assert_equal 0o100640, s.mode
  assert_equal Process.uid, s.uid
  assert_true s.owned?
  assert_nil s.world_readable?
  assert_kind_of Time, s.mtime
  assert_equal 0, s <=> File.stat(path)
  assert_nil s <=> 1
  assert_match(/\A#<File::Stat dev=0x\h+, ino=\d+, mode=0100640, /, s.inspect)
  assert_equal s.ino, File::Stat.new(path).ino
  assert_equal s.ino, File.open(path) { |f| f.stat.ino }
  assert_raise(NotImplementedError) { s.birthtime }
  assert_raise(Errno::ENOENT, "No such file or directory @ rb_file_s_stat - #{DIR}/none") { File.stat("#{DIR}/none") }
end

test "lstat sees the link, stat its target; ftype of devices and fifos" do
  File.write("#{DIR}/target", "x")
  File.symlink("#{DIR}/target", "#{DIR}/link")
  assert_true File.lstat("#{DIR}/link").symlink?
  assert_false File.stat("#{DIR}/link").symlink?
  assert_equal "link", File.ftype("#{DIR}/link")
  assert_equal "characterSpecial", File.ftype("/dev/null")
  File.mkfifo("#{DIR}/fifo")
  assert_true File.pipe?("#{DIR}/fifo")
  assert_equal "fifo", File.ftype("#{DIR}/fifo")
  assert_raise(Errno::EEXIST) { File.mkfifo("#{DIR}/fifo") }
end

test "FileTest predicates accept paths, to_path objects and IOs" do
  path = "#{DIR}/ft"
  File.write(path, "")
  pathlike = Object.new
  pathlike.define_singleton_method(:to_path) { path }
  [path, pathlike].each do |arg|
    assert_true FileTest.exist?(arg)
    assert_true File.zero?(arg)
    assert_true File.empty?(arg)
    assert_nil File.size?(arg)
  end
  File.open(path) { |f| assert_true File.file?(f) }
  assert_false File.exist?("#{DIR}/missing")
  assert_true File.identical?(path, "#{DIR}/../#{File.basename(DIR)}/ft")
  assert_raise(TypeError) { File.exist?(1) }
end

test "chmod, utime, truncate and umask" do
  path = "#{DIR}/ops"
  File.write(path, "0123456789")
  assert_equal 1, File.chmod(0o600, path)
  assert_equal 0o600, File.stat(path).mode & 0o777
  t = Time.at(1_000_000_000)
  assert_equal 1, File.utime(t, t, path)
  assert_equal t, File.mtime(path)
  File.truncate(path, 4)
  assert_equal 4, File.size(path)
  File.open(path, "r+") { |f| f.truncate(2) }
  assert_equal "01", File.read(path)
  old = File.umask(0o027)
  assert_equal 0o027, File.umask(old)
  assert_raise(Errno::ENOENT) { File.chmod(0o600, "#{DIR}/none") }
end

test "flock: a second exclusive non-blocking lock is refused" do
  path = "#{DIR}/lock"
  File.write(path, "")
  File.open(path) do |a|
    File.open(path) do |b|
      assert_equal 0, a.flock(File::LOCK_EX)
      assert_false b.flock(File::LOCK_EX | File::LOCK_NB)
      a.flock(File::LOCK_UN)
      assert_equal 0, b.flock(File::LOCK_EX | File::LOCK_NB)
    end
  end
end

test "fnmatch flags" do
  assert_true File.fnmatch("*.rb", "a.rb")
  assert_false File.fnmatch("*", ".hidden")
  assert_true File.fnmatch("*", ".hidden", File::FNM_DOTMATCH)
  assert_true File.fnmatch("*", "a/b")
  assert_false File.fnmatch("*", "a/b", File::FNM_PATHNAME)
  assert_true File.fnmatch("**/c", "a/b/c", File::FNM_PATHNAME)
  assert_true File.fnmatch("A.RB", "a.rb", File::FNM_CASEFOLD)
  assert_false File.fnmatch("{a,b}", "a")
  assert_true File.fnmatch("{a,b}", "b", File::FNM_EXTGLOB)
  assert_true File.fnmatch("\\*", "*")
  assert_false File.fnmatch("\\*", "\\*")
  assert_true File.fnmatch("\\*", "\\*", File::FNM_NOESCAPE)
  assert_true File.fnmatch("[a-c]x", "bx")
  assert_false File.fnmatch("[!a-c]x", "bx")
  assert_equal File::LOCK_EX, IO::LOCK_EX
end

test "expand_path with ~, ~user and errors" do
  home = ENV["HOME"]
  begin
    ENV["HOME"] = "/carmine_home"
    assert_equal "/carmine_home/a", File.expand_path("~/a")
    ENV["HOME"] = "relative"
    assert_raise(ArgumentError, "non-absolute home") { File.expand_path("~") }
  ensure
    ENV["HOME"] = home
  end
  assert_raise(ArgumentError, "user carmine_no_such_user doesn't exist") { File.expand_path("~carmine_no_such_user") }
  assert_equal "/a/c", File.expand_path("../c", "/a/b")
end

# 100,000 opens (closed explicitly, then dropped for the GC to close) must leave the
# descriptor count flat. Under GC stress every allocation collects, so fewer iterations
# exercise the same path in reasonable time.
test "opening and dropping many files does not leak descriptors" do
  n = ENV["CARMINE_GC_STRESS"] ? 300 : 50_000
  path = "#{DIR}/many"
  File.write(path, "x")
  before = open_fds
  n.times { File.open(path).close }
  n.times { File.open(path) }
  GC.start
  assert(open_fds <= before + 2, "descriptors grew from #{before} to #{open_fds}")
end

test "opening both ends of a FIFO from two threads does not deadlock" do
  fifo = "#{DIR}/fifo2"
  File.mkfifo(fifo)
  writer = Thread.new { File.open(fifo, "w") { |f| f.syswrite("hello") } }
  reader = Thread.new { File.open(fifo, "r") { |f| f.sysread(5) } }
  assert_equal 5, writer.value
  assert_equal "hello", reader.value
end

test "dirname with a level" do
  assert_equal "/a", File.dirname("/a/b/c", 2)
  assert_equal "/", File.dirname("/a/b/c", 9)
  assert_equal "a/b", File.dirname("a/b", 0)
  assert_equal "/foo", File.dirname("/////foo/bar/")
  assert_raise(ArgumentError, "negative level: -1") { File.dirname("/a", -1) }
end

test "absolute_path leaves ~ alone" do
  Dir.chdir(DIR) do
    real = Dir.pwd
    assert_equal "#{real}/~", File.absolute_path("~")
    assert_equal "/b/~x", File.absolute_path("~x", "/b")
    assert_equal "/y", File.absolute_path("/x/../y")
  end
end
