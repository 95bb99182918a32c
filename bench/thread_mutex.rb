# Threads: 4 threads each add 1 to a shared counter N/4 times inside Mutex#synchronize.
N = Integer(ENV.fetch("N", "4000000"))
m = Thread::Mutex.new
count = 0
threads = 4.times.map do
  Thread.new do
    (N / 4).times { m.synchronize { count += 1 } }
  end
end
threads.each(&:join)
raise "wrong count" unless count == N / 4 * 4
