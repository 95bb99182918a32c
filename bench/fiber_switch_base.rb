# The loop of fiber_switch.rb with a builtin call (Fiber#alive?) in place of `resume`: what
# the benchmark costs without any context switch.
#   COUNT=3000000 carmine bench/fiber_switch_base.rb
COUNT = Integer(ENV.fetch("COUNT", "3000000"))

fiber = Fiber.new do
end

COUNT.times do
  fiber.alive?
end
