# The spec-DSL prelude of the panic-freedom check (`carmine -r prelude.rb spec_file.rb`).
#
# It gives ruby/spec files just enough of mspec (describe/it/before/after/should/mocks/
# guards/helpers) that their blocks actually run, so the VM executes the language features
# and builtins the specs exercise. Nothing is checked: every block runs inside
# `rescue Exception`, matchers accept anything, and only a VM crash (a panic, a fatal
# signal, `[BUG]`) can make a run fail. Unknown helpers answer a matcher that accepts all.
#
# Keep it to basic Ruby: if the prelude itself fails to load on Carmine, nothing runs.

ENV["MSPEC_RUNNER"] ||= "1"

module CarmineFuzz
  TMP = ENV["CARMINE_FUZZ_TMP"] || "/tmp/carmine-fuzz-tmp"

  # With CARMINE_FUZZ_STATS=1, counts of blocks run and exceptions swallowed are printed at
  # exit (to see how much of a spec file actually ran).
  STATS = ENV["CARMINE_FUZZ_STATS"] == "1" ? Hash.new(0) : nil
  # With CARMINE_FUZZ_TRACE=1, each example's description is printed before it runs.
  TRACE = ENV["CARMINE_FUZZ_TRACE"] == "1"

  # Runs a block, swallowing every exception (and throw/exit inside it).
  def self.protect(env, *args, &blk)
    return nil unless blk
    STATS[:blocks] += 1 if STATS
    begin
      catch(:__carmine_fuzz_never__) do
        env.instance_exec(*args, &blk)
      end
    rescue Exception => e
      if STATS
        STATS[:exceptions] += 1
        STATS["#{e.class}: #{e.message.to_s[0, 100]}"] += 1
      end
      nil
    end
  end

  # Calls a callable the way mspec's block matchers do.
  def self.call(actual)
    actual.call if actual.respond_to?(:call)
  rescue Exception
    nil
  end

  # One describe level: its hooks.
  class Context
    attr_reader :before_each, :after_each, :shared_args
    def initialize
      @before_each = []
      @after_each = []
    end
  end

  @stack = []
  @shared = {}
  @env = nil
  class << self
    attr_reader :stack, :shared
    def env
      @env ||= SpecEnv.new
    end
  end

  # Accepts anything; calls procs so block matchers run their code.
  class Matcher
    def initialize(*args, &blk)
      @args = args
      @blk = blk
    end

    def matches?(actual)
      CarmineFuzz.call(actual)
      CarmineFuzz.call(@blk) if @blk && actual.is_a?(Proc) == false
      true
    end

    def does_not_match?(actual)
      matches?(actual)
    end

    def failure_message = ["", ""]
    def negative_failure_message = ["", ""]
    def description = "matcher"
    def method_missing(*) = self
    def respond_to_missing?(*) = true
  end

  # The target of `x.should == y` / `x.should_not < y`: performs the comparison.
  class PositiveOperatorMatcher
    def initialize(actual)
      @actual = actual
    end

    %w[== != === =~ !~ < <= > >= equal? eql?].each do |op|
      define_method(op) do |other|
        begin
          @actual.__send__(op, other)
        rescue Exception
          nil
        end
        true
      end
    end

    # `-> { }.should.raise(E)`, `x.should.frozen?`…: run the block / ask the object.
    def method_missing(name, *args, &blk)
      if @actual.is_a?(Proc)
        CarmineFuzz.call(@actual)
      else
        begin
          @actual.__send__(name, *args, &blk)
        rescue Exception
          nil
        end
      end
      true
    end

    def respond_to_missing?(*) = true
  end

  # `obj.should_receive(:m)`: defines `m` on obj's singleton class with the given result.
  class MockProxy
    def initialize(obj, name)
      @obj = obj
      @name = name
      @values = [nil]
      @raise = nil
      @yields = nil
      install
    end

    def install
      proxy = self
      begin
        @obj.singleton_class.send(:define_method, @name) do |*args, **kw, &blk|
          proxy.__invoke(blk)
        end
      rescue Exception
        nil
      end
    end

    def __invoke(blk)
      raise @raise if @raise
      if @yields && blk
        @yields.each { |y| blk.call(*y) }
      end
      v = @values.size > 1 ? @values.shift : @values.first
      v
    end

    def and_return(*vals)
      @values = vals.empty? ? [nil] : vals
      self
    end

    def and_raise(exc = RuntimeError, msg = nil)
      @raise = exc.is_a?(Class) ? exc.new(*[msg].compact) : exc
      self
    end

    def and_yield(*args)
      (@yields ||= []) << args
      self
    end

    def and_throw(tag)
      self
    end

    def with(*) = self
    def once = self
    def twice = self
    def any_number_of_times = self
    def exactly(*) = self
    def at_least(*) = self
    def at_most(*) = self
    def times = self
    def ordered = self
    def method_missing(*) = self
    def respond_to_missing?(*) = true
  end

  # `mock("name")`: an object that answers every message with itself unless configured.
  class Mock
    def initialize(name = nil)
      @name = name
    end

    def inspect = "#<Mock #{@name}>"
    def to_s = inspect
  end

  # `ScratchPad`: mspec's global record.
  module ScratchPadImpl
    def self.clear = (@record = nil)
    def self.record(v) = (@record = v)
    def self.<<(v)
      (@record ||= []) << v
      self
    end
    def self.recorded = @record
  end

  # The object every spec block runs in (mspec runs them all in one environment object).
  class SpecEnv
    def method_missing(name, *args, &blk)
      Matcher.new(*args, &blk)
    end

    def respond_to_missing?(*) = true
  end
