require_relative "../assert"
require_relative "stdlib_path"
require "digest"
require "tmpdir"

test "class-level digests of the algorithms" do
  assert_equal "900150983cd24fb0d6963f7d28e17f72", Digest::MD5.hexdigest("abc")
  assert_equal "a9993e364706816aba3e25717850c26c9cd0d89d", Digest::SHA1.hexdigest("abc")
  assert_equal "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", Digest::SHA256.hexdigest("abc")
  assert_equal 48, Digest::SHA384.digest("abc").bytesize
  assert_equal "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e", Digest::SHA512.hexdigest("")
  assert_equal "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc", Digest::RMD160.hexdigest("abc")
  assert_equal "kAFQmDzST7DWlj99KOF/cg==", Digest::MD5.base64digest("abc")
  assert_equal Encoding::BINARY, Digest::SHA256.digest("abc").encoding
  assert_equal Encoding::US_ASCII, Digest::SHA256.hexdigest("abc").encoding
  assert_raise(ArgumentError, "no data given") { Digest::MD5.hexdigest }
end

test "instances: update, copies, reset, comparisons" do
  d = Digest::SHA256.new
  d << "ab"
  e = d.dup
  e.update("c")
  assert_equal Digest::SHA256.hexdigest("ab"), d.hexdigest
  assert_equal Digest::SHA256.hexdigest("abc"), e.to_s
  assert_equal [32, 64, 32], [d.digest_length, d.block_length, d.size]
  assert_true e == Digest::SHA256.hexdigest("abc")
  assert_true e == Digest::SHA256.new.update("abc")
  assert_equal Digest::SHA256.digest("x"), d.digest("x")
  assert_equal Digest::SHA256.hexdigest(""), d.hexdigest
  d << "q"
  assert_equal Digest::SHA256.hexdigest("q"), d.hexdigest!
  assert_equal Digest::SHA256.hexdigest(""), d.hexdigest
  assert_equal "#<Digest::MD5: d41d8cd98f00b204e9800998ecf8427e>", Digest::MD5.new.inspect
  assert_equal "#<Digest::SHA2:512 #{Digest::SHA512.hexdigest("")}>", Digest::SHA2.new(512).inspect
  assert_raise(TypeError) { Digest::MD5.new.update(1) }
  assert_raise(NotImplementedError) { Digest::Base.new }
  sub = Class.new(Digest::MD5)
  assert_equal Digest::MD5.hexdigest("x"), sub.hexdigest("x")
  plain = Class.new { include Digest::Instance }
  assert_raise(RuntimeError) { plain.new.update("x") }
end

test "files" do
  Dir.mktmpdir do |dir|
    path = File.join(dir, "f")
    File.binwrite(path, "data" * 10_000)
    assert_equal Digest::MD5.hexdigest("data" * 10_000), Digest::MD5.file(path).hexdigest
    assert_equal Digest::SHA1.hexdigest("data" * 10_000), Digest::SHA1.new.file(path).hexdigest
  end
end

test "bubblebabble and hexencode" do
  require "digest/bubblebabble"
  assert_equal "xinik-zorox", Digest.bubblebabble("foo")
  assert_equal "xesef-disof-gytuf-katof-movif-baxux", Digest.bubblebabble("1234567890")
  assert_equal Digest.bubblebabble(Digest::MD5.digest("x")), Digest::MD5.bubblebabble("x")
  assert_equal "6162", Digest.hexencode("ab")
  assert_equal Digest::SHA256, Digest(:SHA256)
end
