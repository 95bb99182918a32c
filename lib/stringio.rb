# frozen_string_literal: false
#
# StringIO: an IO over a String, written in Ruby for Carmine.
#
# Invariants:
# - @string is the caller's String object (StringIO#string returns it, and
#   writes modify it in place); @pos is a byte offset into it and may lie past
#   its end (a later write pads with NUL bytes).
# - Reading and writing work on bytes: the result of a read is re-tagged with
#   the string's encoding (binary for `read(n)`, as in CRuby).
# - Readability and writability come from the mode given to `new` (a frozen
#   string opens read-only).

class StringIO
  include Enumerable

  VERSION = '3.1.2'
  MAX_LENGTH = 2**62 - 1

  module Readable
  end

  module Writable
  end

  attr_reader :lineno

  # With a block, the StringIO is closed after it and lets go of its string.
  def self.open(string = +'', mode = nil, **opts)
    io = new(string, mode, **opts)
    return io unless block_given?
    begin
      yield io
    ensure
      io.close unless io.closed?
      io.instance_variable_set(:@string, nil)
    end
  end

  def initialize(string = nil, mode = nil, **opts)
    string = +'' if string.nil?
    unless string.is_a?(String)
      raise TypeError, "no implicit conversion of #{string.class} into String" unless string.respond_to?(:to_str)
      string = string.to_str
    end
    mode = opts[:mode] if mode.nil? && opts.key?(:mode)
    @readable, @writable, append, truncate = parse_mode(mode, string)
    string.clear if truncate
    @string = string
    @append = append
    @pos = 0
    @lineno = 0
    @closed_read = false
    @closed_write = false
    @external_encoding = nil
    enc = opts[:external_encoding] || opts[:encoding]
    set_encoding(enc) if enc
  end

  def initialize_copy(other)
    super
    @string = other.string
  end

  # ---- state ----

  def string
    @string
  end

  def string=(str)
    str = str.to_str unless str.is_a?(String)
    @string = str
    @pos = 0
    @lineno = 0
    @readable = true
    @writable = !str.frozen?
    str
  end

  def reopen(string = nil, mode = nil)
    if string.is_a?(StringIO)
      @string = string.string
      @readable = string.instance_variable_get(:@readable)
      @writable = string.instance_variable_get(:@writable)
    else
      initialize(string.nil? ? +'' : string, mode)
    end
    @pos = 0
    @lineno = 0
    self
  end

  def pos
    check_open
    @pos
  end
  alias tell pos

  def pos=(n)
    n = Integer(n)
    raise Errno::EINVAL, 'Invalid argument' if n < 0
    @pos = n
  end

  def lineno=(n)
    @lineno = Integer(n)
  end

  def rewind
    @pos = 0
    @lineno = 0
    0
  end

  def seek(offset, whence = 0)
    raise IOError, "closed stream" if closed?
    offset = Integer(offset)
    base = case whence
           when 0, :SET, IO::SEEK_SET then 0
           when 1, :CUR, IO::SEEK_CUR then @pos
           when 2, :END, IO::SEEK_END then @string.bytesize
           else raise Errno::EINVAL, 'Invalid argument - invalid whence'
           end
    target = base + offset
    raise Errno::EINVAL, 'Invalid argument' if target < 0
    @pos = target
    0
  end

  def size
    check_open
    @string.bytesize
  end
  alias length size

  def eof?
    check_readable
    @pos >= @string.bytesize
  end
  alias eof eof?

  def close
    @closed_read = true
    @closed_write = true
    nil
  end

  def close_read
    raise IOError, 'closing non-duplex IO for reading' unless @readable
    @closed_read = true
    nil
  end

  def close_write
    raise IOError, 'closing non-duplex IO for writing' unless @writable
    @closed_write = true
    nil
  end

  # A side the mode never opened counts as closed (as CRuby's StringIO flags it).
  def closed?
    closed_read? && closed_write?
  end

  def closed_read?
    !@readable || @closed_read
  end

  def closed_write?
    !@writable || @closed_write
  end

  def sync
    true
  end

  def sync=(value)
    value
  end

  def flush
    self
  end

  def fsync
    0
  end

  def fileno
    nil
  end

  def fcntl(*)
    raise NotImplementedError, 'fcntl() function is unimplemented on this machine'
  end

  def isatty
    false
  end
  alias tty? isatty

  def pid
    nil
  end

  def binmode
    @external_encoding = Encoding::BINARY
    @string.force_encoding(Encoding::BINARY) unless @string.frozen?
    self
  end

  def external_encoding
    @external_encoding || @string.encoding
  end

  def internal_encoding
    nil
  end

  def set_encoding(ext, _int = nil, **_opts)
    enc = ext.nil? ? Encoding.default_external : (ext.is_a?(Encoding) ? ext : Encoding.find(ext.to_s.split(':').first))
    @external_encoding = enc
    @string.force_encoding(enc) unless @string.frozen?
    self
  end

  # Byte-order marks, longest first where one begins another (UTF-32LE's starts with
  # UTF-16LE's).
  BOMS = [
    ["\x00\x00\xFE\xFF".b, Encoding::UTF_32BE],
    ["\xFF\xFE\x00\x00".b, Encoding::UTF_32LE],
    ["\xEF\xBB\xBF".b, Encoding::UTF_8],
    ["\xFE\xFF".b, Encoding::UTF_16BE],
    ["\xFF\xFE".b, Encoding::UTF_16LE],
  ].freeze
  private_constant :BOMS

  # Reads a byte-order mark at the start: the string takes its encoding and reading
  # starts after it. nil when there is none (or the StringIO is not readable).
  def set_encoding_by_bom
    raise FrozenError, "can't modify frozen #{self.class}: #{inspect}" if frozen?
    return nil unless @readable && !@closed_read
    head = @string.byteslice(0, 4).b
    bom, enc = BOMS.find { |b, _| head.start_with?(b) }
    return nil unless bom
    set_encoding(enc)
    @pos = bom.bytesize
    enc
  end

  # ---- reading ----

  def read(length = nil, outbuf = nil)
    check_readable
    total = @string.bytesize
    if length.nil?
      data = @pos >= total ? '' : @string.byteslice(@pos, total - @pos)
      @pos = [@pos, total].max
      data = data.dup.force_encoding(external_encoding)
      return fill_buffer(outbuf, data)
    end
    length = Integer(length)
    raise ArgumentError, "negative length #{length} given" if length < 0
    if length == 0
      return fill_buffer(outbuf, String.new(encoding: Encoding::BINARY))
    end
    if @pos >= total
      outbuf.replace('') if outbuf
      return nil
    end
    data = @string.byteslice(@pos, length).b
    @pos += data.bytesize
    fill_buffer(outbuf, data)
  end

  def read_nonblock(length, outbuf = nil, exception: true)
    data = read(length, outbuf)
    if data.nil?
      return nil unless exception
      raise EOFError, 'end of file reached'
    end
    data
  end

  def sysread(length = nil, outbuf = nil)
    data = read(length, outbuf)
    raise EOFError, 'end of file reached' if data.nil? && length && length > 0
    data
  end
  alias readpartial sysread

  def pread(length, offset, outbuf = nil)
    check_readable
    length = Integer(length)
    offset = Integer(offset)
    raise ArgumentError, "negative string size (or size too big): #{length}" if length < 0
    raise Errno::EINVAL, "Invalid argument - pread(2): offset #{offset}" if offset < 0
    return fill_buffer(outbuf, String.new(encoding: Encoding::BINARY)) if length == 0
    raise EOFError, 'end of file reached' if offset >= @string.bytesize
    fill_buffer(outbuf, @string.byteslice(offset, length).b)
  end

  # What io/console gives IO-like objects (CRuby's IO::generic_readable); here always.
  def getch
    getc
  end

  def getpass(prompt = nil)
    $stderr.print(prompt) if prompt
    line = gets
    $stderr.puts
    line&.chomp
  end

  # Object#to_s: the contents are not shown.
  def inspect
    to_s
  end

  def getc
    check_readable
    return nil if @pos >= @string.bytesize
    rest = @string.byteslice(@pos, @string.bytesize - @pos).force_encoding(@string.encoding)
    c = rest[0]
    c = rest.byteslice(0, 1) if c.nil? || c.empty?
    @pos += c.bytesize
    c
  end

  def getbyte
    check_readable
    return nil if @pos >= @string.bytesize
    b = @string.getbyte(@pos)
    @pos += 1
    b
  end

  def readchar
    c = getc
    raise EOFError, 'end of file reached' if c.nil?
    c
  end

  def readbyte
    b = getbyte
    raise EOFError, 'end of file reached' if b.nil?
    b
  end

  def ungetc(c)
    check_readable
    return nil if c.nil?
    c = c.chr(@string.encoding) if c.is_a?(Integer)
    c = c.to_str unless c.is_a?(String)
    insert_before_pos(c)
    nil
  end

  def ungetbyte(b)
    check_readable
    return nil if b.nil?
    b = (b & 0xff).chr if b.is_a?(Integer)
    insert_before_pos(b.b)
    nil
  end

  def gets(*args, chomp: false)
    check_readable
    sep, limit = getline_args(args)
    line = read_line(sep, limit, chomp)
    $_ = line
    line
  end

  def readline(*args, chomp: false)
    line = gets(*args, chomp: chomp)
    raise EOFError, 'end of file reached' if line.nil?
    line
  end

  def each_line(*args, chomp: false)
    return to_enum(:each_line, *args, chomp: chomp) unless block_given?
    check_readable
    sep, limit = getline_args(args)
    raise ArgumentError, 'invalid limit: 0 for each_line' if limit == 0
    while (line = read_line(sep, limit, chomp))
      yield line
    end
    self
  end
  alias each each_line

  def readlines(*args, chomp: false)
    check_readable
    sep, limit = getline_args(args)
    raise ArgumentError, 'invalid limit: 0 for readlines' if limit == 0
    lines = []
    while (line = read_line(sep, limit, chomp))
      lines << line
    end
    lines
  end

  def each_char
    return to_enum(:each_char) unless block_given?
    while (c = getc)
      yield c
    end
    self
  end

  def each_byte
    return to_enum(:each_byte) unless block_given?
    while (b = getbyte)
      yield b
    end
    self
  end

  def each_codepoint
    return to_enum(:each_codepoint) unless block_given?
    each_char { |c| yield c.ord }
  end

  # ---- writing ----

  def write(*objects)
    check_writable
    objects.sum { |obj| write_string(obj.to_s) }
  end

  def syswrite(obj)
    write(obj)
  end

  def write_nonblock(obj, exception: true)
    write(obj)
  end

  def <<(obj)
    write(obj)
    self
  end

  def print(*args)
    args = [$_] if args.empty?
    args.each_with_index do |a, i|
      write($,) if $, && i > 0
      write(a.to_s)
    end
    write($\) if $\
    nil
  end

  def puts(*args)
    if args.empty?
      write("\n")
      return nil
    end
    args.each do |a|
      ary = a.is_a?(Array) ? a : (a.respond_to?(:to_ary) ? a.to_ary : nil)
      if ary.is_a?(Array)
        if ary.empty?
          write("\n") if args.size == 1
        elsif (@puts_seen ||= []).any? { |x| x.equal?(ary) }
          write("[...]\n")
        else
          @puts_seen << ary
          begin
            puts(*ary)
          ensure
            @puts_seen.pop
          end
        end
        next
      end
      s = a.nil? ? '' : a.to_s
      s = a.inspect unless s.is_a?(String)
      write(s)
      write("\n") unless s.end_with?("\n")
    end
    nil
  end

  def printf(format, *args)
    write(format % args)
    nil
  end

  def putc(obj)
    check_writable
    s = obj.is_a?(String) ? obj[0].to_s : (Integer(obj.to_int) & 0xff).chr
  rescue NoMethodError
    raise TypeError, "no implicit conversion of #{obj.class} into Integer"
  else
    write_string(s)
    obj
  end

  def truncate(length)
    check_writable
    length = Integer(length)
    raise Errno::EINVAL, "Invalid argument - negative length" if length < 0
    size = @string.bytesize
    if length < size
      @string.replace(@string.byteslice(0, length))
    else
      @string << ("\0" * (length - size))
    end
    0
  end

  private

  def parse_mode(mode, string)
    readable = true
    writable = !string.frozen?
    append = false
    truncate = false
    case mode
    when nil
      nil
    when Integer
      access = mode & 3
      readable = access == 0 || access == 2
      writable = access == 1 || access == 2
      append = mode & File::APPEND != 0
      truncate = mode & File::TRUNC != 0
    else
      m = mode.to_s.split(':').first.to_s
      readable = m.start_with?('r') || m.include?('+')
      writable = m.start_with?('w', 'a') || m.include?('+')
      append = m.start_with?('a')
      truncate = m.start_with?('w')
    end
    raise Errno::EACCES, 'Permission denied' if writable && string.frozen?
    [readable, writable, append, truncate]
  end

  def check_open
    nil
  end

  def check_readable
    raise IOError, 'not opened for reading' if !@readable || @closed_read
  end

  def check_writable
    raise IOError, 'not opened for writing' if !@writable || @closed_write
  end

  # The result goes into the caller's buffer, which keeps its encoding.
  def fill_buffer(outbuf, data)
    return data unless outbuf
    unless outbuf.is_a?(String)
      raise TypeError, "no implicit conversion of #{outbuf.class} into String" unless outbuf.respond_to?(:to_str)
      outbuf = outbuf.to_str
    end
    enc = outbuf.encoding
    outbuf.replace(data)
    outbuf.force_encoding(enc)
  end

  # Replaces bytes [from, from + len) of @string with `data`, in place.
  def splice(from, len, data)
    enc = @string.encoding
    bytes = @string.b
    tail_start = from + len
    tail = tail_start < bytes.bytesize ? bytes.byteslice(tail_start, bytes.bytesize - tail_start) : ''.b
    @string.replace(bytes.byteslice(0, from) + data.b + tail)
    @string.force_encoding(enc)
  end

  def write_string(s)
    return 0 if s.empty?
    @pos = @string.bytesize if @append
    size = @string.bytesize
    if @pos > size
      @string << ("\0" * (@pos - size))
      size = @pos
    end
    if @pos == size
      enc = @string.encoding
      @string.force_encoding(Encoding::BINARY)
      @string << s.b
      @string.force_encoding(enc)
    else
      overwrite = [s.bytesize, size - @pos].min
      splice(@pos, overwrite, s)
    end
    @pos += s.bytesize
    s.bytesize
  end

  def insert_before_pos(s)
    return if s.empty?
    size = @string.bytesize
    @pos = size if @pos > size
    if s.bytesize <= @pos
      @pos -= s.bytesize
      splice(@pos, s.bytesize, s)
    else
      splice(0, @pos, s)
      @pos = 0
    end
  end

  def getline_args(args)
    sep = $/
    limit = nil
    case args.size
    when 0
      nil
    when 1
      if args[0].nil?
        sep = nil
      elsif args[0].is_a?(String)
        sep = args[0]
      elsif args[0].respond_to?(:to_str)
        sep = args[0].to_str
      else
        limit = Integer(args[0])
      end
    else
      sep = args[0].nil? ? nil : args[0].to_str
      limit = args[1].nil? ? nil : Integer(args[1])
    end
    limit = nil if limit && limit < 0
    [sep, limit]
  end

  def read_line(sep, limit, chomp)
    total = @string.bytesize
    return nil if @pos >= total
    return (limit == 0 ? String.new(encoding: @string.encoding) : nil) if limit == 0
    rest = @string.byteslice(@pos, total - @pos).b
    paragraph = sep == ''
    if paragraph
      # Skip leading newlines; a paragraph ends at two or more newlines.
      skipped = 0
      skipped += 1 while rest.getbyte(skipped) == 10
      @pos += skipped
      rest = rest.byteslice(skipped, rest.bytesize - skipped)
      return nil if rest.empty?
      idx = rest.index("\n\n")
      if idx
        len = idx + 2
        sep_len = 2
      else
        len = rest.bytesize
        sep_len = 0
      end
    elsif sep.nil?
      len = rest.bytesize
      sep_len = 0
    else
      idx = rest.index(sep.b)
      if idx
        len = idx + sep.bytesize
        sep_len = sep.bytesize
      else
        len = rest.bytesize
        sep_len = 0
      end
    end
    if limit && limit < len
      len = limit
      # Do not split a multibyte character.
      enc = @string.encoding
      while len < rest.bytesize && !rest.byteslice(0, len).force_encoding(enc).valid_encoding?
        len += 1
      end
      sep_len = 0
    end
    line = rest.byteslice(0, len)
    @pos += len
    if paragraph && sep_len > 0
      @pos += 1 while @pos < total && @string.getbyte(@pos) == 10
    end
    line.force_encoding(@string.encoding)
    if chomp && sep_len > 0
      line = line.byteslice(0, len - sep_len).force_encoding(@string.encoding)
      line = line.chomp("\r") if sep == "\n" && line.end_with?("\r")
    elsif chomp && sep.nil?
      # No separator: nothing to remove.
    end
    @lineno += 1
    line
  end
end
