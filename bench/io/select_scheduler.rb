# A fiber scheduler in plain Ruby over IO.select: the best we could write for CRuby, which
# ships none. Used by the scheduler benchmarks for the Rubies without Carmine::Scheduler.
# Same structure as lib/carmine/scheduler.rb: the loop runs in the fiber that made the
# scheduler; waiting fibers transfer to it and it transfers back.
class SelectScheduler
  def initialize
    @loop = Fiber.current
    @readable = {}
    @writable = {}
    @timers = []            # [deadline, id, fiber], sorted
    @live = {}              # live timer ids
    @ids = 0
    @ready = {}.compare_by_identity
    @lock = Thread::Mutex.new
    @blocked = 0
    @urgent_r, @urgent_w = IO.pipe
    @closed = false
  end

  def io_wait(io, events, timeout = nil)
    fiber = Fiber.current
    @readable[io] = fiber if events & IO::READABLE != 0
    @writable[io] = fiber if events & IO::WRITABLE != 0
    timer = add_timer(timeout, fiber) if timeout
    @loop.transfer
  ensure
    @readable.delete(io) if @readable[io].equal?(fiber)
    @writable.delete(io) if @writable[io].equal?(fiber)
    @live.delete(timer) if timer
  end

  def kernel_sleep(duration = nil)
    block(:sleep, duration)
    true
  end

  def block(blocker, timeout = nil)
    fiber = Fiber.current
    timeout ? (timer = add_timer(timeout, fiber)) : (@blocked += 1)
    @loop.transfer
  ensure
    timer ? @live.delete(timer) : (@blocked -= 1 if timeout.nil?)
    @lock.synchronize { @ready.delete(fiber) } if fiber
  end

  def unblock(blocker, fiber)
    @lock.synchronize { @ready[fiber] = true }
    @urgent_w.write_nonblock(".", exception: false)
  end

  def fiber(&block)
    f = Fiber.new(blocking: false, &block)
    current = Fiber.current
    @lock.synchronize { @ready[current] = true } unless current.equal?(@loop)
    f.transfer
    f
  end

  def close
    return if @closed
    run
  ensure
    @closed = true
  end

  def run
    while @blocked > 0 || !@live.empty? || !@ready.empty? || !@readable.empty? || !@writable.empty?
      run_once
    end
  end

  def run_once
    timeout = @ready.empty? ? next_timeout : 0
    r, w = IO.select(@readable.keys << @urgent_r, @writable.keys, nil, timeout)
    r&.each do |io|
      if io.equal?(@urgent_r)
        @urgent_r.read_nonblock(4096, exception: false)
      elsif (f = @readable[io])
        f.transfer(IO::READABLE)
      end
    end
    w&.each { |io| (f = @writable[io]) && f.transfer(IO::WRITABLE) }
    fire_timers unless @timers.empty?
    return if @ready.empty?
    runnable = @lock.synchronize { x = @ready; @ready = {}.compare_by_identity; x }
    runnable.each_key { |f| f.transfer if f.alive? }
  end

  private

  def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

  def next_timeout
    @timers.shift while (first = @timers.first) && !@live.key?(first[1])
    first && [first[0] - now, 0].max
  end

  def add_timer(seconds, fiber)
    id = (@ids += 1)
    deadline = now + seconds
    i = @timers.bsearch_index { |t| t[0] > deadline } || @timers.size
    @timers.insert(i, [deadline, id, fiber])
    @live[id] = true
    id
  end

  def fire_timers
    t = now
    while (first = @timers.first) && first[0] <= t
      @timers.shift
      first[2].transfer(false) if @live.delete(first[1]) && first[2].alive?
    end
  end
end