end

ScratchPad = CarmineFuzz::ScratchPadImpl unless defined?(ScratchPad)

class Object
  private

  def describe(*args, **opts, &blk)
    if opts[:shared] || (args.size >= 2 && args[1].is_a?(Hash) && args[1][:shared])
      CarmineFuzz.shared[args.first] = blk if args.first
      return nil
    end
    CarmineFuzz.stack.push(CarmineFuzz::Context.new)
    begin
      CarmineFuzz.protect(CarmineFuzz.env, &blk)
    ensure
      CarmineFuzz.stack.pop
    end
    nil
  end
  alias context describe

  def it(*desc, &blk)
    $stderr.puts "it #{desc.first}" if CarmineFuzz::TRACE
    env = CarmineFuzz.env
    CarmineFuzz.stack.each { |c| c.before_each.each { |b| CarmineFuzz.protect(env, &b) } }
    CarmineFuzz.protect(env, &blk)
    CarmineFuzz.stack.reverse_each { |c| c.after_each.reverse_each { |b| CarmineFuzz.protect(env, &b) } }
    nil
  end
  alias specify it

  def before(kind = :each, &blk)
    if kind == :all || kind == :context
      CarmineFuzz.protect(CarmineFuzz.env, &blk)
    elsif (c = CarmineFuzz.stack.last)
      c.before_each << blk
    end
    nil
  end

  def after(kind = :each, &blk)
    if kind == :all || kind == :context
      # Run at the end of the describe: not tracked, run now is close enough.
      nil
    elsif (c = CarmineFuzz.stack.last)
      c.after_each << blk
    end
    nil
  end

  def it_behaves_like(name, meth = nil, obj = nil, *_)
    blk = CarmineFuzz.shared[name]
    return nil unless blk
    env = CarmineFuzz.env
    env.instance_variable_set(:@method, meth)
    env.instance_variable_set(:@object, obj)
    CarmineFuzz.stack.push(CarmineFuzz::Context.new)
    begin
      CarmineFuzz.protect(env, meth, &blk)
    ensure
      CarmineFuzz.stack.pop
    end
    nil
  end
  alias it_should_behave_like it_behaves_like

  # Guards: every guarded block runs (whatever the platform or version), for coverage.
  %w[ruby_version_is platform_is platform_is_not with_feature without_feature ruby_bug
     conflicts_with big_endian little_endian not_supported_on as_superuser as_user
     as_real_superuser quarantine! deviates_on slow process_is_foreground with_timezone
     kernel_is wordsize pointer_size_is guard guard_not extended_on compliant_on
     not_compliant_on ruby_bug_fixed platform_is_windows_only with_block_device
     not_implemented_on implementation_is].each do |g|
    define_method(g) do |*_args, **_kw, &blk|
      blk ? CarmineFuzz.protect(CarmineFuzz.env, &blk) : true
    end
  end

  public

  def should(matcher = nil, &_)
    return CarmineFuzz::PositiveOperatorMatcher.new(self) if matcher.nil?
    begin
      matcher.matches?(self) if matcher.respond_to?(:matches?)
    rescue Exception
      nil
    end
    true
  end

  def should_not(matcher = nil, &_)
    should(matcher)
  end

  def should_receive(name, *_) = CarmineFuzz::MockProxy.new(self, name)
  def should_not_receive(name, *_) = CarmineFuzz::MockProxy.new(self, name)
  def stub!(name, *_) = CarmineFuzz::MockProxy.new(self, name)

  private

  def mock(name = nil, *_) = CarmineFuzz::Mock.new(name)
  alias mock_to_path mock

  def mock_int(v)
    m = CarmineFuzz::Mock.new("int")
    m.should_receive(:to_int).and_return(v)
    m
  end

  def mock_numeric(name = nil) = Class.new(Numeric).new

  def fixture(file, *names)
    File.join(File.dirname(File.expand_path(file.to_s)), "fixtures", *names.map(&:to_s))
  end

  def tmp(name = "", uniquify = true)
    Dir.mkdir(CarmineFuzz::TMP) unless File.directory?(CarmineFuzz::TMP)
    File.join(CarmineFuzz::TMP, name.to_s)
  rescue Exception
    File.join(CarmineFuzz::TMP, name.to_s)
  end

  def touch(name, mode = "w")
    File.open(name.to_s, mode) { |f| yield f if block_given? }
  end

  # Deletes only inside the prelude's temporary directory.
  def rm_r(*paths)
    paths.each do |p|
      p = File.expand_path(p.to_s)
      next unless p.start_with?(CarmineFuzz::TMP)
      if File.directory?(p) && !File.symlink?(p)
        Dir.children(p).each { |c| rm_r(File.join(p, c)) }
        Dir.rmdir(p)
      elsif File.exist?(p) || File.symlink?(p)
        File.delete(p)
      end
    end
    nil
  end

  def mkdir_p(path)
    parts = File.expand_path(path.to_s).split("/")
    cur = ""
    parts.each do |part|
      next if part.empty?
      cur = "#{cur}/#{part}"
      Dir.mkdir(cur) unless File.directory?(cur)
    end
    nil
  end

  def cp(from, to) = File.write(to, File.read(from))
  def ruby_exe(*) = ""
  def ruby_cmd(*) = ""
  def suppress_warning = yield
  def suppress_keyword_warning = yield
  def nan_value = 0.0 / 0.0
  def infinity_value = 1.0 / 0.0
  def bignum_value(plus = 0) = 2**64 + plus
  def fixnum_max = 2**62 - 1
  def fixnum_min = -(2**62)
  def max_long = 2**63 - 1
  def min_long = -(2**63)
  def max_uint = 2**32 - 1
  def flunk(*) = nil
  def new_fd(name, mode = "w") = (File.open(name, mode).fileno rescue 0)
  def new_io(name, mode = "w") = File.open(name, mode)
  def frozen_error_class = FrozenError
  def without_feature(*) = yield
  def report_on_exception=(*)
    nil
  end
  def main_ractor? = true
  def warn_in_module(*) = nil
  def it_should_raise(*) = nil
  def cleanup(*) = nil
