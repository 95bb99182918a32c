# frozen_string_literal: true
#
# tempfile: Tempfile, written in Ruby for Carmine. A Tempfile is a File opened
# read-write on a fresh name under Dir.tmpdir (created with O_EXCL, mode 0600);
# close! and unlink remove the file. Unlike CRuby's it is a File subclass rather
# than a delegator, so it answers File's methods directly.

require "tmpdir"

class Tempfile < File
  # A fresh path from basename ("prefix" or ["prefix", "suffix"]) under tmpdir.
  def self.make_tmpname(basename, tmpdir, n)
    prefix, suffix =
      case basename
      when String then [basename, ""]
      when Array then [basename[0], basename[1] || ""]
      else raise ArgumentError, "unexpected prefix: #{basename.inspect}"
      end
    raise ArgumentError, "unexpected prefix: #{prefix.inspect}" unless prefix.is_a?(String)
    raise ArgumentError, "unexpected suffix: #{suffix.inspect}" unless suffix.is_a?(String)
    t = Time.now.strftime("%Y%m%d")
    name = "#{prefix}#{t}-#{Process.pid}-#{rand(0x100000000).to_s(36)}#{n.zero? ? "" : "-#{n}"}#{suffix}"
    File.join(tmpdir || Dir.tmpdir, name)
  end

  # Creates the file with an exclusive open, retrying on a name clash.
  def self.create_path(basename, tmpdir)
    100.times do |n|
      path = make_tmpname(basename, tmpdir, n)
      begin
        File.open(path, File::RDWR | File::CREAT | File::EXCL, 0o600) { }
        return path
      rescue Errno::EEXIST
        next
      end
    end
    raise Errno::EEXIST, "cannot generate tempfile name"
  end

  def initialize(basename = "", tmpdir = nil, mode: 0, **options)
    path = Tempfile.create_path(basename, tmpdir)
    super(path, mode | File::RDWR, 0o600, **options)
    @tmpfile_path = path
    @tmpfile_mode = mode
    @tmpfile_options = options
  end

  def self.open(*args, **kw)
    t = new(*args, **kw)
    return t unless block_given?
    begin
      yield t
    ensure
      t.close
    end
  end

  # Tempfile.create: a plain File, removed after the block when one is given. With
  # anonymous: true the file has no name at all (O_TMPFILE; its path is the directory's).
  def self.create(basename = "", tmpdir = nil, mode: 0, anonymous: false, **options)
    if anonymous
      dir = File.join(tmpdir || Dir.tmpdir, "")
      f = File.new(dir, mode | File::RDWR | File::TMPFILE, 0o600, **options)
      return f unless block_given?
      begin
        return yield f
      ensure
        f.close unless f.closed?
      end
    end
    path = create_path(basename, tmpdir)
    f = File.new(path, mode | File::RDWR, 0o600, **options)
    return f unless block_given?
    begin
      yield f
    ensure
      f.close unless f.closed?
      File.unlink(path) if File.exist?(path)
    end
  end

  def path
    @tmpfile_path
  end

  # Reopens the file (after close), keeping its contents.
  def open
    close unless closed?
    reopen(@tmpfile_path, "r+")
    self
  end

  def close(unlink_now = false)
    _close
    unlink if unlink_now
    nil
  end

  protected def _close
    close_io = File.instance_method(:close).bind(self)
    close_io.call unless closed?
  end

  def close!
    close(true)
  end

  def unlink
    return unless @tmpfile_path
    begin
      File.unlink(@tmpfile_path)
    rescue Errno::ENOENT
      nil
    end
    @tmpfile_path = nil
  end
  alias delete unlink

  def size
    closed? ? File.size(@tmpfile_path) : super
  end
  alias length size

  def inspect
    "#<Tempfile:#{@tmpfile_path}#{closed? ? " (closed)" : ""}>"
  end
end
