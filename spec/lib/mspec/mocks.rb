# Mocks: `mock(name)`, `obj.should_receive(:m)`, `should_not_receive`,
# `stub!`, with `.with(args)`, `.and_return(values)`, `.and_raise`,
# `.and_yield`, and call counts (`.once`, `.exactly(n).times`,
# `.at_least(n)`, `.at_most(n)`, `.any_number_of_times`).
#
# An expectation replaces the method by a singleton method of the object
# that dispatches to Mock.dispatch. Calls are counted; the counts are
# verified after each example (Mock.verify) and every replaced method is then
# removed again, restoring an original singleton method if there was one
# (Mock.reset). A call whose arguments match no expectation fails at once.

module Mock
  class Expectation
    attr_reader :object, :name, :calls, :stub

    def initialize(object, name, stub)
      @object = object
      @name = name
      @stub = stub
      @count = stub ? [:any, 0] : [:exactly, 1]
      @args = nil
      @returns = nil
      @raises = nil
      @yields = nil
      @calls = 0
    end

    def with(*args)
      @args = args
      self
    end
    ruby2_keywords(:with) if respond_to?(:ruby2_keywords, true)

    def exactly(n)
      @count = [:exactly, Mock.count_value(n)]
      self
    end

    def at_least(n)
      @count = [:at_least, Mock.count_value(n)]
      self
    end

    def at_most(n)
      @count = [:at_most, Mock.count_value(n)]
      self
    end

    def once
      exactly(1)
    end

    def twice
      exactly(2)
    end

    def times
      self
    end

    def any_number_of_times
      @count = [:any, 0]
      self
    end

    def and_return(*values)
      @returns = values
      self
    end

    def and_raise(exception)
      @raises = exception
      self
    end

    def and_yield(*values)
      (@yields ||= []) << values
      self
    end

    def never
      exactly(0)
    end

    def args_match?(args)
      @args.nil? || @args == args || (@args == [:any_args])
    end

    def expected_args_text
      @args.nil? ? '(any args)' : MSpec.inspect_args(@args)
    end

    # Runs one call: counts it and produces the configured effect.
    def call(args, block)
      @calls += 1
      if @yields
        unless block
          SpecExpectation.fail_with(
            "Mock '#{Mock.name_of(@object)}' asked to yield #{MSpec.inspect_value(@yields)}",
            'but no block was passed')
        end
        result = nil
        @yields.each { |values| result = block.call(*values) }
      end
      raise @raises if @raises
      return result if @yields && @returns.nil?
      return nil unless @returns
      index = @calls - 1
      index = @returns.size - 1 if index >= @returns.size
      @returns[index]
    end

    def verify
      kind, n = @count
      ok = case kind
           when :exactly then @calls == n
           when :at_least then @calls >= n
           when :at_most then @calls <= n
           else true
           end
      return if ok
      what = kind == :exactly ? "exactly #{n}" : "#{kind.to_s.sub('_', ' ')} #{n}"
      SpecExpectation.fail_with(
        "Mock '#{Mock.name_of(@object)}' expected to receive '#{@name}' #{what} times",
        "but received it #{@calls} times")
    end
  end

  @expectations = []
  @replaced = []

  def self.count_value(n)
    case n
    when :once then 1
    when :twice then 2
    else n
    end
  end

  def self.name_of(obj)
    obj.is_a?(MockObject) ? obj.__mock_name : MSpec.inspect_value(obj)
  end

  def self.install(obj, name, stub)
    name = name.to_sym
    unless @replaced.any? { |r| r[0].equal?(obj) && r[1] == name }
      sc = obj.singleton_class
      original = nil
      own = sc.instance_methods(false) + sc.private_instance_methods(false)
      if own.include?(name)
        original = :"__mspec_original_#{name}"
        sc.send(:alias_method, original, name)
      end
      visibility = if sc.private_method_defined?(name) then :private
                   elsif sc.protected_method_defined?(name) then :protected
                   end
      sc.send(:define_method, name) do |*args, &block|
        Mock.dispatch(self, name, args, block)
      end
      sc.send(visibility, name) if visibility
      @replaced << [obj, name, original]
    end
    expectation = Expectation.new(obj, name, stub)
    @expectations << expectation
    expectation
  end

  def self.dispatch(obj, name, args, block)
    candidates = @expectations.select { |e| e.object.equal?(obj) && e.name == name }
    # Later expectations take precedence; among them the first whose
    # arguments match.
    match = candidates.reverse.find { |e| e.args_match?(args) }
    unless match
      expected = candidates.map { |e| e.expected_args_text }.join(' or ')
      actual = args.empty? ? '()' : MSpec.inspect_args(args)
      SpecExpectation.fail_with(
        "Mock '#{name_of(obj)}' expected to receive '#{name}' with #{expected}",
        "but received it with #{actual}")
    end
    match.call(args, block)
  end

  # Checks every expectation of the example; raises the first failure.
  def self.verify
    @expectations.each { |e| e.verify unless e.stub }
  end

  def self.reset
    @replaced.reverse_each do |obj, name, original|
      begin
        sc = obj.singleton_class
        sc.send(:remove_method, name)
        if original
          sc.send(:alias_method, name, original)
          sc.send(:remove_method, original)
        end
      rescue Exception
        # The object may have been frozen or its class changed by the spec.
      end
    end
    @replaced = []
    @expectations = []
  end
end

class MockObject
  def initialize(name, options = {})
    @__mock_name = name
    @__null = options[:null_object]
  end

  def __mock_name
    @__mock_name
  end

  # As in mspec: no respond_to_missing?, so a mock answers only what it defines (specs
  # give mocks their own respond_to?/method_missing to test implicit conversions).
  def method_missing(sym, *args, &block)
    @__null ? self : super
  end
  private :method_missing

  def inspect
    "#<MockObject:#{@__mock_name}>"
  end
end

class NumericMockObject < Numeric
  def initialize(name, options = {})
    @__mock_name = name
    @__null = options[:null_object]
  end

  def __mock_name
    @__mock_name
  end

  def inspect
    "#<NumericMockObject:#{@__mock_name}>"
  end

  def singleton_method_added(name)
  end
end

class Object
  def should_receive(name)
    MSpec.expectation!
    Mock.install(self, name, false)
  end

  def should_not_receive(name)
    MSpec.expectation!
    Mock.install(self, name, false).exactly(0)
  end

  def stub!(name)
    Mock.install(self, name, true)
  end

  private

  def mock(name = 'mock', options = {})
    MockObject.new(name, options)
  end

  def mock_numeric(name = 'mock', options = {})
    NumericMockObject.new(name, options)
  end

  # An object whose #to_int returns `value`; #to_int must be called.
  def mock_int(value)
    m = MockObject.new("mock_int #{MSpec.inspect_value(value)}")
    m.should_receive(:to_int).at_least(1).and_return(value)
    m
  end

  def mock_to_path(path)
    m = MockObject.new("mock_to_path #{MSpec.inspect_value(path)}")
    m.should_receive(:to_path).and_return(path)
    m
  end
end
