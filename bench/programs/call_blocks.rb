# Blocks: yield with 0-3 arguments, block_given?, explicit &block parameters and .call,
# methods made with define_method, Enumerable methods with short blocks.
class Runner
  def each_twice
    yield 1
    yield 2
  end

  def with3 = yield(1, 2, 3)
  def maybe = block_given? ? yield : 0
  def keep(&blk) = blk
  def pass_on(&blk) = each_twice(&blk)

  define_method(:dm_add) { |a, b| a + b }
  define_method(:dm_zero) { 7 }
end

r = Runner.new
pr = r.keep { |x| x * 3 }
sum = 0
i = 0
while i < 1_500_000
  r.each_twice { |x| sum += x }
  sum += r.with3 { |a, b, c| a + b + c }
  sum += r.maybe { 5 } + r.maybe
  sum += pr.call(i & 7)
  r.pass_on { |x| sum -= x }
  sum += r.dm_add(i, 1) + r.dm_zero
  i += 1
end
arr = (1..100).to_a
2_000.times do
  sum += arr.map { |x| x + 1 }.select { |x| x.odd? }.inject(0) { |s, x| s + x }
  sum += arr.count { |x| x > 50 }
end
puts sum
