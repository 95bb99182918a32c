# Matcher objects for `actual.should(matcher)` / `should_not(matcher)`.
#
# A matcher answers `matches?(actual)` and, after that call, provides
# `failure_message` and `negative_failure_message`, each a pair of lines
# ([expected, actual]) that SpecExpectation.fail_with joins.
# The constructor helpers (`raise_error`, `be_close`, `complain`, ...) are
# private methods of Object, so they work in examples and in fixture code.

module MSpec
  TOLERANCE = 0.00003
end

# mspec defines these at the top level too; specs use them unqualified.
TOLERANCE = MSpec::TOLERANCE unless Object.const_defined?(:TOLERANCE)
# Seconds allowed between two clock readings (GC, JIT, a loaded machine).
TIME_TOLERANCE = 20.0 unless Object.const_defined?(:TIME_TOLERANCE)

module MSpec

  # Replaces a standard stream ($stdout/$stderr) while a block runs; collects
  # everything written with the IO writing methods Kernel and specs use.
  class OutputCapture
    attr_reader :string

    def initialize
      @string = String.new
    end

    def write(*args)
      n = 0
      args.each do |a|
        s = a.to_s
        @string << s
        n += s.bytesize
      end
      n
    end

    def print(*args)
      args = [$_] if args.empty?
      args.each { |a| write(a) }
      nil
    end

    def <<(obj)
      write(obj)
      self
    end

    def puts(*args)
      if args.empty?
        write("\n")
        return nil
      end
      args.each do |a|
        if a.is_a?(Array)
          if a.empty?
            write("\n") if args.size == 1
          else
            puts(*a)
          end
        else
          s = a.nil? ? '' : a.to_s
          write(s)
          write("\n") unless s.end_with?("\n")
        end
      end
      nil
    end

    def printf(format, *args)
      write(format % args)
      nil
    end

    def putc(c)
      write(c.is_a?(Integer) ? (c & 0xff).chr : c.to_s[0])
      c
    end

    def flush
      self
    end

    def fsync
      0
    end

    def sync
      true
    end

    def sync=(value)
      value
    end

    def tty?
      false
    end
    alias_method :isatty, :tty?

    def fileno
      nil
    end

    def external_encoding
      nil
    end
  end

  class RaiseErrorMatcher
    # The exception raised when it was not the expected one: under
    # `should_not` it is an error of the code under test and is re-raised.
    attr_reader :unrelated

    def initialize(klass = Exception, message = nil, &block)
      @klass = klass
      @message = message
      @block = block
      @actual = nil
      @raised = false
    end

    def matching_class?(e)
      @klass.is_a?(Module) ? e.is_a?(@klass) : e == @klass
    end

    def matching_message?(e)
      case @message
      when nil then true
      when Regexp then !!(@message =~ e.message.to_s)
      else e.message.to_s == @message.to_s
      end
    end

    def matches?(proc)
      @result = proc.call
      false
    rescue Exception => e
      @raised = true
      @actual = e
      if matching_class?(e) && matching_message?(e)
        @block.call(e) if @block
        true
      else
        @unrelated = e
        false
      end
    end

    def describe_expected
      s = @klass.is_a?(Module) ? @klass.name.to_s : MSpec.inspect_value(@klass)
      @message ? "#{s} (#{@message.is_a?(Regexp) ? MSpec.inspect_value(@message) : @message})" : s
    end

    def describe_actual
      e = @actual
      trace = (e.backtrace || []).reject { |l| l.include?('/spec/lib/mspec') }.first(6)
      "#{e.class} (#{e.message})" + (trace.empty? ? '' : "\n    " + trace.join("\n    "))
    rescue Exception
      '(an exception that could not be described)'
    end

    def failure_message
      if @raised
        ["Expected #{describe_expected}", "but got: #{describe_actual}"]
      else
        ["Expected #{describe_expected}",
         "but no exception was raised (#{MSpec.inspect_value(@result)} was returned)"]
      end
    end

    def negative_failure_message
      ["Expected to not get #{describe_expected}", "but got: #{describe_actual}"]
    end
  end

  class SimpleMatcher
    def initialize(description, expected = nil, &test)
      @description = description
      @expected = expected
      @test = test
    end

    def matches?(actual)
      @actual = actual
      @test.call(actual)
    end

    def failure_message
      ["Expected #{MSpec.inspect_value(@actual)}", "#{@description}#{expected_text}"]
    end

    def negative_failure_message
      ["Expected #{MSpec.inspect_value(@actual)}", "not #{@description}#{expected_text}"]
    end

    def expected_text
      @expected.nil? ? '' : " #{MSpec.inspect_value(@expected)}"
    end
  end

  class BeCloseMatcher
    def initialize(expected, tolerance)
      @expected = expected
      @tolerance = tolerance
    end

    def matches?(actual)
      @actual = actual
      (@actual - @expected).abs <= @tolerance
    end

    def failure_message
      ["Expected #{MSpec.inspect_value(@actual)}",
       "to be within #{@expected} +/- #{@tolerance}"]
    end

    def negative_failure_message
      ["Expected #{MSpec.inspect_value(@actual)}",
       "not to be within #{@expected} +/- #{@tolerance}"]
    end
  end

  class BeComputedByMatcher
    def initialize(sym, *args)
      @sym = sym
      @args = args
    end

    def matches?(array)
      array.each do |row|
        row = row.dup
        @expected = row.pop
        @receiver = row.shift
        @row_args = row
        @actual = @receiver.send(@sym, *row, *@args)
        return false unless @actual == @expected
      end
      true
    end

    def failure_message
      ["Expected #{MSpec.inspect_value(@expected)}",
       "to be computed by #{MSpec.inspect_value(@receiver)}.#{@sym}" \
       "#{MSpec.inspect_args(@row_args + @args)} (computed #{MSpec.inspect_value(@actual)} instead)"]
    end
  end

  # Captures $stderr (with $VERBOSE set as asked) while running a block.
  class ComplainMatcher
    def initialize(expected = nil, verbose: false)
      @expected = expected
      @verbose = verbose
    end

    def matches?(proc)
      capture = OutputCapture.new
      old_err = $stderr
      old_verbose = $VERBOSE
      begin
        $stderr = capture
        $VERBOSE = @verbose
        proc.call
      ensure
        $VERBOSE = old_verbose
        $stderr = old_err
      end
      @warning = capture.string
      case @expected
      when nil then !@warning.empty?
      when Regexp then !!(@expected =~ @warning)
      else @warning == @expected.to_s
      end
    end

    def expected_text
      @expected.nil? ? 'a warning' : "a warning matching #{MSpec.inspect_value(@expected)}"
    end

    def failure_message
      ["Expected #{expected_text}", "but got: #{MSpec.inspect_value(@warning)}"]
    end

    def negative_failure_message
      ["Expected no warning#{@expected.nil? ? '' : " matching #{MSpec.inspect_value(@expected)}"}",
       "but got: #{MSpec.inspect_value(@warning)}"]
    end
  end

  class OutputMatcher
    def initialize(stdout, stderr)
      @out = stdout
      @err = stderr
    end

    def matches?(proc)
      out = OutputCapture.new
      err = OutputCapture.new
      old_out = $stdout
      old_err = $stderr
      begin
        $stdout = out
        $stderr = err
        proc.call
      ensure
        $stdout = old_out
        $stderr = old_err
      end
      @actual_out = out.string
      @actual_err = err.string
      MSpec.output_matches?(@out, @actual_out) && MSpec.output_matches?(@err, @actual_err)
    end

    def failure_message
      expected = []
      actual = []
      unless @out.nil?
        expected << "  $stdout: #{MSpec.inspect_value(@out)}"
        actual << "  $stdout: #{MSpec.inspect_value(@actual_out)}"
      end
      unless @err.nil?
        expected << "  $stderr: #{MSpec.inspect_value(@err)}"
        actual << "  $stderr: #{MSpec.inspect_value(@actual_err)}"
      end
      ["Expected:\n" + expected.join("\n"), "     got:\n" + actual.join("\n")]
    end

    def negative_failure_message
      ["Expected output not to be:",
       "  $stdout: #{MSpec.inspect_value(@actual_out)}\n  $stderr: #{MSpec.inspect_value(@actual_err)}"]
    end
  end

  # Captures what is written to a file descriptor (not only to $stdout) by
  # reopening the IO onto a temporary file while the block runs.
  class OutputToFDMatcher
    def initialize(expected, to)
      @expected = expected
      @to = to
    end

    def matches?(proc)
      path = MSpec.tmp_path("mspec_output_to_fd_#{Process.pid}")
      saved = @to.dup
      file = File.open(path, 'w+')
      begin
        @to.reopen(file)
        proc.call
      ensure
        @to.flush if @to.respond_to?(:flush)
        @to.reopen(saved)
        saved.close
        file.close
      end
      @actual = MSpec.read_file(path)
      File.delete(path) if File.exist?(path)
      MSpec.output_matches?(@expected, @actual)
    end

    def failure_message
      ["Expected (fd #{@to.fileno}): #{MSpec.inspect_value(@expected)}",
       "                     got: #{MSpec.inspect_value(@actual)}"]
    end

    def negative_failure_message
      ["Expected output (fd #{@to.fileno}) not to be:", MSpec.inspect_value(@actual)]
    end
  end

  # Passes when the block is still blocked (its thread sleeping) shortly
  # after it started.
  class BlockingMatcher
    def matches?(proc)
      thread = Thread.new { proc.call }
      status = nil
      200.times do
        status = thread.status
        break if status == 'sleep' || status == false || status.nil?
        Thread.pass
        sleep 0.001
      end
      @blocking = (status == 'sleep')
      thread.kill
      thread.join
      @blocking
    end

    def failure_message
      ['Expected the given Proc', 'to block the caller']
    end

    def negative_failure_message
      ['Expected the given Proc', 'to not block the caller']
    end
  end

  def self.output_matches?(expected, actual)
    case expected
    when nil then true
    when Regexp then !!(expected =~ actual)
    else actual == expected.to_s
    end
  end

  def self.method_lookup_names(mod, kind, include_super)
    case kind
    when :public then mod.public_instance_methods(include_super)
    when :private then mod.private_instance_methods(include_super)
    when :protected then mod.protected_instance_methods(include_super)
    when :instance then mod.instance_methods(include_super)
    when :singleton then mod.singleton_methods(include_super)
    when :any then mod.methods(include_super)
    when :private_method then mod.private_methods(include_super)
    else raise ArgumentError, "unknown method kind #{kind}"
    end
  end
