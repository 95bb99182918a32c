# Shared set-up of the standard-library tests: assertions, and skipping a file when the
# pure-Ruby standard library of CRuby (which Carmine loads, see docs/stdlib.md) is not
# installed. A skipped file prints why and exits successfully.

require_relative "../assert"
require "rbconfig"

module StdlibTest
  # Skips the rest of this file unless every library in +libs+ can be required.
  def self.require_libs(*libs)
    if RbConfig::CONFIG["ruby_stdlib_dir"] == ""
      skip("the CRuby standard library is not installed (Debian: apt-get install libruby3.1; or set CARMINE_RUBY_STDLIB)")
    end
    libs.each do |lib|
      require lib
    rescue LoadError => e
      skip("#{lib} cannot be loaded: #{e.message}")
    end
  end

  def self.skip(reason)
    puts "skipped #{File.basename($PROGRAM_NAME)}: #{reason}"
    $stdout.flush
    exit!(0)
  end

  # A fresh directory for the block, removed after it (without tmpdir/fileutils, which
  # some tests are about).
  def self.scratch_dir
    base = File.join(ENV.fetch("TMPDIR", "/tmp"), "carmine-stdlib-#{Process.pid}-#{rand(1 << 30)}")
    Dir.mkdir(base, 0o700)
    yield base
  ensure
    system("rm", "-rf", base) if base
  end
end
