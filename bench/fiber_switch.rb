# Fiber context-switch speed vs native stack depth (seed 000, fig. 4): one fiber yields
# from inside RECURSIVE nested `times` blocks and is resumed COUNT times.
#   RECURSIVE=10 COUNT=3000000 carmine bench/fiber_switch.rb
RECURSIVE = Integer(ENV.fetch("RECURSIVE", "0"))
COUNT = Integer(ENV.fetch("COUNT", "3000000"))

def nest(i)
  if i == 0
    while true
      Fiber.yield
    end
  else
    i.times do
      nest(i - 1)
    end
  end
end

fiber = Fiber.new do
  nest(RECURSIVE)
end

COUNT.times do
  fiber.resume
end
