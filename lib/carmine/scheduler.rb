# frozen_string_literal: true
#
# Carmine::Scheduler — a fiber scheduler (Fiber.set_scheduler) over epoll.
#
#   require "carmine/scheduler"
#   Fiber.set_scheduler(Carmine::Scheduler.new)
#   Fiber.schedule { ... }   # each fiber runs until it would block, then others run
#   # the program's end (or Fiber.set_scheduler(nil)) runs the loop until all are done
#
# The loop runs in the fiber that made the scheduler (usually the thread's root fiber);
# a fiber that must wait transfers to it, and the loop transfers back when the wait ends.
#
# Invariants:
# - A suspended fiber waits for exactly one thing at a time: a descriptor (in the native
#   Carmine::Selector), a timer (@timers), or an unblock (@ready). Whatever resumes it, the
#   fiber's own `ensure` withdraws it from the other two, so no stale wake-up survives the
#   wait it was meant for.
# - @timers is sorted by deadline; entries are [deadline, id, fiber or Proc], live while
#   @timer_ids holds their id.
# - `unblock` may be called from any thread: @ready is guarded by @lock and a call from
#   another thread wakes the selector.
#
# The selector is Carmine::Selector (epoll) unless another object with the same methods
# (register, deregister, select, wakeup, waiting?, close) is given; the scheduler itself is
# plain Ruby and also runs on CRuby (bench/io uses it there with an IO.select selector).
module Carmine
  class Scheduler
    def initialize(selector = Carmine::Selector.new)
      @loop = Fiber.current
      @thread = Thread.current
      @selector = selector
      @timers = []
      @timer_ids = {}
      @next_timer = 0
      @ready = {}.compare_by_identity
      @lock = Thread::Mutex.new
      @blocked = 0
      @closed = false
    end

    # -- hooks called by the VM --

    # Waits until +io+ is ready for +events+ (IO::READABLE / PRIORITY / WRITABLE bits);
    # returns the ready events, or false when +timeout+ seconds passed first.
    def io_wait(io, events, timeout = nil)
      fiber = Fiber.current
      @selector.register(io, events, fiber)
      timer = add_timer(timeout, fiber) if timeout
      @loop.transfer
    ensure
      @selector.deregister(io, fiber)
      cancel_timer(timer) if timer
    end

    # sleep / Mutex#sleep: a timer, or an unblock when no duration is given.
    def kernel_sleep(duration = nil)
      block(:sleep, duration)
      true
    end

    # Mutex, Queue, ConditionVariable, Thread#join: waits until `unblock` (or +timeout+).
    def block(blocker, timeout = nil)
      fiber = Fiber.current
      if timeout
        timer = add_timer(timeout, fiber)
      else
        @blocked += 1
      end
      @loop.transfer
    ensure
      if timer
        cancel_timer(timer)
      elsif timeout.nil?
        @blocked -= 1
      end
      @lock.synchronize { @ready.delete(fiber) } if fiber
    end

    # Makes a fiber blocked in `block` runnable; safe from any thread.
    def unblock(blocker, fiber)
      @lock.synchronize { @ready[fiber] = true }
      @selector.wakeup unless Thread.current.equal?(@thread)
      nil
    end

    # Fiber.schedule: the new fiber runs at once, until it first waits.
    def fiber(&block)
      f = Fiber.new(blocking: false, &block)
      current = Fiber.current
      # A fiber that schedules another resumes when that one first waits (or ends).
      @lock.synchronize { @ready[current] = true } unless current.equal?(@loop)
      f.transfer
      f
    end

    # Timeout.timeout: raises +klass+ with +message+ in the calling fiber after +duration+.
    def timeout_after(duration, klass, message)
      fiber = Fiber.current
      timer = add_timer(duration, proc { fiber.raise(klass, message) if fiber.alive? })
      begin
        yield duration
      ensure
        cancel_timer(timer)
      end
    end

    # Process.wait and friends: waits in a thread, so the other fibers go on.
    def process_wait(pid, flags)
      Thread.new { Process::Status.wait(pid, flags) }.value
    end

    # Name resolution (getaddrinfo blocks): done in a thread.
    def address_resolve(hostname)
      Thread.new { Addrinfo.getaddrinfo(hostname, nil).map(&:ip_address).uniq }.value
    end

    # IO.select from a fiber: waits in a thread (IO.select there blocks only that thread).
    def io_select(readables, writables, exceptables, timeout)
      Thread.new { IO.select(readables, writables, exceptables, timeout) }.value
    end

    # Called when the scheduler is replaced, at the end of its thread or the program: runs
    # until every fiber is done.
    def scheduler_close
      return if @closed
      run
    ensure
      unless @closed
        @closed = true
        @selector.close
      end
    end

    # Closes the scheduler as Fiber.set_scheduler(nil) does when it is the current one.
    # (Rubies before 3.3 call `close` from set_scheduler while the scheduler is still set:
    # the second call closes.)
    def close
      if Fiber.scheduler.equal?(self) && !@closing
        @closing = true
        Fiber.set_scheduler(nil)
      else
        scheduler_close
      end
    end

    def closed?
      @closed
    end

    # -- the loop --

    # Runs until no fiber waits for anything.
    def run
      raise FiberError, "Carmine::Scheduler#run must be called from the fiber that made the scheduler" unless Fiber.current.equal?(@loop)
      while @blocked > 0 || !@timer_ids.empty? || !@ready.empty? || @selector.waiting?
        run_once
      end
    end

    # One turn: descriptors that became ready, expired timers, unblocked fibers.
    def run_once
      timeout = @ready.empty? ? next_timeout : 0
      ready = @selector.select(timeout)
      i = 0
      while i < ready.size
        fiber = ready[i]
        fiber.transfer(ready[i + 1]) if fiber.alive?
        i += 2
      end
      fire_timers unless @timers.empty?
      unless @ready.empty?
        runnable = @lock.synchronize do
          r = @ready
          @ready = {}.compare_by_identity
          r
        end
        runnable.each_key { |f| f.transfer if f.alive? }
      end
    end

    private

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Seconds until the first timer (nil: none).
    def next_timeout
      @timers.shift while (first = @timers.first) && !@timer_ids.key?(first[1])
      return nil unless first
      d = first[0] - now
      d < 0 ? 0 : d
    end

    def add_timer(seconds, target)
      id = (@next_timer += 1)
      deadline = now + seconds
      entry = [deadline, id, target]
      i = @timers.bsearch_index { |t| t[0] > deadline } || @timers.size
      @timers.insert(i, entry)
      @timer_ids[id] = true
      # Cancelled timers wait for their deadline; drop them when they outnumber live ones.
      @timers.select! { |e| @timer_ids.key?(e[1]) } if @timers.size > 2 * @timer_ids.size + 64
      id
    end

    def cancel_timer(id)
      @timer_ids.delete(id)
    end

    # Runs the timers that are due: a fiber resumes (a timed-out wait returns false), a
    # Proc is called.
    def fire_timers
      t = now
      while (first = @timers.first) && first[0] <= t
        @timers.shift
        next unless @timer_ids.delete(first[1])
        target = first[2]
        if target.is_a?(Proc)
          target.call
        elsif target.alive?
          target.transfer(false)
        end
      end
    end
  end
end