end

module Kernel
  def ruby_exe(*) = ""

  # A fixture file that fails half-way (a feature the VM lacks) should not end the whole
  # spec file: load it as far as it goes and carry on.
  private def require_relative(path)
    loc = caller_locations(1, 1).first
    base = (loc && (loc.absolute_path || loc.path)) || Dir.pwd
    require(File.expand_path(path.to_s, File.dirname(base)))
  rescue Exception
    false
  end
end

class SpecVersion
  include Comparable
  attr_reader :parts
  def initialize(s, *) = @parts = s.to_s.split(".").map(&:to_i)
  # Element by element (not Array#<=>, so the prelude needs as little of the VM as it can).
  def <=>(o)
    other = o.respond_to?(:parts) ? o.parts : SpecVersion.new(o).parts
    n = parts.size > other.size ? parts.size : other.size
    i = 0
    while i < n
      a = parts[i] || 0
      b = other[i] || 0
      return -1 if a < b
      return 1 if a > b
      i += 1
    end
    0
  end
  def to_s = parts.join(".")
end

class VersionGuard
  FULL_RUBY_VERSION = SpecVersion.new(RUBY_VERSION)
end

module PlatformGuard
  def self.windows? = false
  def self.linux? = true
  def self.darwin? = false
  def self.standard? = true
  def self.method_missing(*) = false
