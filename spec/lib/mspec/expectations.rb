# Expectations: `actual.should(matcher)`, `actual.should == x`,
# `actual.should.predicate?(args)`, `proc.should.raise(Klass, message)` and
# their `should_not` forms.
#
# `should` without an argument returns an operator proxy (a BasicObject, so
# nearly every method reaches `method_missing`): comparison operators compare
# the actual value, `raise` runs the actual value as a block, and any other
# method is sent to the actual value and must return a truthy (or, for
# `should_not`, a falsy) result. A failed expectation raises
# SpecExpectationNotMetError, which the runner counts as a failure; any other
# exception is an error.

class SpecExpectationNotMetError < StandardError
end

module MSpec
  # Marker for "no matcher argument given" (nil is a valid actual value).
  NO_MATCHER = Object.new

  def self.inspect_value(value)
    s = value.inspect
    s.is_a?(String) ? s : Kernel.instance_method(:inspect).bind(value).call
  rescue Exception
    begin
      "#<#{Kernel.instance_method(:class).bind(value).call}>"
    rescue Exception
      '#<object>'
    end
  end

  def self.inspect_args(args)
    return '' if args.empty?
    '(' + args.map { |a| inspect_value(a) }.join(', ') + ')'
  end

  def self.expectation!
    @expectations = (@expectations || 0) + 1
  end
end

module SpecExpectation
  def self.fail_with(expected, actual = nil)
    message = actual ? "#{expected}\n#{actual}" : expected.to_s
    raise SpecExpectationNotMetError, message
  end

  # `should` on a matcher-based expectation: the matcher answers `matches?`
  # and provides `failure_message`/`negative_failure_message` as two lines.
  def self.check(actual, matcher, positive)
    MSpec.expectation!
    if positive
      unless matcher.matches?(actual)
        fail_with(*matcher.failure_message)
      end
    else
      if matcher.matches?(actual)
        fail_with(*matcher.negative_failure_message)
      end
      if matcher.respond_to?(:unrelated) && matcher.unrelated
        raise matcher.unrelated
      end
    end
    true
  end
end

module MSpec
  # Shared behaviour of the two operator proxies; `@positive` decides which
  # outcome of each check is a success.
  class OperatorProxy < BasicObject
    def initialize(actual, positive)
      @actual = actual
      @positive = positive
    end

    def ==(expected)
      __check(@actual == expected, 'to equal', expected)
    end

    def !=(expected)
      __check(@actual != expected, 'not to equal', expected)
    end

    def equal?(expected)
      __check(@actual.equal?(expected), 'to be identical to', expected)
    end

    def eql?(expected)
      __check(@actual.eql?(expected), 'to be eql? to', expected)
    end

    def =~(expected)
      __check(@actual =~ expected, 'to match', expected)
    end

    def !~(expected)
      __check(@actual !~ expected, 'not to match', expected)
    end

    def ===(expected)
      __check(@actual === expected, 'to be === to', expected)
    end

    def <(expected)
      __check(@actual < expected, 'to be less than', expected)
    end

    def <=(expected)
      __check(@actual <= expected, 'to be less than or equal to', expected)
    end

    def >(expected)
      __check(@actual > expected, 'to be greater than', expected)
    end

    def >=(expected)
      __check(@actual >= expected, 'to be greater than or equal to', expected)
    end

    # `-> { ... }.should.raise(Klass, message) { |e| ... }`; the message may
    # also be given as `message:`.
    def raise(klass = ::Exception, message = nil, **options, &block)
      message = options[:message] if options.key?(:message)
      matcher = ::MSpec::RaiseErrorMatcher.new(klass, message, &block)
      ::SpecExpectation.check(@actual, matcher, @positive)
    end

    def method_missing(name, *args, &block)
      ::MSpec.expectation!
      result = @actual.__send__(name, *args, &block)
      if !result == @positive
        ::SpecExpectation.fail_with(
          "Expected #{::MSpec.inspect_value(@actual)}.#{name}#{::MSpec.inspect_args(args)}",
          "to be #{@positive ? 'truthy' : 'falsy'} but was #{::MSpec.inspect_value(result)}")
      end
      true
    end
    ruby2_keywords(:method_missing) if respond_to?(:ruby2_keywords, true)

    def __check(result, relation, expected)
      ::MSpec.expectation!
      if !result == @positive
        ::SpecExpectation.fail_with(
          "Expected #{::MSpec.inspect_value(@actual)}",
          "#{@positive ? '' : 'not '}#{relation} #{::MSpec.inspect_value(expected)}")
      end
      true
    end
  end
end

class Object
  def should(matcher = MSpec::NO_MATCHER)
    if MSpec::NO_MATCHER.equal?(matcher)
      MSpec::OperatorProxy.new(self, true)
    else
      SpecExpectation.check(self, matcher, true)
    end
  end

  def should_not(matcher = MSpec::NO_MATCHER)
    if MSpec::NO_MATCHER.equal?(matcher)
      MSpec::OperatorProxy.new(self, false)
    else
      SpecExpectation.check(self, matcher, false)
    end
  end
end
