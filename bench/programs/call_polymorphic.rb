# Polymorphic call sites: one site calling the same method on 1, 2, 4 and 8 receiver
# classes in turn (inline-cache behaviour), with subclassing and module inclusion.
module Named
  def tag = 1
end

classes = (1..8).map do |k|
  Class.new do
    include Named if k % 2 == 1
    define_method(:value) { k }
    def twice = value * 2
    def tag = 0 unless k % 2 == 1
  end
end
objs = classes.map(&:new)

sum = 0
[1, 2, 4, 8].each do |kinds|
  list = Array.new(64) { |i| objs[i % kinds] }
  j = 0
  while j < 30_000
    list.each { |o| sum += o.twice + o.tag }
    j += 1
  end
end
puts sum
