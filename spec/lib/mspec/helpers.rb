# Helpers available to spec files and their fixtures: ScratchPad, fixture
# and temporary paths, file utilities, `ruby_exe` (runs the implementation
# under test in a child process), numeric constants and environment helpers.
#
# The implementation under test is named by $MSPEC_RUBY_EXE (set by spec/run);
# without it `ruby_exe` falls back to RbConfig.ruby or "ruby". Temporary files
# live in $MSPEC_TMPDIR (default: a per-process directory under the system
# temporary directory), which spec/run removes after each file.

class MSpecScript
  def self.config
    @config ||= {}
  end

  def self.set(key, value)
    config[key] = value
  end

  def self.get(key)
    config[key]
  end
end

module ScratchPad
  def self.clear
    @record = nil
  end

  def self.record(value)
    @record = value
  end

  def self.<<(value)
    @record << value
  end

  def self.recorded
    @record
  end

  def self.inspect
    "<ScratchPad @record=#{MSpec.inspect_value(@record)}>"
  end
end

module MSpec
  # Raised by `skip`: ends the example without counting it.
  class SkipExample < Exception
  end

  def self.tmp_root
    @tmp_root ||= begin
      dir = ENV['MSPEC_TMPDIR']
      dir = File.join(ENV['TMPDIR'] || '/tmp', "carmine-mspec-#{Process.pid}") if dir.nil? || dir.empty?
      Dir.mkdir(dir) unless File.directory?(dir)
      dir
    end
  end

  def self.tmp_path(name, uniquify = true)
    @tmp_counter = (@tmp_counter || 0) + 1
    if uniquify && !name.empty?
      File.join(tmp_root, "#{@tmp_counter}-#{name}")
    else
      File.join(tmp_root, name)
    end
  end

  def self.ruby_exe_path
    exe = ENV['MSPEC_RUBY_EXE']
    return exe if exe && !exe.empty?
    begin
      require 'rbconfig'
      return RbConfig.ruby if defined?(RbConfig) && RbConfig.respond_to?(:ruby)
    rescue LoadError
    end
    'ruby'
  end

  # The command of `ruby_exe` without code: a String that splats (`[*ruby_exe]`)
  # into its words.
  # mspec's `ruby_exe` without code is the command split into words (an Array); this
  # String also enumerates them, so `[*ruby_exe]` and `ruby_exe.any? { ... }` work.
  class RubyCommand < String
    include Enumerable

    def to_a
      split(' ')
    end

    def each(&block)
      to_a.each(&block)
    end
  end

  # File.binread without needing it from the implementation under test.
  def self.read_file(path)
    File.open(path, 'rb') { |f| f.read }
  end

  def self.shell_quote(s)
    s = s.to_s
    return "''" if s.empty?
    "'" + s.gsub("'") { "'\\''" } + "'"
  end
end

# A stand-in for $stdout/$stderr that collects what is written (mspec's IOStub);
# compares and converts like the String written so far.
class IOStub
  def initialize
    @buffer = []
    @output = +''
  end

  def write(*str)
    self << str.join('')
  end

  def <<(str)
    @buffer << str
    self
  end

  def print(*str)
    write(str.join('') + $\.to_s)
  end

  def puts(*str)
    if str.empty?
      write "\n"
    else
      write(str.collect { |s| s.to_s.chomp }.concat([nil]).join("\n"))
    end
  end

  def printf(format, *args)
    self << sprintf(format, *args)
  end

  def flush
    @output += @buffer.join('')
    @buffer.clear
    self
  end

  def to_s
    flush
    @output
  end
  alias_method :to_str, :to_s

  def ==(other)
    to_s == other
  end

  def =~(other)
    to_s =~ other
  end

  def inspect
    to_s.inspect
  end

  def method_missing(name, *args, &block)
    to_s.send(name, *args, &block)
  end
end

