require_relative "helper"
StdlibTest.require_libs("open3")

test "capture2 and capture2e" do
  out, st = Open3.capture2("echo", "hi")
  assert_equal "hi\n", out
  assert st.success?
  out, st = Open3.capture2("tr a-z A-Z", stdin_data: "abc")
  assert_equal "ABC", out
  out, _ = Open3.capture2e("sh", "-c", "echo a; echo b >&2")
  assert_equal "a\nb\n", out
end

test "capture3 separates the streams and the status" do
  out, err, st = Open3.capture3("sh", "-c", "echo out; echo err >&2; exit 3")
  assert_equal ["out\n", "err\n", 3], [out, err, st.exitstatus]
  assert !st.success?
end

test "popen3 with a block" do
  Open3.popen3("cat") do |i, o, e, th|
    i.write "abc"
    i.close
    assert_equal "abc", o.read
    assert_equal "", e.read
    assert th.value.success?
    assert_kind_of Integer, th.pid
  end
end

test "popen2 without a block and pipeline_r" do
  i, o, th = Open3.popen2("wc", "-c")
  i.write "12345"
  i.close
  assert_equal "5", o.read.strip
  o.close
  assert th.value.success?
  assert_equal "zy\n", Open3.pipeline_r("echo xy", "tr x z") { |r, _ts| r.read }
  assert_equal [true, true], Open3.pipeline("true", "true").map(&:success?)
end

Assert.report
