# Threads (issue 16 item 6): 5,000 threads that each spin on Thread.pass while the main
# thread starts the others, then all are stopped and joined.
N = Integer(ENV.fetch("N", "5000"))
stop = false
threads = N.times.map { Thread.new { Thread.pass until stop } }
stop = true
threads.each(&:join)
raise "alive" if threads.any?(&:alive?)
