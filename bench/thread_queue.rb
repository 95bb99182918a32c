# Threads: a producer and a consumer hand N integers over a Thread::Queue, so every item
# crosses threads (the giant lock changes hands, or the consumer sleeps and is woken).
N = Integer(ENV.fetch("N", "1000000"))
q = Thread::Queue.new
consumer = Thread.new do
  sum = 0
  while (v = q.pop)
    sum += v
  end
  sum
end
N.times { |i| q << i }
q.close
raise "wrong sum" unless consumer.value == N * (N - 1) / 2
