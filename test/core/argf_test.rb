require_relative "../assert"

def with_files(*contents)
  paths = contents.each_with_index.map do |c, i|
    path = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_argf_test_#{Process.pid}_#{i}"
    File.write(path, c)
    path
  end
  yield paths
ensure
  paths&.each { |p| File.delete(p) if File.exist?(p) }
end

test "ARGF reads the named files as one stream, counting lines across them" do
  with_files("a\nb\n", "c\n") do |(f1, f2)|
    argf = ARGF.class.new(f1, f2)
    assert_equal "ARGF", argf.to_s
    assert_equal "a\n", argf.gets
    assert_equal f1, argf.filename
    assert_equal 1, argf.lineno
    assert_equal ["b\n", "c\n"], argf.readlines
    assert_equal f2, argf.filename
    assert_equal 3, argf.lineno
    assert_nil argf.gets
    assert_equal true, argf.eof?
  end
end

test "ARGF#read, readpartial at file boundaries, getc, skip and close" do
  with_files("ab", "cd") do |(f1, f2)|
    assert_equal "abcd", ARGF.class.new(f1, f2).read
    argf = ARGF.class.new(f1, f2)
    assert_equal "ab", argf.readpartial(10)
    assert_equal "", argf.readpartial(10)
    assert_equal "cd", argf.readpartial(10)
    assert_raise(EOFError, "end of file reached") { argf.readpartial(10) }
    argf = ARGF.class.new(f1, f2)
    assert_equal "a", argf.getc
    argf.skip
    assert_equal "c", argf.getc
    argf = ARGF.class.new(f1)
    argf.read
    assert_equal true, argf.closed?
    assert_raise(IOError) { argf.eof? }
  end
end

test "Kernel#gets reads ARGF (the files in ARGV) and sets $_ and $.; $< is ARGF" do
  assert_same ARGF, $<
  assert_same ARGV, ARGF.argv
  with_files("x\ny\n") do |(f1)|
    out, _err, _status = run_carmine("ARGV.replace([#{f1.inspect}]); p gets; p $_; p $.; p $FILENAME; p readlines")
    assert_equal "\"x\\n\"\n\"x\\n\"\n1\n#{f1.inspect}\n[\"y\\n\"]\n", out
  end
end
