require_relative "helper"
StdlibTest.require_libs("fileutils", "tmpdir")

test "mkdir_p, cp_r, mv, rm_rf in a temporary directory" do
  Dir.mktmpdir("carmine") do |d|
    FileUtils.mkdir_p("#{d}/a/b/c")
    File.write("#{d}/a/b/c/f.txt", "data")
    FileUtils.touch("#{d}/a/t")
    FileUtils.cp_r("#{d}/a", "#{d}/copy")
    assert_equal %w[b b/c b/c/f.txt t], Dir.glob("**/*", base: "#{d}/copy").sort
    FileUtils.mv("#{d}/copy/t", "#{d}/copy/t2")
    assert File.exist?("#{d}/copy/t2")
    assert !File.exist?("#{d}/copy/t")
    FileUtils.rm_rf("#{d}/copy")
    assert !File.exist?("#{d}/copy")
    FileUtils.rm_rf("#{d}/never-there")
  end
end

test "cp, compare_file, uptodate?, ln_s, chmod, install" do
  Dir.mktmpdir do |d|
    File.write("#{d}/src", "x" * 100)
    FileUtils.cp("#{d}/src", "#{d}/dst")
    assert FileUtils.compare_file("#{d}/src", "#{d}/dst")
    FileUtils.ln_s("#{d}/src", "#{d}/link")
    assert File.symlink?("#{d}/link")
    FileUtils.chmod(0o600, "#{d}/dst")
    assert_equal 0o600, File.stat("#{d}/dst").mode & 0o777
    FileUtils.chmod("u+x", "#{d}/dst")
    assert_equal 0o700, File.stat("#{d}/dst").mode & 0o777
    FileUtils.install("#{d}/src", "#{d}/inst", mode: 0o644)
    assert_equal 0o644, File.stat("#{d}/inst").mode & 0o777
    assert FileUtils.uptodate?("#{d}/inst", [])
  end
end

test "noop and cd" do
  Dir.mktmpdir do |d|
    FileUtils.mkdir_p("#{d}/n", noop: true)
    assert !File.exist?("#{d}/n")
    FileUtils.cd(d) { assert_equal File.realpath(d), Dir.pwd }
  end
end

test "mktmpdir removes its directory and contents after the block" do
  kept = Dir.mktmpdir(["pre", "suf"]) do |d|
    assert_match(/pre.*suf\z/, File.basename(d))
    Dir.mkdir("#{d}/sub")
    File.write("#{d}/sub/f", "1")
    d
  end
  assert !File.exist?(kept)
  assert File.directory?(Dir.tmpdir)
end

Assert.report
