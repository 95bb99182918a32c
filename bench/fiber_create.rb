# Fiber creation and termination in batches (seed 000, fig. 6): SIZE fibers are created,
# then each is resumed to completion; 1,000,000 fibers in total.
#   SIZE=100 carmine bench/fiber_create.rb
SIZE = Integer(ENV.fetch("SIZE", "1"))
TOTAL = Integer(ENV.fetch("TOTAL", "1000000"))
COUNT = TOTAL / SIZE

a = Array.new(SIZE)
COUNT.times do
  SIZE.times do |i|
    a[i] = Fiber.new {}
  end
  SIZE.times do |i|
    a[i].resume
  end
end
