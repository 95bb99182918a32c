# A small assertion library for Carmine's Ruby-level tests.
#
# Usage (each test file):
#   require_relative "../assert"
#   test "Array#push appends" do
#     assert_equal [1, 2], [1].push(2)
#   end
#
# Each `test` block runs in isolation: a failure or an unexpected exception is recorded and
# the next test runs. At exit the file prints "N tests, M failures" and exits 1 if any
# failed, so the suite runner only needs the exit status.

module Assert
  class Failure < StandardError; end

  @tests = 0
  @failures = []

  class << self
    attr_reader :failures

    def run(name)
      @tests += 1
      yield
    rescue Failure => e
      @failures << "#{name}: #{e.message}"
    rescue Exception => e
      raise if e.is_a?(SystemExit)
      @failures << "#{name}: unexpected #{e.class}: #{e.message}\n    #{(e.backtrace || []).first(3).join("\n    ")}"
    end

    def report
      @failures.each { |f| $stderr.puts "FAIL #{f}" }
      puts "#{@tests} tests, #{@failures.size} failures"
      # exit! skips the buffered-output flush (and later at_exit handlers), so flush first.
      $stdout.flush
      $stderr.flush
      exit!(@failures.empty? ? 0 : 1)
    end
  end

  def assert(cond, msg = "assertion failed")
    raise Failure, msg unless cond
    true
  end

  def assert_equal(expected, actual, msg = nil)
    return true if expected == actual
    raise Failure, (msg || "expected #{expected.inspect}, got #{actual.inspect}")
  end

  def assert_not_equal(a, b, msg = nil)
    raise Failure, (msg || "expected #{a.inspect} != #{b.inspect}") if a == b
    true
  end

  def assert_same(expected, actual)
    raise Failure, "expected the same object as #{expected.inspect}, got #{actual.inspect}" unless expected.equal?(actual)
    true
  end

  def assert_nil(v, msg = nil)
    raise Failure, (msg || "expected nil, got #{v.inspect}") unless v.nil?
    true
  end

  def assert_true(v)
    assert_equal true, v
  end

  def assert_false(v)
    assert_equal false, v
  end

  def assert_match(re, str)
    raise Failure, "expected #{str.inspect} to match #{re.inspect}" unless re =~ str
    true
  end

  def assert_kind_of(klass, v)
    raise Failure, "expected a #{klass}, got #{v.inspect} (#{v.class})" unless v.is_a?(klass)
    true
  end

  # Runs the block and expects it to raise `klass` (and a message matching `message`).
  def assert_raise(klass = StandardError, message = nil)
    begin
      yield
    rescue klass => e
      if message
        ok = message.is_a?(Regexp) ? message =~ e.message : message == e.message
        raise Failure, "expected message #{message.inspect}, got #{e.message.inspect}" unless ok
      end
      return e
    rescue Exception => e
      raise Failure, "expected #{klass}, got #{e.class}: #{e.message}"
    end
    raise Failure, "expected #{klass} to be raised, nothing was raised"
  end

  def assert_nothing_raised
    yield
  rescue Exception => e
    raise Failure, "unexpected #{e.class}: #{e.message}"
  end

  # Runs Ruby source in a separate carmine process; returns [stdout, stderr, status].
  def run_carmine(source, *args)
    require_relative "support/process"
    Support.run_carmine(source, *args)
  end
end

include Assert

def test(name, &block)
  Assert.run(name, &block)
end

at_exit { Assert.report }
