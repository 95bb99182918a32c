# The spec tree and its runner: describe/context/it/specify, before/after
# hooks (:each and :all), shared describes (`describe :name, shared: true`)
# included with it_behaves_like, and result reporting.
#
# Invariants:
# - MSpec.current is the context whose block is being evaluated (nil at the
#   top level of a file). `describe` inside it adds a child context; a
#   top-level describe is evaluated and then run at once.
# - Items of a context (examples and child contexts) run in definition order.
#   before(:all) runs once before them and after(:all) once after them, only
#   if the context contains at least one example.
# - For an example, before(:each) hooks run outermost first, after(:each)
#   innermost first; mocks are verified and then reset after the after hooks.
# - `it_behaves_like :name, meth, obj` evaluates the shared block inside an
#   unnamed child context whose before(:all) sets @method and @object;
#   `it_should_behave_like :name` does the same without touching them.

# The class of the object examples run on (specs name it in messages).
class MSpecEnv
end

module MSpec
  class Example
    attr_reader :description, :block, :context

    def initialize(description, context, block)
      @description = description
      @context = context
      @block = block
    end

    def full_description
      [@context.full_description, @description].reject { |s| s.nil? || s.empty? }.join(' ')
    end
  end

  class Context
    attr_reader :description, :parent, :items, :hooks
    attr_accessor :load_error

    def initialize(description, parent)
      @description = description
      @parent = parent
      @items = []
      @hooks = { before_each: [], before_all: [], after_each: [], after_all: [] }
      @load_error = nil
    end

    def full_description
      parts = []
      ctx = self
      while ctx
        parts.unshift(ctx.description) if ctx.description && !ctx.description.empty?
        ctx = ctx.parent
      end
      parts.join(' ')
    end

    def befores_each
      (@parent ? @parent.befores_each : []) + @hooks[:before_each]
    end

    def afters_each
      @hooks[:after_each] + (@parent ? @parent.afters_each : [])
    end

    def examples
      list = []
      @items.each do |item|
        if item.is_a?(Context)
          list.concat(item.examples)
        else
          list << item
        end
      end
      list
    end
  end

  # Writes one line per result to the results file (spec/run reads it) and
  # keeps the totals for the summary line.
  class Reporter
    attr_reader :passed, :failed, :errors

    def initialize(path)
      @file = path ? File.open(path, 'ab') : nil
      @passed = 0
      @failed = 0
      @errors = 0
      @failures = []
    end

    def escape(s)
      s.to_s.gsub(/[\\\n\t\r]/) do |c|
        case c
        when "\\" then "\\\\"
        when "\n" then "\\n"
        when "\t" then "\\t"
        else "\\r"
        end
      end
    end

    def emit(fields)
      return unless @file
      @file.write(fields.map { |f| escape(f) }.join("\t") + "\n")
      @file.flush
    end

    def pass(description)
      @passed += 1
      emit(['P', description])
    end

    def exception(description, e)
      failure = e.is_a?(SpecExpectationNotMetError)
      if failure
        @failed += 1
      else
        @errors += 1
      end
      message = MSpec.describe_exception(e, failure)
      trace = MSpec.filtered_backtrace(e)
      @failures << [failure ? 'FAILED' : 'ERROR', description, message, trace]
      emit([failure ? 'F' : 'E', description, message, trace.join("\n")])
    end

    def summary
      total = @passed + @failed + @errors
      "#{total} examples, #{@passed} passed, #{@failed} failures, #{@errors} errors"
    end

    def print_failures(io)
      @failures.each_with_index do |(kind, description, message, trace), i|
        io.write("\n#{i + 1})\n#{description} #{kind}\n#{message}\n")
        trace.each { |line| io.write("  #{line}\n") }
      end
    end

    def close
      @file.close if @file
    end
  end

  @current = nil
  @shared = {}
  @env = nil

  class << self
    attr_accessor :current, :reporter
  end

  def self.env
    @env ||= MSpecEnv.new
  end

  def self.describe_exception(e, failure)
    if failure
      e.message.to_s
    else
      "#{e.class}: #{e.message}"
    end
  rescue Exception
    "#{e.class} (message unavailable)"
  end

  def self.filtered_backtrace(e)
    trace = e.backtrace || []
    trace = trace.reject { |line| line.include?('/spec/lib/mspec') }
    trace.first(12)
  rescue Exception
    []
  end

  def self.description_of(mod, desc)
    first = mod.is_a?(Module) ? mod.name.to_s : mod.to_s
    return first if desc.nil?
    desc = desc.to_s
    if desc.start_with?('#', '.', '::')
      "#{first}#{desc}"
    else
      "#{first} #{desc}"
    end
  end

  def self.describe(mod, desc, options, block)
    if options[:shared]
      @shared[mod] = block
      @shared[mod.to_s] = block
      return
    end
    ctx = Context.new(description_of(mod, desc), @current)
    if @current
      @current.items << ctx
      evaluate(ctx, block)
    else
      evaluate(ctx, block)
      run_context(ctx)
    end
    ctx
  end

  def self.evaluate(ctx, block, *args)
    saved = @current
    @current = ctx
    begin
      env.instance_exec(*args, &block)
    rescue SkipExample
      nil
    rescue Exception => e
      ctx.load_error = e
    ensure
      @current = saved
    end
  end

  def self.current!(what)
    return @current if @current
    raise ArgumentError, "#{what} called outside of a describe block"
  end

  def self.add_example(description, block)
    ctx = current!('it')
    ctx.items << Example.new(description.to_s, ctx, block) if block
  end

  def self.add_hook(kind, which, block)
    which = :each if which.nil?
    unless which == :each || which == :all
      raise ArgumentError, "unknown hook scope #{which.inspect} (use :each or :all)"
    end
    current!(kind.to_s).hooks[:"#{kind}_#{which}"] << block
  end

  # `set_vars` is false for it_should_behave_like, which keeps the @method and
  # @object of the enclosing shared describe.
  def self.behaves_like(name, meth, obj, set_vars = true)
    block = @shared[name] || @shared[name.to_s]
    raise ArgumentError, "Unable to find shared describe for #{name}" unless block
    parent = current!('it_behaves_like')
    ctx = Context.new(nil, parent)
    parent.items << ctx
    if set_vars
      ctx.hooks[:before_all] << proc do
        @method = meth
        @object = obj
      end
    end
    evaluate(ctx, block)
  end

  def self.run_hook(block)
    env.instance_exec(&block)
  end

  def self.run_context(ctx)
    if ctx.load_error
      reporter.exception("#{ctx.full_description} (while evaluating the describe block)", ctx.load_error)
    end
    return if ctx.examples.empty?
    begin
      ctx.hooks[:before_all].each { |b| run_hook(b) }
    rescue SkipExample
      return
    rescue Exception => e
      ctx.examples.each { |ex| reporter.exception("#{ex.full_description} (before :all)", e) }
      Mock.reset
      return
    end
    ctx.items.each do |item|
      if item.is_a?(Context)
        run_context(item)
      else
        run_example(item)
      end
    end
    ctx.hooks[:after_all].each do |b|
      begin
        run_hook(b)
      rescue Exception => e
        reporter.exception("#{ctx.full_description} (after :all)", e)
      end
    end
    Mock.reset
  end

  def self.run_example(ex)
    error = nil
    skipped = false
    begin
      ex.context.befores_each.each { |b| run_hook(b) }
      env.instance_exec(&ex.block)
    rescue SkipExample
      skipped = true
    rescue Exception => e
      error = e
    end
    ex.context.afters_each.each do |b|
      begin
        run_hook(b)
      rescue Exception => e
        error ||= e
      end
    end
    begin
      Mock.verify unless error || skipped
    rescue Exception => e
      error = e
    ensure
      Mock.reset
    end
    return if skipped
    if error
      reporter.exception(ex.full_description, error)
    else
      reporter.pass(ex.full_description)
    end
  end
