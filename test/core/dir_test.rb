require_relative "../assert"

ROOT = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_dir_test_#{Process.pid}"
Dir.mkdir(ROOT)
%w[a b .hidden sub sub/deep].each { |d| Dir.mkdir("#{ROOT}/#{d}") }
%w[x.rb y.txt sub/z.rb sub/deep/w.rb .dot.rb].each { |f| File.write("#{ROOT}/#{f}", "") }
at_exit { system("rm", "-rf", ROOT) }

test "Dir objects read, tell, seek and rewind" do
  d = Dir.new(ROOT)
  assert_equal ROOT, d.path
  assert_match(/\A#<Dir:#{Regexp.escape(ROOT)}>\z/, d.inspect)
  names = []
  while (n = d.read)
    names << n
  end
  assert_equal %w[. .. .dot.rb .hidden a b sub x.rb y.txt], names.sort
  d.rewind
  first = d.read
  pos = d.tell
  second = d.read
  d.seek(pos)
  assert_equal second, d.read
  assert_not_equal first, second
  assert_kind_of Integer, d.fileno
  d.close
  assert_raise(IOError, "closed directory") { d.read }
  assert_nil d.close
end

test "children, each_child, entries and empty?" do
  assert_equal %w[.dot.rb .hidden a b sub x.rb y.txt], Dir.children(ROOT).sort
  got = []
  Dir.each_child(ROOT) { |c| got << c }
  assert_equal Dir.children(ROOT).sort, got.sort
  assert_equal Dir.entries(ROOT).size, Dir.children(ROOT).size + 2
  assert_true Dir.empty?("#{ROOT}/a")
  assert_false Dir.empty?(ROOT)
  assert_equal Encoding::BINARY, Dir.entries(ROOT, encoding: "BINARY").first.encoding
  assert_raise(Errno::ENOENT, "No such file or directory @ dir_initialize - #{ROOT}/none") { Dir.new("#{ROOT}/none") }
end

test "glob patterns, flags, base: and errors" do
  Dir.chdir(ROOT) do
    assert_equal %w[x.rb], Dir.glob("*.rb")
    assert_equal %w[.dot.rb x.rb], Dir.glob("*.rb", File::FNM_DOTMATCH)
    assert_equal %w[sub/deep/w.rb sub/z.rb x.rb], Dir.glob("**/*.rb")
    assert_equal %w[x.rb y.txt], Dir.glob("{x.rb,y.txt}")
    assert_equal %w[x.rb y.txt], Dir["x.rb", "y.txt"]
    assert_equal %w[a/ b/ sub/], Dir.glob("*/")
    assert_equal %w[x.rb], Dir.glob("x\\.rb")
  end
  assert_equal %w[deep/w.rb z.rb], Dir.glob("**/*.rb", base: "#{ROOT}/sub")
  assert_equal %w[#{ROOT}/x.rb].map { |s| s.sub('#{ROOT}', ROOT) }, Dir.glob("#{ROOT}/x*")
  assert_raise(ArgumentError, "nul-separated glob pattern is deprecated") { Dir.glob("a\0b") }
end

test "chdir with a block restores the directory, also on exceptions" do
  here = Dir.pwd
  assert_equal :r, Dir.chdir(ROOT) { assert_equal ROOT, Dir.pwd; :r }
  assert_equal here, Dir.pwd
  assert_raise(RuntimeError) { Dir.chdir(ROOT) { raise "boom" } }
  assert_equal here, Dir.pwd
  assert_raise(Errno::ENOENT) { Dir.chdir("#{ROOT}/none") }
end

test "mkdir and rmdir errors" do
  assert_raise(Errno::EEXIST, "File exists @ dir_s_mkdir - #{ROOT}/a") { Dir.mkdir("#{ROOT}/a") }
  assert_raise(Errno::ENOTEMPTY) { Dir.rmdir("#{ROOT}/sub") }
  Dir.mkdir("#{ROOT}/tmp")
  assert_equal 0, Dir.unlink("#{ROOT}/tmp")
  assert_false Dir.exist?("#{ROOT}/tmp")
end

test "Dir.mktmpdir makes and removes a private directory" do
  require "tmpdir"
  kept = nil
  Dir.mktmpdir("carmine") do |d|
    kept = d
    assert_true File.directory?(d)
    assert_equal 0o700, File.stat(d).mode & 0o777
    assert_match(/carmine/, File.basename(d))
  end
  assert_false File.exist?(kept)
end

test "each, each_child and children start from the first entry" do
  d = Dir.new(ROOT)
  3.times { d.read }
  assert_equal Dir.entries(ROOT).sort, d.each.to_a.sort
  2.times { d.read }
  assert_equal Dir.children(ROOT).sort, d.children.sort
  assert_nil d.read
  d.close
end

test "Dir.home and Dir.chdir read ENV['HOME']; empty? of a missing directory raises" do
  home = ENV["HOME"]
  begin
    ENV["HOME"] = ROOT
    assert_equal ROOT, Dir.home
    here = Dir.pwd
    Dir.chdir { assert_equal ROOT, Dir.pwd }
    assert_equal here, Dir.pwd
  ensure
    ENV["HOME"] = home
  end
  assert_raise(Errno::ENOENT, "No such file or directory @ rb_dir_s_empty_p - #{ROOT}/none") { Dir.empty?("#{ROOT}/none") }
  assert_false Dir.empty?("#{ROOT}/x.rb")
end