end

class MSpec
  def self.method_missing(*) = nil
end

class SpecEvaluate
  def self.desc = "fuzz"
  def self.desc=(*)
    nil
  end
end

CODE_LOADING_DIR = File.join(CarmineFuzz::TMP, "code") unless defined?(CODE_LOADING_DIR)

if CarmineFuzz::STATS
  at_exit do
    CarmineFuzz::STATS.sort_by { |k, v| -v }.first(25).each { |k, v| $stderr.puts "#{v}\t#{k}" }
  end
end

# Mutated scripts must not reach outside their process: no programs are started and no
# signals are sent (a mutation could turn a spec's `system("rm", ...)` or
# `Process.kill(:KILL, pid)` into something harmful, or a fork into a fork bomb).
module Kernel
  private

  def `(*) = ""
  def system(*, **) = nil
  def spawn(*, **) = raise(NotImplementedError, "spawn is disabled by the fuzz prelude")
  def exec(*, **) = raise(NotImplementedError, "exec is disabled by the fuzz prelude")
  def fork(*) = raise(NotImplementedError, "fork is disabled by the fuzz prelude")
  def syscall(*) = raise(NotImplementedError, "syscall is disabled by the fuzz prelude")

  # `Kernel.system(...)` and friends (the module-function copies).
  class << self
    def `(*) = ""
    def system(*, **) = nil
    def spawn(*, **) = raise(NotImplementedError, "spawn is disabled by the fuzz prelude")
    def exec(*, **) = raise(NotImplementedError, "exec is disabled by the fuzz prelude")
    def fork(*) = raise(NotImplementedError, "fork is disabled by the fuzz prelude")
    def syscall(*) = raise(NotImplementedError, "syscall is disabled by the fuzz prelude")
  end
end

module Process
  def self.spawn(*, **) = raise(NotImplementedError, "spawn is disabled by the fuzz prelude")
  def self.exec(*, **) = raise(NotImplementedError, "exec is disabled by the fuzz prelude")
  def self.fork(*) = raise(NotImplementedError, "fork is disabled by the fuzz prelude")
  def self.daemon(*) = raise(NotImplementedError, "daemon is disabled by the fuzz prelude")
  def self.kill(_sig, *pids) = pids.size
end

class IO
  def self.popen(*, **) = raise(NotImplementedError, "popen is disabled by the fuzz prelude")
end
