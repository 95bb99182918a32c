# frozen_string_literal: true
#
# Zlib::GzipFile, GzipReader and GzipWriter, and Zlib.gzip / Zlib.gunzip: the gzip file
# format (RFC 1952) over the native raw-deflate streams of `require "zlib"`
# (crates/carmine-vm/src/stdlib/zlib), with CRuby's API and messages.
#
# Invariants:
# - A GzipWriter writes the header at its first write/flush/close (mtime, orig_name and
#   comment may be set only before), then raw deflate data, then the footer (CRC-32 and
#   length, little-endian) at close/finish.
# - A GzipReader parses the header in `initialize`, then inflates on demand into @buf
#   (decompressed bytes not yet read, from @off on). When the deflate data ends, the
#   footer is checked and the raw bytes after it are kept for `unused` / `zcat`.
# - A reader over a String (Zlib.gunzip) raises "unexpected end of string" where a reader
#   over an IO raises its end-of-file errors.

module Zlib
  class GzipFile
    class Error < Zlib::Error
      attr_reader :input

      def initialize(msg = nil, input = nil)
        super(msg)
        @input = input
      end

      def inspect
        s = super
        @input ? s.sub(/>\z/, ", input=#{@input.inspect}>") : s
      end
    end

    class NoFooter < Error; end
    class CRCError < Error; end
    class LengthError < Error; end

    MAGIC = "\x1f\x8b".b
    FLAG_MULTIPART = 0x02
    FLAG_EXTRA = 0x04
    FLAG_ORIG_NAME = 0x08
    FLAG_COMMENT = 0x10
    FLAG_ENCRYPT = 0x20
    FLAG_UNKNOWN_MASK = 0xc0
    EXTRAFLAG_FAST = 0x4
    EXTRAFLAG_SLOW = 0x2
    private_constant :MAGIC, :FLAG_MULTIPART, :FLAG_EXTRA, :FLAG_ORIG_NAME, :FLAG_COMMENT,
                     :FLAG_ENCRYPT, :FLAG_UNKNOWN_MASK, :EXTRAFLAG_FAST, :EXTRAFLAG_SLOW

    def self.wrap(*args, **opts)
      gz = opts.empty? ? new(*args) : new(*args, **opts)
      return gz unless block_given?
      begin
        yield gz
      ensure
        gz.close unless gz.closed?
      end
    end

    def level
      check_open
      @level
    end

    def os_code
      check_open
      @os_code
    end

    def orig_name
      check_open
      @orig_name&.dup
    end

    def comment
      check_open
      @comment&.dup
    end

    def crc
      check_open
      @crc
    end

    def mtime
      check_open
      Time.at(@mtime)
    end

    def to_io
      check_open
      @io
    end

    def closed?
      @closed
    end

    def sync
      @sync
    end

    def sync=(flag)
      @sync = flag ? true : false
    end

    def close
      io = finish
      io.close if io.respond_to?(:close)
      io
    end

    private

    def check_open
      raise GzipFile::Error, "closed gzip stream" if @closed
    end

    def init_common(io)
      @io = io
      @closed = false
      @sync = false
      @mtime = 0
      @orig_name = nil
      @comment = nil
      @crc = 0
      @os_code = OS_CODE
      @level = DEFAULT_COMPRESSION
    end
  end

  class GzipWriter < GzipFile
    def self.open(filename, level = nil, strategy = nil, **opts, &block)
      file = File.open(filename, "wb")
      begin
        wrap(file, level, strategy, **opts, &block)
      rescue Exception
        file.close unless file.closed?
        raise
      end
    end

    def initialize(io, level = nil, strategy = nil, **opts)
      init_common(io)
      @level = level.nil? ? DEFAULT_COMPRESSION : Integer(level)
      @deflate = Zlib::Deflate.new(@level, -MAX_WBITS, DEF_MEM_LEVEL, strategy.nil? ? DEFAULT_STRATEGY : strategy)
      @header_written = false
      @mtime_set = false
      @pos = 0
      @encoding = opts[:external_encoding] || opts[:encoding]
    end

    def mtime=(t)
      check_open
      raise GzipFile::Error, "header is already written" if @header_written
      @mtime = t.respond_to?(:to_i) ? t.to_i : Integer(t)
      @mtime_set = true
      t
    end

    def orig_name=(s)
      check_open
      raise GzipFile::Error, "header is already written" if @header_written
      s = String(s).dup
      s = s[0, s.index("\0")] if s.include?("\0")
      @orig_name = s
    end

    def comment=(s)
      check_open
      raise GzipFile::Error, "header is already written" if @header_written
      s = String(s).dup
      s = s[0, s.index("\0")] if s.include?("\0")
      @comment = s
    end

    def pos
      @pos
    end
    alias tell pos

    def write(*strs)
      check_open
      write_header unless @header_written
      n = 0
      strs.each do |s|
        s = s.to_s
        s = s.encode(@encoding) if @encoding && s.encoding != @encoding && s.encoding != Encoding::BINARY
        b = s.b
        next if b.empty?
        @crc = Zlib.crc32(b, @crc)
        @pos += b.bytesize
        out = @deflate.deflate(b, @sync ? SYNC_FLUSH : NO_FLUSH)
        @io.write(out) unless out.empty?
        n += b.bytesize
      end
      n
    end

    def <<(s)
      write(s)
      self
    end

    def print(*args)
      args = [$_] if args.empty?
      args.each_with_index do |a, i|
        write($,) if $, && i > 0
        write(a)
      end
      write($\) if $\
      nil
    end

    def printf(*args)
      write(format(*args))
      nil
    end

    def putc(c)
      write(c.is_a?(Integer) ? (c & 0xff).chr : c.to_s[0])
      c
    end

    def puts(*args)
      if args.empty?
        write("\n")
        return nil
      end
      args.each do |a|
        if a.is_a?(Array)
          a.flatten.each { |x| puts(x) }
          next
        end
        s = a.nil? ? "" : a.to_s
        write(s.end_with?("\n") ? s : s + "\n")
      end
      nil
    end

    def flush(flush = SYNC_FLUSH)
      check_open
      write_header unless @header_written
      if flush != NO_FLUSH
        out = @deflate.flush(flush)
        @io.write(out) unless out.empty?
      end
      @io.flush if @io.respond_to?(:flush)
      self
    end

    def finish
      check_open
      write_header unless @header_written
      out = @deflate.finish
      @io.write(out) unless out.empty?
      @io.write([@crc, @pos & 0xffffffff].pack("VV"))
      @deflate.close
      @closed = true
      @io
    end

    private

    def write_header
      flags = 0
      flags |= FLAG_ORIG_NAME if @orig_name
      flags |= FLAG_COMMENT if @comment
      @mtime = Time.now.to_i unless @mtime_set
      xfl = case @level
            when BEST_SPEED then EXTRAFLAG_FAST
            when BEST_COMPRESSION then EXTRAFLAG_SLOW
            else 0
            end
      h = [0x1f, 0x8b, 8, flags, @mtime & 0xffffffff, xfl, @os_code].pack("CCCCVCC")
      h << @orig_name.b << "\0" if @orig_name
      h << @comment.b << "\0" if @comment
      @io.write(h)
      @header_written = true
    end
  end

  class GzipReader < GzipFile
    include Enumerable

    READ_SIZE = 16 * 1024
    private_constant :READ_SIZE

    def self.open(filename, *args, **opts, &block)
      file = File.open(filename, "rb")
      begin
        wrap(file, *args, **opts, &block)
      rescue Exception
        file.close unless file.closed?
        raise
      end
    end

    # Each member of a multi-member gzip stream in turn: yields the decompressed Strings,
    # or answers them joined.
    # Reads every member of a multi-member gzip stream: yields their lines, or answers
    # their data joined.
    def self.zcat(io, *args, **opts, &block)
      out = block ? nil : "".b
      loop do
        gz = new(io, *args, **opts)
        block ? gz.each(&block) : out << gz.read
        gz.read
        rest = gz.unused
        gz.finish
        pos = io.pos
        if rest
          pos -= rest.bytesize
          io.pos = pos
        end
        break unless pos < io.size
      end
      out
    end

    def initialize(io, opts = {}, **kw)
      opts = opts.merge(kw)
      init_common(io)
      @source = nil
      if io.is_a?(String)
        # Zlib.gunzip: the raw data is a String, not an IO.
        @source = io.b
        @io = nil
      end
      @raw = "".b
      @buf = "".b
      @off = 0
      @lineno = 0
      @unused = nil
      @z_finished = false
      @footer_checked = false
      @total_out = 0
      @start_pos = (@io.pos rescue nil)
      enc = opts[:external_encoding] || opts[:encoding]
      enc = enc.split(":").first if enc.is_a?(String)
      @encoding = enc ? Encoding.find(enc.to_s) : Encoding.default_external
      @encoding = Encoding.find(opts[:internal_encoding].to_s) if opts[:internal_encoding]
      read_header
      @inflate = Zlib::Inflate.new(-MAX_WBITS)
    end

    def external_encoding
      @encoding
    end

    attr_accessor :lineno

    def unused
      return nil unless @z_finished && @off >= @buf.bytesize
      at_end
      @unused
    end

    def pos
      @total_out - (@buf.bytesize - @off)
    end
    alias tell pos

    def eof?
      check_open
      fill(1) if @off >= @buf.bytesize
      @off >= @buf.bytesize && @z_finished
    end
    alias eof eof?

    def rewind
      check_open
      raise GzipFile::Error, "cannot rewind" unless @io.respond_to?(:seek)
      @io.seek(@start_pos || 0)
      @raw = "".b
      @buf = "".b
      @off = 0
      @lineno = 0
      @unused = nil
      @z_finished = false
      @footer_checked = false
      @total_out = 0
      @crc = 0
      read_header
      @inflate.close unless @inflate.closed?
      @inflate = Zlib::Inflate.new(-MAX_WBITS)
      0
    end

    def finish
      check_open
      at_end if @z_finished && @off >= @buf.bytesize
      @inflate.close unless @inflate.closed?
      @closed = true
      @io
    end

    def close
      io = finish
      io.close if io.respond_to?(:close)
      io
    end

    def read(len = nil, outbuf = nil)
      check_open
      if len.nil?
        fill(nil)
        at_end if @off >= @buf.bytesize
        s = take(@buf.bytesize - @off)
        s.force_encoding(@encoding)
        return replace_into(outbuf, s)
      end
      len = Integer(len)
      raise ArgumentError, "negative length #{len} given" if len < 0
      return replace_into(outbuf, "".b) if len == 0
      fill(len)
      if @off >= @buf.bytesize
        at_end
        outbuf&.replace("")
        return nil
      end
      replace_into(outbuf, take([len, @buf.bytesize - @off].min))
    end

    def readpartial(maxlen, outbuf = nil)
      check_open
      maxlen = Integer(maxlen)
      raise ArgumentError, "negative length #{maxlen} given" if maxlen < 0
      fill(1) if @off >= @buf.bytesize
      if @off >= @buf.bytesize && maxlen > 0
        at_end
        raise EOFError, "end of file reached"
      end
      replace_into(outbuf, take([maxlen, @buf.bytesize - @off].min))
    end

    def getbyte
      check_open
      fill(1) if @off >= @buf.bytesize
      return at_end && nil if @off >= @buf.bytesize
      b = @buf.getbyte(@off)
      @off += 1
      b
    end

    def readbyte
      getbyte or raise EOFError, "end of file reached"
    end

    def each_byte
      return enum_for(:each_byte) unless block_given?
      while (b = getbyte)
        yield b
      end
      nil
    end

    def getc
      check_open
      fill(1) if @off >= @buf.bytesize
      return at_end && nil if @off >= @buf.bytesize
      fill(4) if @buf.bytesize - @off < 4
      rest = @buf.byteslice(@off, 4).force_encoding(@encoding)
      c = rest.chr
      c = rest.byteslice(0, 1) unless c.valid_encoding?
      @off += c.bytesize
      c.force_encoding(@encoding)
    end

    def readchar
      getc or raise EOFError, "end of file reached"
    end

    def each_char
      return enum_for(:each_char) unless block_given?
      while (c = getc)
        yield c
      end
      nil
    end

    def ungetc(s)
      check_open
      s = s.is_a?(Integer) ? s.chr(@encoding) : s.to_s
      unshift(s.b)
      nil
    end

    def ungetbyte(b)
      check_open
      return nil if b.nil?
      unshift(b.is_a?(Integer) ? (b & 0xff).chr.b : b.to_s.b)
      nil
    end

    def gets(*args, chomp: false)
      check_open
      sep, limit = line_args(args)
      line = read_line(sep, limit, chomp)
      @lineno += 1 if line
      line
    end

    def readline(*args, **kw)
      gets(*args, **kw) or raise EOFError, "end of file reached"
    end

    def each_line(*args, chomp: false, &block)
      return enum_for(:each_line, *args, chomp: chomp) unless block
      sep, limit = line_args(args)
      if limit.nil? && sep && !sep.empty?
        each_line_fast(sep.b, chomp, &block)
      else
        while (line = gets(*args, chomp: chomp))
          yield line
        end
      end
      self
    end
    alias each each_line

    def readlines(*args, chomp: false)
      lines = []
      each_line(*args, chomp: chomp) { |line| lines << line }
      lines
    end

    private

    def line_args(args)
      sep = $/
      limit = nil
      case args.size
      when 0
      when 1
        a = args[0]
        if a.nil? || a.is_a?(String) || a.respond_to?(:to_str)
          sep = a.nil? ? nil : a.to_str
        else
          limit = Integer(a)
        end
      else
        sep = args[0].nil? ? nil : args[0].to_str
        limit = args[1].nil? ? nil : Integer(args[1])
      end
      [sep, limit]
    end

    def read_line(sep, limit, chomp)
      return "".force_encoding(@encoding) if limit == 0
      paragraph = sep == ""
      if paragraph
        skip_newlines
        sep = "\n\n"
      end
      sep = sep&.b
      fill(1) if @off >= @buf.bytesize
      return at_end && nil if @off >= @buf.bytesize
      idx = nil
      loop do
        if sep
          idx = @buf.byteindex(sep, @off)
          break if idx
        end
        break if limit && @buf.bytesize - @off >= limit
        break if @z_finished
        fill(@buf.bytesize - @off + READ_SIZE)
      end
      n = idx ? idx - @off + sep.bytesize : @buf.bytesize - @off
      if limit && n > limit
        n = limit
        # Keep a character whole.
        n += 1 while @off + n < @buf.bytesize && (@buf.getbyte(@off + n) & 0xc0) == 0x80 && @encoding == Encoding::UTF_8
      end
      line = take(n).force_encoding(@encoding)
      skip_newlines if paragraph
      if chomp && idx && line.end_with?(sep.dup.force_encoding(@encoding))
        line = line.byteslice(0, line.bytesize - sep.bytesize)
        line.chomp!("\r") if sep == "\n"
      end
      line
    end

    # each_line with a plain separator: lines are cut straight from the buffer, @off
    # moving past each before it is yielded (so the block may read from the reader too).
    def each_line_fast(sep, chomp)
      check_open
      sl = sep.bytesize
      enc = @encoding
      loop do
        fill(1) if @off >= @buf.bytesize
        if @off >= @buf.bytesize
          at_end
          return
        end
        buf = @buf
        while (i = buf.byteindex(sep, @off))
          n = i + sl - @off
          line = buf.byteslice(@off, chomp ? n - sl : n).force_encoding(enc)
          line.chomp!("\r") if chomp && sep == "\n"
          @off = i + sl
          @lineno += 1
          yield line
          break unless buf.equal?(@buf)
        end
        next unless buf.equal?(@buf)
        if @z_finished
          next if @off >= @buf.bytesize
          line = take(@buf.bytesize - @off).force_encoding(enc)
          @lineno += 1
          yield line
        else
          fill(@buf.bytesize - @off + READ_SIZE)
        end
      end
    end

    def skip_newlines
      loop do
        fill(1) if @off >= @buf.bytesize
        break if @off >= @buf.bytesize || @buf.getbyte(@off) != 10
        @off += 1
      end
    end

    def replace_into(outbuf, s)
      return s unless outbuf
      outbuf.replace(s)
      outbuf
    end

    # The next n decompressed bytes (as a new binary String).
    def take(n)
      s = @buf.byteslice(@off, n)
      @off += n
      if @off >= @buf.bytesize
        @buf = "".b
        @off = 0
      end
      s
    end

    def unshift(bytes)
      @buf = bytes + @buf.byteslice(@off, @buf.bytesize - @off)
      @off = 0
    end

    # Inflates until @buf holds n bytes past @off (all of it when n is nil) or the data ends.
    def fill(n)
      until @z_finished || (n && @buf.bytesize - @off >= n)
        chunk = read_raw_chunk
        raise GzipFile::Error, (@source ? "unexpected end of string" : "unexpected end of file") if chunk.nil?
        fed = chunk.bytesize
        before_in = @inflate.total_in
        out = @inflate.inflate(chunk)
        unless out.empty?
          @crc = Zlib.crc32(out, @crc)
          @total_out += out.bytesize
          if @off > 0 && @off >= @buf.bytesize / 2
            @buf = @buf.byteslice(@off, @buf.bytesize - @off)
            @off = 0
          end
          @buf << out
        end
        next unless @inflate.finished?
        used = @inflate.total_in - before_in
        @raw = chunk.byteslice(used, fed - used)
        @z_finished = true
      end
    end

    # At the end of the data (nothing left to read), the footer is checked once.
    def at_end
      check_footer unless @footer_checked
    end

    def check_footer
      unless raw_ensure(8)
        raise GzipFile::Error, "unexpected end of string" if @source
        raise GzipFile::NoFooter.new("footer is not found", nil)
      end
      crc, len = @raw.byteslice(0, 8).unpack("VV")
      rest = @raw.byteslice(8, @raw.bytesize - 8)
      @unused = rest.empty? ? nil : rest
      @footer_checked = true
      raise GzipFile::CRCError.new("invalid compressed data -- crc error", nil) if crc != @crc
      raise GzipFile::LengthError.new("invalid compressed data -- length error", nil) if len != (@total_out & 0xffffffff)
    end

    # Raw (compressed) bytes: what is left from the header first, then the source.
    def read_raw_chunk
      unless @raw.empty?
        s = @raw
        @raw = "".b
        return s
      end
      if @source
        return nil if @source.empty?
        s = @source
        @source = "".b
        return s
      end
      if @io.respond_to?(:readpartial)
        begin
          @io.readpartial(READ_SIZE)
        rescue EOFError
          nil
        end
      else
        s = @io.read(READ_SIZE)
        s.nil? || s.empty? ? nil : s
      end
    end

    # Ensures @raw holds at least n bytes; false at the end of the data.
    def raw_ensure(n)
      while @raw.bytesize < n
        more = @source ? (@source.empty? ? nil : @source.slice!(0, @source.bytesize)) : read_raw_io
        return false if more.nil?
        @raw << more.b
      end
      true
    end

    def read_raw_io
      if @io.respond_to?(:readpartial)
        begin
          @io.readpartial(READ_SIZE)
        rescue EOFError
          nil
        end
      else
        s = @io.read(READ_SIZE)
        s.nil? || s.empty? ? nil : s
      end
    end

    def header_error(msg)
      raise GzipFile::Error.new(@source ? "unexpected end of string" : msg, nil)
    end

    def read_header
      unless raw_ensure(10)
        raise GzipFile::Error.new(@source ? "unexpected end of string" : "not in gzip format", @raw.empty? ? nil : @raw)
      end
      h = @raw.byteslice(0, 10)
      raise GzipFile::Error.new("not in gzip format", @raw) unless h.byteslice(0, 2) == MAGIC
      method = h.getbyte(2)
      raise GzipFile::Error, "unsupported compression method #{method}" if method != 8
      flags = h.getbyte(3)
      raise GzipFile::Error, "multi-part gzip file is not supported" if flags & FLAG_MULTIPART != 0
      raise GzipFile::Error, "encrypted gzip file is not supported" if flags & FLAG_ENCRYPT != 0
      raise GzipFile::Error, format("unknown flags 0x%02x", flags) if flags & FLAG_UNKNOWN_MASK != 0
      @mtime = h.byteslice(4, 4).unpack1("V")
      xfl = h.getbyte(8)
      @level = if xfl & EXTRAFLAG_FAST != 0 then BEST_SPEED
               elsif xfl & EXTRAFLAG_SLOW != 0 then BEST_COMPRESSION
               else DEFAULT_COMPRESSION
               end
      @os_code = h.getbyte(9)
      @raw = @raw.byteslice(10, @raw.bytesize - 10)
      if flags & FLAG_EXTRA != 0
        header_error("unexpected end of file") unless raw_ensure(2)
        n = @raw.byteslice(0, 2).unpack1("v")
        header_error("unexpected end of file") unless raw_ensure(2 + n)
        @raw = @raw.byteslice(2 + n, @raw.bytesize - 2 - n)
      end
      @orig_name = read_cstring if flags & FLAG_ORIG_NAME != 0
      @comment = read_cstring if flags & FLAG_COMMENT != 0
    end

    def read_cstring
      until (i = @raw.index("\0".b))
        header_error("unexpected end of file") unless raw_ensure(@raw.bytesize + 1)
      end
      s = @raw.byteslice(0, i)
      @raw = @raw.byteslice(i + 1, @raw.bytesize - i - 1)
      s.force_encoding(Encoding::BINARY)
    end
  end

  def self.gzip(src, level: nil, strategy: nil)
    io = StringIOLike.new
    gz = GzipWriter.new(io, level, strategy)
    gz.write(src)
    gz.finish
    io.string
  end

  def self.gunzip(src)
    src = String(src)
    gz = GzipReader.new(src)
    data = gz.read
    gz.send(:at_end)
    data.force_encoding(Encoding::BINARY)
  ensure
    gz&.finish unless gz&.closed?
  end

  # The least of an IO that Zlib.gzip writes into.
  class StringIOLike
    attr_reader :string

    def initialize
      @string = "".b
    end

    def write(s)
      @string << s.b
      s.bytesize
    end
  end
  private_constant :StringIOLike
end