end

class Object
  private

  def raise_error(klass = Exception, message = nil, &block)
    MSpec::RaiseErrorMatcher.new(klass, message, &block)
  end

  def raise_consistent_error(klass = Exception, message = nil, &block)
    MSpec::RaiseErrorMatcher.new(klass, message, &block)
  end

  def equal(expected)
    MSpec::SimpleMatcher.new('to be identical to', expected) { |a| a.equal?(expected) }
  end

  def eql(expected)
    MSpec::SimpleMatcher.new('to be eql to', expected) { |a| a.eql?(expected) }
  end

  # `html.should equal_element("A", {"HREF" => "x"}, "content", not_closed = false)`: one
  # HTML element of that name with exactly those attributes (in any order; a value of
  # true is a bare attribute) and that content ("" when nil), closed unless not_closed.
  def equal_element(element, attributes = nil, content = nil, not_closed = false)
    not_closed = not_closed[:not_closed] if not_closed.is_a?(Hash)
    expected = [element, attributes, content, not_closed]
    MSpec::SimpleMatcher.new('to equal element', expected) do |actual|
      m = /\A<(\w+)([^>]*)>(.*?)(<\/(\w+)>)?\z/m.match(actual.to_s)
      next false unless m && m[1] == element.to_s
      next false if not_closed ? m[4] : (m[5] != element.to_s)
      attrs = {}
      m[2].scan(/([^\s=]+)(?:="([^"]*)")?/) { |k, v| attrs[k] = v.nil? ? true : v }
      want = (attributes || {}).to_h { |k, v| [k.to_s, v == true ? true : v.to_s] }
      attrs == want && m[3] == (not_closed ? m[3] : content.to_s)
    end
  end

  def be_nil
    MSpec::SimpleMatcher.new('to be nil') { |a| a.nil? }
  end

  def be_true
    MSpec::SimpleMatcher.new('to be true') { |a| a.equal?(true) }
  end

  def be_false
    MSpec::SimpleMatcher.new('to be false') { |a| a.equal?(false) }
  end

  def be_true_or_false
    MSpec::SimpleMatcher.new('to be true or false') { |a| a.equal?(true) || a.equal?(false) }
  end

  def be_kind_of(klass)
    MSpec::SimpleMatcher.new('to be a kind of', klass) { |a| a.is_a?(klass) }
  end

  def be_an_instance_of(klass)
    MSpec::SimpleMatcher.new('to be an instance of', klass) { |a| a.instance_of?(klass) }
  end

  def be_ancestor_of(mod)
    MSpec::SimpleMatcher.new('to be an ancestor of', mod) { |a| mod.ancestors.include?(a) }
  end

  def be_empty
    MSpec::SimpleMatcher.new('to be empty') { |a| a.empty? }
  end

  def be_nan
    MSpec::SimpleMatcher.new('to be NaN') { |a| a.is_a?(Float) && a.nan? }
  end

  def be_positive_zero
    MSpec::SimpleMatcher.new('to be +0.0') { |a| a.is_a?(Float) && a == 0.0 && (1.0 / a) > 0 }
  end

  def be_negative_zero
    MSpec::SimpleMatcher.new('to be -0.0') { |a| a.is_a?(Float) && a == 0.0 && (1.0 / a) < 0 }
  end

  def be_positive_infinity
    MSpec::SimpleMatcher.new('to be +Infinity') { |a| a.is_a?(Float) && a.infinite? == 1 }
  end

  def be_negative_infinity
    MSpec::SimpleMatcher.new('to be -Infinity') { |a| a.is_a?(Float) && a.infinite? == -1 }
  end

  def be_close(expected, tolerance = MSpec::TOLERANCE)
    MSpec::BeCloseMatcher.new(expected, tolerance)
  end

  # `yaml.should match_yaml(expected)`: equal YAML text once trailing blanks at line
  # ends and the final newline are dropped; an `expected` that is not a YAML document
  # is dumped with `to_yaml` first.
  def match_yaml(expected)
    require 'yaml'
    clean = ->(y) { y.gsub(/([^-]|^---)\s+\n/, "\\1\n").sub(/\n\z/, "") }
    yaml_text = begin
      YAML.respond_to?(:unsafe_load) ? YAML.unsafe_load(expected) : YAML.load(expected)
      true
    rescue Exception
      false
    end
    expected = expected.to_yaml unless expected.is_a?(String) && yaml_text
    MSpec::SimpleMatcher.new('to match YAML', expected) { |a| a.is_a?(String) && clean.(a) == clean.(expected) }
  end

  def be_computed_by(sym, *args)
    MSpec::BeComputedByMatcher.new(sym, *args)
  end

  def include(*items)
    MSpec::SimpleMatcher.new('to include', items.size == 1 ? items[0] : items) do |a|
      items.all? { |i| a.include?(i) }
    end
  end

  def match(regexp)
    MSpec::SimpleMatcher.new('to match', regexp) { |a| !!(regexp =~ a) }
  end

  def respond_to(name)
    MSpec::SimpleMatcher.new('to respond to', name) { |a| a.respond_to?(name) }
  end

  def have_method(name, include_super = true)
    MSpec::SimpleMatcher.new('to have method', name) do |mod|
      MSpec.method_lookup_names(mod, :any, include_super).include?(name.to_sym)
    end
  end

  def have_instance_method(name, include_super = true)
    MSpec::SimpleMatcher.new('to have instance method', name) do |mod|
      MSpec.method_lookup_names(mod, :instance, include_super).include?(name.to_sym)
    end
  end

  def have_public_instance_method(name, include_super = true)
    MSpec::SimpleMatcher.new('to have public instance method', name) do |mod|
      MSpec.method_lookup_names(mod, :public, include_super).include?(name.to_sym)
    end
  end

  def have_private_instance_method(name, include_super = true)
    MSpec::SimpleMatcher.new('to have private instance method', name) do |mod|
      MSpec.method_lookup_names(mod, :private, include_super).include?(name.to_sym)
    end
  end

  def have_protected_instance_method(name, include_super = true)
    MSpec::SimpleMatcher.new('to have protected instance method', name) do |mod|
      MSpec.method_lookup_names(mod, :protected, include_super).include?(name.to_sym)
    end
  end

  def have_private_method(name, include_super = true)
    MSpec::SimpleMatcher.new('to have private method', name) do |obj|
      MSpec.method_lookup_names(obj, :private_method, include_super).include?(name.to_sym)
    end
  end

  def have_singleton_method(name, include_super = true)
    MSpec::SimpleMatcher.new('to have singleton method', name) do |obj|
      MSpec.method_lookup_names(obj, :singleton, include_super).include?(name.to_sym)
    end
  end

  def have_constant(name)
    MSpec::SimpleMatcher.new('to have constant', name) { |mod| mod.constants.include?(name.to_sym) }
  end

  def have_class_variable(name)
    MSpec::SimpleMatcher.new('to have class variable', name) do |mod|
      mod.class_variables.include?(name.to_sym)
    end
  end

  def have_instance_variable(name)
    MSpec::SimpleMatcher.new('to have instance variable', name) do |obj|
      obj.instance_variables.include?(name.to_sym)
    end
  end

  # ruby/spec passes options both as keywords and as a positional Hash
  # (`complain(/x/, {verbose: true})`), as mspec's `complain(complaint, options = {})` allows.
  def complain(expected = nil, options = nil, verbose: false)
    verbose = options.fetch(:verbose, verbose) if options.is_a?(Hash)
    MSpec::ComplainMatcher.new(expected, verbose: verbose)
  end

  def output(stdout = nil, stderr = nil)
    MSpec::OutputMatcher.new(stdout, stderr)
  end

  def output_to_fd(expected, to = STDOUT)
    MSpec::OutputToFDMatcher.new(expected, to)
  end

  def block_caller(timeout = 0.1)
    MSpec::BlockingMatcher.new
  end
end
