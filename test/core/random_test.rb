require_relative "../assert"

test "seeded sequences" do
  assert_equal 0.3745401188473625, Random.new(42).rand
  r = Random.new(42)
  assert_equal 1608637542, r.rand(2**32)
  assert_equal 3421126067, r.rand(2**32)
  assert_equal 92, r.rand(100)
  assert_equal 3, r.rand(1..6)
  assert_equal 5, r.rand(1...6)
  assert_equal 0.8952752369197305, r.rand(1.5)
  assert_equal 1.4458327575484278, r.rand(1.0..2.0)
  assert_equal 1.0999749158180028, r.rand(1.0...2.0)
  assert_equal 5, r.rand(-5..5)
  assert_equal 430430951046058781795, r.rand(2**70)
  assert_equal 1000003529520838976857396256898, r.rand(10**30..10**30 + 10**25)
  assert_equal 1.030876748167122, r.rand(1..2.5)
  assert_equal [1, 3, 76, 248, 87, 233, 212], r.bytes(7).bytes
  assert_equal 0.8324426408004217, r.rand(0.0)
  assert_equal 42, r.seed
  assert_equal 82, Random.new(2**100 + 5).rand(1000)
  assert_equal 1608637542, Random.new(-42).rand(2**32)
  assert_equal true, Random.new(2**32).rand(2**32) == Random.new(0).rand(2**32)
  assert_equal 0.4170219986692967, Random.new(1).rand(0.0..1.0)
  assert_equal [4, 9, 6, 3, 3, 7, 7, 9, 7, 8, 9, 8, 7, 6, 4, 0, 7, 0, 7, 6], Random.new(7).then { |g| 20.times.map { g.rand(10) } }
  assert_equal 0.5507979025745755, Random.new(3).random_number
  assert_equal 0.5507979025745755, Random.new(3).random_number(0)
  assert_equal 0.5507979025745755, Random.new(3).random_number(-1)
  assert_equal 8, Random.new(3).random_number(10)
  assert_equal 0.8261968538618633, Random.new(3).random_number(1.5)
  assert_equal 0.5507979025745755, Random.new(3).random_number(nil)
  assert_equal true, Random.new(5) == Random.new(5)
  assert_equal false, Random.new(5) == Random.new(6)
  assert_equal false, Random.new(5).tap { |g| g.rand } == Random.new(5)
  assert_equal 5, Random.new(5).seed
  assert_equal 99, Random.new("5".to_i).rand(100)
end

test "errors" do
  assert_raise(ArgumentError, "invalid argument - 0") { Random.new(1).rand(0) }
  assert_raise(ArgumentError, "invalid argument - -1") { Random.new(1).rand(-1) }
  assert_raise(ArgumentError, "invalid argument - -1.5") { Random.new(1).rand(-1.5) }
  assert_raise(ArgumentError, "invalid argument - 1..0") { Random.new(1).rand(1..0) }
  assert_raise(ArgumentError, "invalid argument - ") { Random.new(1).rand(nil) }
  assert_raise(Errno::EDOM, "Numerical argument out of domain") { Random.new(1).rand(Float::INFINITY) }
  assert_raise(Errno::EDOM, "Numerical argument out of domain") { Random.new(1).rand(Float::NAN) }
  assert_raise(Errno::EDOM, "Numerical argument out of domain") { Random.new(1).rand(1..) }
  assert_raise(TypeError, "no implicit conversion of Range into Integer") { Random.new(1).rand("a".."b") }
  assert_raise(ArgumentError, "negative string size (or size too big)") { Random.new(1).bytes(-1) }
  assert_raise(TypeError, "no implicit conversion of String into Integer") { Random.new("x") }
  assert_raise(ArgumentError, "invalid argument - -1") { Random.rand(-1) }
end

test "kernel" do
  srand(1234)
  assert_equal 0.1915194503788923, rand
  assert_equal 6, rand(10)
  assert_equal 2, rand(1..3)
  assert_equal 0, rand(2.5)
  assert_equal 4, rand(-10)
  assert_equal Float, rand(0).class
  assert_equal Float, rand(nil).class
  assert_equal nil, rand(1..0)
  assert_equal Float, rand(0.5).class
  assert_equal 1234, srand(5)
  assert_equal 5, srand
  assert_equal true, Random.rand(10).between?(0, 9)
  assert_equal Float, Random.rand.class
  assert_equal Float, Random.rand(1.5).class
  assert_equal Integer, Random.new_seed.class
  assert_equal true, Random.new_seed > 2**64
  assert_equal 4, Random.bytes(4).bytesize
  assert_equal 8, Random.urandom(8).bytesize
  assert_equal "#<Encoding:BINARY (ASCII-8BIT)>", (Random.urandom(8).encoding).inspect
  assert_equal true, Random.random_number(5).between?(0, 4)
  assert_equal Integer, Random.seed.class
  assert_equal Integer, Random.new.seed.class
  srand(99)
  a = [rand, rand(100)]
  srand(99)
  assert_equal true, [rand, rand(100)] == a
end


test "a forked child draws from a freshly seeded default generator" do
  srand(1234)
  r, w = IO.pipe
  pid = fork do
    r.close
    w.write(Array.new(4) { rand(1 << 30) }.join(","))
    w.close
    exit!(0)
  end
  w.close
  child = r.read.split(",").map(&:to_i)
  r.close
  Process.wait(pid)
  parent = Array.new(4) { rand(1 << 30) }
  assert_not_equal parent, child
  # An explicit generator keeps its state across fork.
  g = Random.new(99)
  r, w = IO.pipe
  pid = fork do
    r.close
    w.write(g.rand(1 << 30).to_s)
    w.close
    exit!(0)
  end
  w.close
  from_child = r.read.to_i
  r.close
  Process.wait(pid)
  assert_equal from_child, g.rand(1 << 30)
end
