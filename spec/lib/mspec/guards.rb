# Guards: blocks that run only on some versions, platforms, implementations
# or features. With a block, a guard runs the block when its condition holds;
# without one it returns the condition, so guards compose inside
# `guard -> { platform_is(:linux) && ruby_version_is("3.4") }`.
#
# Conditions are computed from the running implementation: RUBY_VERSION,
# RUBY_ENGINE, RUBY_PLATFORM and what it responds to. `ruby_bug` only skips
# on CRuby (an implementation without the bug runs the spec).

module PlatformGuard
  # The width of a pointer in bits (mspec's constant; [nil].pack("p") is 8 bytes on LP64).
  POINTER_SIZE = [nil].pack("p").bytesize * 8 rescue 64
  def self.os?(*names)
    platform = RUBY_PLATFORM
    names.any? do |name|
      case name
      when :windows then platform =~ /mswin|mingw/
      when :mingw then platform =~ /mingw/
      when :mswin then platform =~ /mswin/
      when :cygwin then platform =~ /cygwin/
      when :bsd then platform =~ /bsd|dragonfly|darwin/
      when :java then RUBY_ENGINE == 'jruby'
      else platform.include?(name.to_s)
      end
    end
  end

  def self.implementation?(*names)
    names.any? do |name|
      case name
      when :ruby, :mri, :cruby then RUBY_ENGINE == 'ruby'
      else RUBY_ENGINE == name.to_s
      end
    end
  end

  def self.standard?
    implementation?(:ruby)
  end

  def self.windows?
    os?(:windows)
  end

  def self.linux?
    os?(:linux)
  end

  def self.darwin?
    os?(:darwin)
  end

  def self.wordsize
    # Integer#size is the machine word size in bytes for a Fixnum.
    1.size * 8
  end

  def self.c_long_size
    windows? ? 32 : wordsize
  end

  def self.pointer_size
    wordsize
  end

  def self.platform?(*args)
    options = args.last.is_a?(Hash) ? args.pop : {}
    return true if !args.empty? && (os?(*args) || implementation?(*args))
    options.each do |key, value|
      actual = case key
               when :wordsize then wordsize
               when :c_long_size then c_long_size
               when :pointer_size then pointer_size
               else raise ArgumentError, "unknown platform option #{key}"
               end
      return true if actual == value
    end
    false
  end
end

module MSpec
  def self.features
    @features ||= begin
      f = {}
      f[:encoding] = defined?(Encoding) ? true : false
      f[:fiber] = defined?(Fiber) ? true : false
      f[:fiber_library] = f[:fiber]
      f[:fork] = Process.respond_to?(:fork)
      f[:refinement] = Module.private_method_defined?(:refine) || Module.method_defined?(:refine)
      f[:thread] = defined?(Thread) ? true : false
      f
    end
  end

  def self.enable_feature(name)
    features[name] = true
  end

  def self.disable_feature(name)
    features[name] = false
  end

  def self.feature_enabled?(name)
    features[name] ? true : false
  end

  def self.guard_result(condition)
    if block_given?
      yield if condition
      condition
    else
      condition
    end
  end

  def self.little_endian?
    RUBY_PLATFORM !~ /\A(powerpc|ppc|sparc|s390|mips(?!el)|m68k)/
  end
end

class Object
  private

  def ruby_version_is(*versions, &block)
    MSpec.guard_result(versions.all? { |v| MSpec.version_matches?(v) }, &block)
  end

  # `version_is Library::VERSION, "1.2"` (or a Range): a guard on a library's version.
  def version_is(base_version, version, &block)
    running = SpecVersion.new(base_version.to_s)
    MSpec.guard_result(MSpec.version_matches?(version, running), &block)
  end

  def ruby_bug(bug, version, &block)
    buggy = PlatformGuard.standard? && MSpec.version_matches?(version)
    MSpec.guard_result(!buggy, &block)
  end

  def platform_is(*args, &block)
    MSpec.guard_result(PlatformGuard.platform?(*args), &block)
  end

  def platform_is_not(*args, &block)
    MSpec.guard_result(!PlatformGuard.platform?(*args), &block)
  end

  def not_supported_on(*impls, &block)
    MSpec.guard_result(!PlatformGuard.implementation?(*impls), &block)
  end

  def deviates_on(*impls, &block)
    MSpec.guard_result(PlatformGuard.implementation?(*impls), &block)
  end

  def extended_on(*impls, &block)
    MSpec.guard_result(PlatformGuard.implementation?(*impls), &block)
  end

  def compliant_on(*impls, &block)
    MSpec.guard_result(PlatformGuard.implementation?(*impls), &block)
  end

  def not_compliant_on(*impls, &block)
    MSpec.guard_result(!PlatformGuard.implementation?(*impls), &block)
  end

  def with_feature(*features, &block)
    MSpec.guard_result(features.all? { |f| MSpec.feature_enabled?(f) }, &block)
  end

  def without_feature(*features, &block)
    MSpec.guard_result(features.none? { |f| MSpec.feature_enabled?(f) }, &block)
  end

  def conflicts_with(*constants, &block)
    conflict = constants.any? { |c| Object.const_defined?(c) }
    MSpec.guard_result(!conflict, &block)
  end

  def as_superuser(&block)
    MSpec.guard_result(Process.euid == 0, &block)
  end

  def as_user(&block)
    MSpec.guard_result(Process.euid != 0, &block)
  end

  def as_real_superuser(&block)
    MSpec.guard_result(Process.uid == 0, &block)
  end

  def big_endian(&block)
    MSpec.guard_result(!MSpec.little_endian?, &block)
  end

  def little_endian(&block)
    MSpec.guard_result(MSpec.little_endian?, &block)
  end

  def guard(condition, &block)
    MSpec.guard_result(condition.call ? true : false, &block)
  end

  def guard_not(condition, &block)
    MSpec.guard_result(condition.call ? false : true, &block)
  end

  def quarantine!(&block)
    MSpec.guard_result(false, &block)
  end

  def slow(&block)
    MSpec.guard_result(true, &block)
  end

  # `kernel_is ">= 5.4"`: compares the running OS kernel release.
  def kernel_is(requirement, &block)
    op, version = requirement.to_s.split(' ', 2)
    unless version
      version = op
      op = '>='
    end
    release = File.exist?('/proc/sys/kernel/osrelease') ? File.read('/proc/sys/kernel/osrelease') : '0'
    running = SpecVersion.new(release[/\A[\d.]+/] || '0')
    MSpec.guard_result(running.send(op, SpecVersion.new(version)) ? true : false, &block)
  end

  # The specs guarded by this need a controlling terminal whose foreground
  # process group is ours; a spec process run by spec/run has none.
  def process_is_foreground(&block)
    MSpec.guard_result($stdin.respond_to?(:tty?) && $stdin.tty? ? true : false, &block)
  end
end