end

# `SpecEvaluate.desc = "for definition"` sets the prefix of the descriptions
# of the examples that `evaluate` creates afterwards.
module SpecEvaluate
  @desc = 'for definition'

  class << self
    attr_accessor :desc
  end
end

class Object
  private

  def describe(mod, desc = nil, options = nil, &block)
    if desc.is_a?(Hash) && options.nil?
      options = desc
      desc = nil
    end
    MSpec.describe(mod, desc, options || {}, block)
  end

  def context(mod, desc = nil, options = nil, &block)
    describe(mod, desc, options, &block)
  end

  def it(description = nil, &block)
    MSpec.add_example(description, block)
  end

  def specify(description = nil, &block)
    MSpec.add_example(description, block)
  end

  def before(which = :each, &block)
    MSpec.add_hook(:before, which, block)
  end

  def after(which = :each, &block)
    MSpec.add_hook(:after, which, block)
  end

  def it_behaves_like(name, meth = nil, obj = nil)
    MSpec.behaves_like(name, meth, obj)
  end

  def it_should_behave_like(name)
    MSpec.behaves_like(name, nil, nil, false)
  end

  # An example that evaluates `source` (typically method definitions) and then
  # runs the block, in the same environment.
  def evaluate(source, description = nil, &block)
    description ||= "#{SpecEvaluate.desc} #{source.strip.gsub(/\s+/, ' ')}"
    MSpec.add_example(description, proc do
      eval(source)
      instance_exec(&block)
    end)
  end
end
