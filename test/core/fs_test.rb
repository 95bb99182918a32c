require_relative "../assert"

test "Kernel#test answers file questions" do
  assert_true Kernel.test(?d, "/tmp")
  assert_true Kernel.test(?e, __FILE__)
  assert_true Kernel.test(?f, __FILE__)
  assert_false Kernel.test(?f, "/tmp")
  assert_true Kernel.test(?r, __FILE__)
  assert_equal File.size(__FILE__), Kernel.test(?s, __FILE__)
  assert_true Kernel.test(?=, __FILE__, __FILE__)
  assert_true Kernel.test(?-, __FILE__, __FILE__)
  assert_kind_of Time, Kernel.test(?M, __FILE__)
  assert_raise(ArgumentError) { Kernel.test(?Q, __FILE__) }
end

test "Kernel#open opens files, pipes and to_open objects" do
  assert_equal File, open(__FILE__) { |f| f.class }
  assert_equal "hi\n", open("|echo hi", &:read)
  o = Object.new
  def o.to_open(*a) = [:opened, a]
  assert_equal [:opened, ["r"]], open(o, "r")
end

test "symlink, readlink, rename, rmdir and access predicates" do
  dir = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_fs_test_#{Process.pid}"
  Dir.mkdir(dir)
  begin
    File.write("#{dir}/a", "x")
    File.symlink("#{dir}/a", "#{dir}/l")
    assert_equal "#{dir}/a", File.readlink("#{dir}/l")
    assert_true Kernel.test(?l, "#{dir}/l")
    File.rename("#{dir}/a", "#{dir}/b")
    assert_true File.exist?("#{dir}/b")
    assert_true File.writable?("#{dir}/b")
    assert_equal 1, File.size?("#{dir}/b")
    assert_nil File.size?("#{dir}/nope")
    assert_raise(Errno::ENOENT) { File.rename("#{dir}/nope", "#{dir}/c") }
    File.delete("#{dir}/l", "#{dir}/b")
    Dir.mkdir("#{dir}/sub")
    Dir.rmdir("#{dir}/sub")
    assert_false File.exist?("#{dir}/sub")
  ensure
    Dir.children(dir).each { |c| File.delete("#{dir}/#{c}") } if File.directory?(dir)
    Dir.rmdir(dir)
  end
end

test "File.realpath resolves relative to a directory; tmpdir's mktmpdir cleans up" do
  assert_equal "/etc", File.realpath("etc", "/")
  require "tmpdir"
  path = Dir.mktmpdir("carmine") do |d|
    File.write(File.join(d, "f"), "1")
    Dir.mkdir(File.join(d, "s"))
    assert_true File.directory?(d)
    d
  end
  assert_false File.exist?(path)
end
