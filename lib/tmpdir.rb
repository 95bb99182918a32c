# frozen_string_literal: true
#
# tmpdir: Dir.tmpdir and Dir.mktmpdir, written in Ruby for Carmine.
#
# Dir.mktmpdir creates a directory that only the user can use (mode 0700) under
# Dir.tmpdir; with a block it is removed, with its contents, after the block (with
# FileUtils.remove_entry, as CRuby's tmpdir does, when the standard library's fileutils is
# installed).

begin
  require "fileutils"
rescue LoadError
end

class Dir
  # The directory for temporary files: $TMPDIR (when it is a writable directory) or /tmp.
  def self.tmpdir
    env = ENV["TMPDIR"]
    return env.dup if env && !env.empty? && File.directory?(env) && File.writable?(env)
    "/tmp"
  end

  # Creates a fresh directory named from prefix_suffix ("prefix" or ["prefix", "suffix"]).
  def self.mktmpdir(prefix_suffix = nil, tmpdir = nil, **_options)
    prefix, suffix =
      case prefix_suffix
      when nil then ["d", ""]
      when String then [prefix_suffix, ""]
      when Array then [prefix_suffix[0].to_s, prefix_suffix[1].to_s]
      else raise ArgumentError, "unexpected prefix_suffix: #{prefix_suffix.inspect}"
      end
    base = tmpdir || Dir.tmpdir
    path = nil
    100.times do |n|
      t = Time.now.strftime("%Y%m%d")
      candidate = File.join(base, "#{prefix}#{t}-#{Process.pid}-#{rand(0x100000000).to_s(36)}#{n.zero? ? "" : "-#{n}"}#{suffix}")
      begin
        Dir.mkdir(candidate, 0700)
        path = candidate
        break
      rescue Errno::EEXIST
        next
      end
    end
    raise Errno::EEXIST, "cannot generate a temporary directory name" unless path
    return path unless block_given?
    begin
      yield path.dup
    ensure
      if defined?(FileUtils.remove_entry)
        FileUtils.remove_entry(path)
      elsif File.directory?(path)
        __remove_tree(path)
      end
    end
  end

  def self.__remove_tree(path) # :nodoc:
    Dir.children(path).each do |c|
      full = File.join(path, c)
      if File.directory?(full) && !File.symlink?(full)
        __remove_tree(full)
      else
        File.delete(full)
      end
    end
    Dir.rmdir(path)
  end
  private_class_method :__remove_tree
end
