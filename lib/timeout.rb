# frozen_string_literal: true
#
# Timeout.timeout(sec, klass = nil, message = nil) { |sec| ... }: runs the block and
# interrupts it when it takes longer than +sec+ seconds, the way Ruby's bundled timeout
# library behaves.
#
# - Without a class, the block is interrupted by a private exception that is turned into
#   Timeout::Error ("execution expired") where it leaves Timeout.timeout, so a `rescue
#   Timeout::Error` inside the block cannot swallow the interruption of an outer timeout.
# - With a class, that class is raised inside the block with +message+.
# - A non-blocking fiber whose fiber scheduler implements `timeout_after` hands the whole
#   operation to the scheduler (`timeout_after(sec, klass, message, &block)`), as CRuby does.
# - Otherwise one watcher thread per call sleeps for +sec+ and raises in the caller, unless
#   the block finished first (decided under a lock, so a finished block is never interrupted).

module Timeout
  VERSION = "0.4.1"

  # Raised when a block times out.
  class Error < RuntimeError
    def self.handle_timeout(message) # :nodoc:
      exc = ExitException.new(message)
      begin
        yield exc
      rescue ExitException => e
        raise new(message) if exc.equal?(e)
        raise
      end
    end
  end

  # The private exception that interrupts a block timed out without a class of its own.
  class ExitException < Exception
    def exception(*) # :nodoc:
      self
    end
  end

  def timeout(sec, klass = nil, message = nil, &block)
    return yield(sec) if sec.nil? || sec.zero?
    raise ArgumentError, "Timeout sec must be a non-negative number" if sec.negative?

    message ||= "execution expired"

    if Fiber.respond_to?(:current_scheduler) && (scheduler = Fiber.current_scheduler)&.respond_to?(:timeout_after)
      return scheduler.timeout_after(sec, klass || Error, message, &block)
    end

    if klass
      Timeout.__send__(:run_with_watcher, sec, klass, message, &block)
    else
      Error.handle_timeout(message) do |exc|
        Timeout.__send__(:run_with_watcher, sec, exc, message, &block)
      end
    end
  end
  module_function :timeout

  # Runs the block while a watcher thread waits +sec+ seconds and then raises +exc+ (a class
  # with +message+, or an exception object) in the calling thread, unless the block ended.
  def self.run_with_watcher(sec, exc, message)
    caller_thread = Thread.current
    lock = Thread::Mutex.new
    done = false
    watcher = Thread.new do
      sleep sec
      lock.synchronize do
        unless done
          done = true
          if exc.is_a?(Class)
            caller_thread.raise(exc, message)
          else
            caller_thread.raise(exc)
          end
        end
      end
    end
    watcher.name = "Timeout watcher" if watcher.respond_to?(:name=)
    watcher.report_on_exception = false
    begin
      yield(sec)
    ensure
      lock.synchronize { done = true }
      watcher.kill
    end
  end
  private_class_method :run_with_watcher
end
