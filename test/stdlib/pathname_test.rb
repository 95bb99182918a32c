require_relative "helper"
StdlibTest.require_libs("pathname")

test "construction, to_s, comparison, hash" do
  pn = Pathname.new("/usr/lib/../lib/ruby")
  assert_equal "/usr/lib/../lib/ruby", pn.to_s
  assert_equal "#<Pathname:/usr/lib/../lib/ruby>", pn.inspect
  assert_equal Pathname("a"), Pathname.new("a")
  assert Pathname("a").eql?(Pathname("a"))
  assert_equal Pathname("a").hash, Pathname("a").hash
  assert_equal(-1, Pathname("a") <=> Pathname("a/b"))
  assert_equal(-1, Pathname("a/b") <=> Pathname("a-b"))
  assert_nil(Pathname("a") <=> "a")
  assert_raise(ArgumentError) { Pathname.new("a\0b") }
  assert_raise(TypeError) { Pathname.new(1) }
  assert_same pn, Pathname(pn)
  assert_equal "x", Pathname.new(Pathname("x")).to_s
end

test "pure path operations" do
  pn = Pathname.new("/usr/lib/../lib/ruby")
  assert_equal Pathname("/usr/lib/ruby"), pn.cleanpath
  assert_equal Pathname("ruby"), pn.basename
  assert_equal Pathname("/usr/lib/../lib"), pn.dirname
  assert_equal ".rb", Pathname("x/y.rb").extname
  assert_equal [Pathname("/usr/lib/../lib"), Pathname("ruby")], pn.split
  assert_equal Pathname("a/b/c"), Pathname("a/b") + "c"
  assert_equal Pathname("/c"), Pathname("a/b") + "/c"
  assert_equal Pathname("a/b/c/d"), Pathname("a").join("b", "c/d")
  assert_equal Pathname("x.txt"), Pathname("x.rb").sub_ext(".txt")
  assert_equal Pathname("a/z.c"), Pathname("a/b.c").sub(/b/, "z")
  assert_equal Pathname("../b/c"), Pathname("/a/b/c").relative_path_from(Pathname("/a/d"))
  assert Pathname("/").root?
  assert Pathname("/x").absolute?
  assert Pathname("x").relative?
  assert_equal %w[x y], Pathname("/x/y").each_filename.to_a
  assert_equal %w[/ /x /x/y], Pathname("/x/y").descend.map(&:to_s)
  assert_equal Pathname("a/c"), Pathname("a//b/../c").cleanpath
  assert_equal Pathname("/x"), Pathname("/x/y").parent
end

test "file-system operations" do
  StdlibTest.scratch_dir do |d|
    t = Pathname(d)
    (t / "f.txt").write("hello\nworld\n")
    assert_equal "hello\nworld\n", (t / "f.txt").read
    assert_equal ["hello\n", "world\n"], (t / "f.txt").readlines
    lines = []
    (t / "f.txt").each_line { |l| lines << l }
    assert_equal 2, lines.size
    assert_equal 12, (t / "f.txt").size
    assert (t / "f.txt").file?
    assert t.directory?
    assert (t / "f.txt").exist?
    assert_equal "file", (t / "f.txt").ftype
    (t / "sub/deep").mkpath
    assert_equal %w[f.txt sub], t.children.map { |c| c.basename.to_s }.sort
    assert_equal %w[f.txt], t.glob("*.txt").map { |x| x.basename.to_s }
    assert_equal 2, Pathname.glob("#{d}/*").size
    assert (t / "sub/deep").empty?
    assert !(t / "sub").empty?
    assert_equal t.realpath, Pathname(File.realpath(d))
    (t / "link").make_symlink(t / "f.txt")
    assert (t / "link").symlink?
    assert_equal t / "f.txt", (t / "link").readlink
    (t / "f.txt").rename(t / "g.txt")
    assert (t / "g.txt").exist?
    assert_equal 5, t.find.count
    (t / "sub").rmtree
    assert !(t / "sub").exist?
    (t / "g.txt").delete
    (t / "link").unlink
    assert_equal [], t.children
    (t / "e").mkdir
    (t / "e").rmdir
    assert_equal Pathname(Dir.pwd), Pathname.pwd
  end
end

Assert.report
