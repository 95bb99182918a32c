# frozen_string_literal: false
#
# RbConfig: how this Carmine was built and where it lives, with the keys libraries read
# from CRuby's generated rbconfig.rb (RbConfig::CONFIG["ruby_version"], ["bindir"],
# ["host_os"], ["EXEEXT"] ...). `RbConfig` is autoloaded, as it is always present in a
# CRuby that loaded rubygems.
#
# Invariants:
# - Paths are this process's real ones: bindir is the directory of the running executable,
#   carmine_libdir is Carmine's lib/, and ruby_stdlib_dir is the CRuby standard library
#   Carmine found (see docs/stdlib.md), or "" when none.
# - Carmine loads no C extensions: archdir, rubyarchdir, sitearchdir and vendorarchdir are
#   "" and there are no compiler settings (CC, CFLAGS ...), so mkmf cannot build one; AR
#   and STRIP name the binutils of the toolchain that builds Carmine.
# - The site and vendor directories are where a Carmine installed under `prefix` would look;
#   they are not on $LOAD_PATH.
# - Carmine runs from its build directory and is not installed: TOPDIR is nil (CRuby's
#   convention for an uninstalled ruby), and prefix is the parent of bindir.
# - rubylibdir is the directory of the standard library (CRuby's, when found).
# - CONFIG values are Strings (not frozen, as CRuby's); MAKEFILE_CONFIG is the same Hash.

module RbConfig
  exe = begin
    File.readlink("/proc/self/exe")
  rescue SystemCallError
    File.expand_path($PROGRAM_NAME)
  end
  bindir = File.dirname(exe)
  prefix = File.dirname(bindir)
  major, minor, teeny = RUBY_VERSION.split(".")
  ruby_version = "#{major}.#{minor}.0"
  cpu = RUBY_PLATFORM.split("-").first
  stdlib = $LOAD_PATH.find { |d| File.file?(File.join(d, "optparse.rb")) } || ""

  TOPDIR = nil
  DESTDIR = ""

  CONFIG = {
    "MAJOR" => major, "MINOR" => minor, "TEENY" => teeny,
    "PATCHLEVEL" => RUBY_PATCHLEVEL.to_s,
    "ruby_version" => ruby_version,
    "RUBY_PROGRAM_VERSION" => RUBY_VERSION,
    "RUBY_API_VERSION" => "#{major}.#{minor}",
    "RUBY_BASE_NAME" => "carmine",
    "ruby_install_name" => "carmine",
    "RUBY_INSTALL_NAME" => "carmine",
    "RUBY_SO_NAME" => "carmine",
    "rubyw_install_name" => "",
    "RUBYW_INSTALL_NAME" => "",
    "RUBY_ENGINE" => RUBY_ENGINE,
    "RUBY_ENGINE_VERSION" => RUBY_ENGINE_VERSION,
    "arch" => "#{cpu}-linux",
    "platform" => "#{cpu}-linux",
    "sitearch" => "#{cpu}-linux",
    "host" => "#{cpu}-pc-linux-gnu",
    "host_cpu" => cpu, "host_vendor" => "pc", "host_os" => "linux-gnu",
    "target" => "#{cpu}-pc-linux-gnu",
    "target_cpu" => cpu, "target_vendor" => "pc", "target_os" => "linux",
    "build" => "#{cpu}-pc-linux-gnu",
    "build_cpu" => cpu, "build_vendor" => "pc", "build_os" => "linux-gnu",
    "EXEEXT" => "", "DLEXT" => "so", "SOEXT" => "so", "LIBEXT" => "a", "OBJEXT" => "o",
    "AR" => "ar", "STRIP" => "strip",
    "SHELL" => "/bin/sh", "PATH_SEPARATOR" => ":", "NULLCMD" => ":",
    "prefix" => prefix, "exec_prefix" => prefix,
    "bindir" => bindir,
    "libdir" => File.join(prefix, "lib"),
    "datadir" => File.join(prefix, "share"),
    "mandir" => File.join(prefix, "share", "man"),
    "includedir" => File.join(prefix, "include"),
    "sysconfdir" => "/etc", "localstatedir" => "/var",
    "rubylibprefix" => File.join(prefix, "lib", "carmine"),
    "rubylibdir" => stdlib.empty? ? __dir__ : stdlib,
    "carmine_libdir" => __dir__,
    "archdir" => "",
    "rubyarchdir" => "",
    "ruby_stdlib_dir" => stdlib,
    "sitedir" => File.join(prefix, "lib", "carmine", "site_ruby"),
    "sitelibdir" => File.join(prefix, "lib", "carmine", "site_ruby", ruby_version),
    "sitearchdir" => "",
    "vendordir" => File.join(prefix, "lib", "carmine", "vendor_ruby"),
    "vendorlibdir" => File.join(prefix, "lib", "carmine", "vendor_ruby", ruby_version),
    "vendorarchdir" => "",
    "topdir" => prefix,
    "UNICODE_VERSION" => "15.0.0",
    "UNICODE_EMOJI_VERSION" => "15.0",
  }
  CONFIG.transform_values! { |v| v.frozen? ? v.dup : v }
  MAKEFILE_CONFIG = CONFIG

  # The path of the running interpreter.
  def self.ruby
    File.join(CONFIG["bindir"], CONFIG["ruby_install_name"] + CONFIG["EXEEXT"])
  end

  # Expands "$(key)" references in +val+ from +config+ (values here hold none).
  def self.expand(val, config = CONFIG)
    val.gsub(/\$\$|\$\(([^()]+)\)|\$\{([^{}]+)\}/) do
      var = $1 || $2
      next "$" unless var
      config.key?(var) ? expand(config[var].dup, config) : $&
    end
  end

  def self.fire_update!(key, val, mkconf = MAKEFILE_CONFIG, conf = CONFIG)
    false
  end
end
