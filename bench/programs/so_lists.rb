# Lists: build, copy, move item by item between arrays (shift/push/pop), reverse, compare
# (the "lists" test of the old shootout).
SIZE = 10_000

def test_lists
  li1 = (1..SIZE).to_a
  li2 = li1.dup
  li3 = []
  li3.push(li2.shift) until li2.empty?
  li2.push(li3.pop) until li3.empty?
  li1.reverse!
  return 0 if li1[0] != SIZE
  li1 == li2 ? li1.length : 0
end

r = 0
1000.times { r = test_lists }
puts r
