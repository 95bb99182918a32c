# Version numbers as the guards compare them.
#
# A SpecVersion is a list of integer components ("3.4.1" -> [3, 4, 1]) padded
# to three parts. An inclusive range end ("..3.2") is built with `ceil: true`
# so that it covers every patch release of that version (3.2.x).
#
# ruby/spec's spec_helper.rb aborts unless VersionGuard::FULL_RUBY_VERSION is
# at least the oldest Ruby it supports (3.3). That constant is used only for
# that check; the guards (`ruby_version_is`, `ruby_bug`) compare against
# MSpec.ruby_version, the version of the running implementation. So on CRuby
# 3.1 the files load, and a `ruby_version_is "3.3"` block is still skipped.

class SpecVersion
  include Comparable

  attr_reader :parts

  def initialize(version, ceil = false)
    @text = version.to_s
    parts = @text.split('.').map { |s| s.to_i }
    filler = ceil ? 999_999 : 0
    parts << filler while parts.size < 3
    @parts = parts
  end

  def <=>(other)
    other = SpecVersion.new(other) unless other.is_a?(SpecVersion)
    # Compared component by component (not with Array#<=>) so that the
    # guards work on an implementation still missing parts of Array.
    theirs = other.parts
    i = 0
    while i < @parts.size && i < theirs.size
      c = @parts[i] <=> theirs[i]
      return c unless c == 0
      i += 1
    end
    @parts.size <=> theirs.size
  end

  def to_s
    @text
  end

  def inspect
    "#<SpecVersion #{@text}>"
  end
end

module MSpec
  OLDEST_SUPPORTED_RUBY = '3.3'

  def self.ruby_version
    @ruby_version ||= SpecVersion.new(RUBY_VERSION)
  end

  # True when `version` (a String such as "3.1", or a Range of them with ""
  # meaning unbounded) includes the running version.
  def self.version_matches?(version, running = MSpec.ruby_version)
    if version.is_a?(Range)
      low = version.begin.to_s
      high = version.end.to_s
      return false if !low.empty? && running < SpecVersion.new(low)
      unless high.empty?
        if version.exclude_end?
          return false unless running < SpecVersion.new(high)
        else
          return false unless running <= SpecVersion.new(high, true)
        end
      end
      true
    else
      running >= SpecVersion.new(version.to_s)
    end
  end
end

module VersionGuard
  actual = SpecVersion.new(RUBY_VERSION)
  oldest = SpecVersion.new(MSpec::OLDEST_SUPPORTED_RUBY)
  FULL_RUBY_VERSION = actual < oldest ? oldest : actual
end
