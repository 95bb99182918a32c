require_relative "helper"
StdlibTest.require_libs("tempfile")

test "Tempfile.new writes and reads, close keeps, unlink removes" do
  tf = Tempfile.new(["pre", ".txt"])
  path = tf.path
  assert File.basename(path).start_with?("pre")
  assert path.end_with?(".txt")
  tf.write("hello")
  tf.flush
  assert_equal "hello", File.read(path)
  tf.rewind
  assert_equal "hello", tf.read
  tf.close
  assert File.exist?(path)
  tf.unlink
  assert !File.exist?(path)
end

test "close! removes the file; the file is private to the user" do
  tf = Tempfile.new("x")
  path = tf.path
  assert_equal 0o600, File.stat(path).mode & 0o777
  tf.close!
  assert !File.exist?(path)
end

test "Tempfile.create removes the file after the block" do
  path = nil
  r = Tempfile.create("c") do |f|
    f.puts "x"
    path = f.path
    assert File.exist?(path)
    :value
  end
  assert_equal :value, r
  assert !File.exist?(path)
end

test "Tempfile.open with a block closes the file" do
  f = Tempfile.open("o") { |t| t.print "y"; t.rewind; assert_equal "y", t.read; t }
  assert f.closed?
  f.unlink
end

Assert.report