class Object
  private

  # Path of a file in the `fixtures` directory next to `file` (a spec file or
  # a file in its `shared/` directory).
  def fixture(file, *parts)
    dir = File.dirname(File.expand_path(file))
    dir = File.dirname(dir) if File.basename(dir) == 'shared'
    dir = File.join(dir, 'fixtures') unless File.basename(dir) == 'fixtures'
    File.expand_path(File.join(dir, *parts))
  end

  def tmp(name, uniquify = true)
    MSpec.tmp_path(name, uniquify)
  end

  def rm_r(*paths)
    paths.each do |path|
      path = File.expand_path(path)
      if File.symlink?(path) || File.file?(path)
        File.delete(path)
      elsif File.directory?(path)
        Dir.children(path).each { |child| rm_r(File.join(path, child)) }
        Dir.rmdir(path)
      end
    end
  end

  def mkdir_p(path)
    parts = File.expand_path(path).split('/')
    current = ''
    parts.each do |part|
      next if part.empty?
      current = "#{current}/#{part}"
      Dir.mkdir(current) unless File.directory?(current)
    end
  end

  def touch(name, mode = 'w')
    mkdir_p(File.dirname(name))
    File.open(name, mode) { |f| yield f if block_given? }
  end

  def cp(source, dest)
    File.open(dest, 'wb') { |d| d.write(MSpec.read_file(source)) }
  end

  # ARGV replaced by `args` for the block (or, without one, until the process ends).
  def argv(args)
    saved = ARGV.dup
    ARGV.replace(args)
    return unless block_given?
    begin
      yield
    ensure
      ARGV.replace(saved)
    end
  end

  # `@argf`: a fresh ARGF over `args` (file names) for the block, closed afterwards.
  def argf(args)
    argv(args) do
      @argf = ARGF.class.new(*args)
      begin
        # As mspec's helper: the first file is opened before the block runs.
        @__mspec_saved_argf_file__ = @argf.file
        yield
      ensure
        @argf.close unless @argf.closed?
        @argf = nil
      end
    end
  end

  def dev_null
    '/dev/null'
  end

  def new_fd(name, mode = 'w:utf-8')
    mode = mode.is_a?(Hash) ? mode[:mode] : mode
    IO.sysopen(name, mode)
  end

  def new_io(name, mode = 'w:utf-8')
    if mode.is_a?(Hash)
      File.new(name, **mode)
    else
      File.new(name, mode)
    end
  end

  def flunk(message = 'This example is a failure')
    SpecExpectation.fail_with('Failed:', message)
  end

  def skip(reason = nil)
    raise MSpec::SkipExample, reason.to_s
  end

  def suppress_warning
    old = $VERBOSE
    $VERBOSE = nil
    yield
  ensure
    $VERBOSE = old
  end

  # Keyword-argument warnings no longer exist (Ruby 3); kept for old specs.
  def suppress_keyword_warning
    yield
  end

  def nan_value
    0.0 / 0.0
  end

  def infinity_value
    1.0 / 0.0
  end

  # As mspec: 2**64 + plus, so that -bignum_value is a Bignum as well.
  def bignum_value(plus = 0)
    0x1_0000_0000_0000_0000 + plus
  end

  def fixnum_max
    (2**62) - 1
  end

  def fixnum_min
    -(2**62)
  end

  def max_long
    2**(PlatformGuard.c_long_size - 1) - 1
  end

  def min_long
    -(2**(PlatformGuard.c_long_size - 1))
  end

  def max_uint
    2**32 - 1
  end

  def max_ulong
    2**PlatformGuard.c_long_size - 1
  end

  def env
    ENV.to_hash
  end

  def username
    ENV['USER'] || ENV['LOGNAME'] || `id -un`.chomp
  end

  def home_directory
    ENV['HOME']
  end

  def with_timezone(name, offset = nil)
    zone = name.dup
    if offset
      # TZ's offset sign is inverted: "CET-1" is one hour east of UTC.
      zone << (offset > 0 ? '-' : '+') << offset.abs.to_s
    end
    old = ENV['TZ']
    ENV['TZ'] = zone
    begin
      yield
    ensure
      ENV['TZ'] = old
    end
  end

  def ruby_cmd(code, opts = {})
    command = [MSpec.ruby_exe_path]
    command << opts[:options] if opts[:options]
    if code
      if code.is_a?(String) && File.exist?(code) && !code.include?("\n")
        command << MSpec.shell_quote(code)
      else
        path = MSpec.tmp_path('rubyexe.rb')
        File.open(path, 'wb') { |f| f.write(code) }
        command << MSpec.shell_quote(path)
      end
    end
    command << opts[:args] if opts[:args]
    command.join(' ')
  end

  # Runs the implementation under test on `code` (a file path or Ruby source)
  # and returns its standard output. `exit_status:` (default 0) is checked.
  def ruby_exe(code = :not_given, opts = {})
    return MSpec::RubyCommand.new(MSpec.ruby_exe_path) if code == :not_given
    expected_status = opts.fetch(:exit_status, 0)
    command = ruby_cmd(code, opts)
    # The child's stderr goes to a file (unless the spec redirects it) so
    # that a failure can show it; it is passed on to ours afterwards.
    err_path = nil
    unless command.include?('2>')
      err_path = MSpec.tmp_path('rubyexe.err')
      command = "#{command} 2>#{MSpec.shell_quote(err_path)}"
    end
    saved = {}
    (opts[:env] || {}).each do |k, v|
      saved[k] = ENV[k]
      ENV[k] = v
    end
    begin
      # `exec`: the shell becomes the child, so `$?` is the child's own status (its
      # pid, and the signal that killed it rather than the shell's 128+n).
      output = `exec #{command}`
    ensure
      saved.each { |k, v| ENV[k] = v }
    end
    status = $?
    errors = ''
    if err_path && File.exist?(err_path)
      errors = MSpec.read_file(err_path)
      File.delete(err_path)
      $stderr.write(errors) unless errors.empty?
    end
    actual = status.respond_to?(:exitstatus) ? status.exitstatus : status
    if status.respond_to?(:signaled?) && status.signaled?
      actual = :"signal #{status.termsig}"
    end
    # A signal name: the child died of it (seen directly, or as the shell's 128+n).
    if expected_status.is_a?(Symbol) && expected_status != :success
      signo = Signal.list[expected_status.to_s.sub(/\ASIG/, "")]
      if signo && (actual == :"signal #{signo}" || actual == 128 + signo)
        actual = expected_status
      end
    end
    if expected_status != :success && actual != expected_status
      SpecExpectation.fail_with(
        "Expected exit status is #{MSpec.inspect_value(expected_status)} but actual is #{MSpec.inspect_value(actual)}",
        "for command #{MSpec.inspect_value(command)}\noutput: #{MSpec.inspect_value(output)}" \
        "\nstderr: #{MSpec.inspect_value(errors)}")
    end
    output
  end

  # A DateTime from keyword parts, the rest defaulted to the start of the Julian Period
  # (mspec's new_datetime).
  def new_datetime(opts = {})
    require "date"
    v = { year: -4712, month: 1, day: 1, hour: 0, minute: 0, second: 0, offset: 0 }.merge(opts)
    DateTime.new(v[:year], v[:month], v[:day], v[:hour], v[:minute], v[:second], v[:offset])
  end
end
