# Struct accessors and keyword_init Structs: construction, readers, writers, ==, to_a.
Vec3 = Struct.new(:x, :y, :z) do
  def dot(o) = x * o.x + y * o.y + z * o.z
end
Pair = Struct.new(:left, :right, keyword_init: true)

a = Vec3.new(1, 2, 3)
sum = 0
i = 0
while i < 1_500_000
  b = Vec3.new(i, 1, 2)
  b.z = b.x + b.y
  sum += a.dot(b) + b[1]
  sum += 1 if b == a
  pr = Pair.new(left: i, right: b.z)
  sum += pr.left - pr.right
  i += 1
end
puts sum
