# The selector of Carmine::Scheduler (lib/carmine/scheduler.rb) written in plain Ruby over
# IO.select, for Rubies without Carmine::Selector: the scheduler benchmarks run the same
# scheduler on CRuby with this, the best we could do there without a C extension.
class SelectSelector
  def initialize
    @readers = {}   # io => fiber
    @writers = {}
    @wake_r, @wake_w = IO.pipe
  end

  def register(io, events, fiber)
    @readers[io] = fiber if events & IO::READABLE != 0
    @writers[io] = fiber if events & IO::WRITABLE != 0
    true
  end

  def deregister(io, fiber)
    r = @readers[io].equal?(fiber) && @readers.delete(io)
    w = @writers[io].equal?(fiber) && @writers.delete(io)
    !!(r || w)
  end

  # [fiber, events, ...] of the ready descriptors, waiting up to +timeout+ (nil: forever).
  def select(timeout)
    r, w = IO.select(@readers.keys << @wake_r, @writers.keys, nil, timeout)
    out = []
    r&.each do |io|
      if io.equal?(@wake_r)
        @wake_r.read_nonblock(4096, exception: false)
      elsif (f = @readers.delete(io))
        out << f << IO::READABLE
      end
    end
    w&.each { |io| (f = @writers.delete(io)) && (out << f << IO::WRITABLE) }
    out
  end

  def wakeup = @wake_w.write_nonblock(".", exception: false)
  def waiting? = !(@readers.empty? && @writers.empty?)

  def close
    @wake_r.close
    @wake_w.close
  end
end
