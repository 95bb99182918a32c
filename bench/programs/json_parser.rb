# A recursive-descent JSON parser written in Ruby (byte scanning with getbyte, substring
# extraction, Hash and Array building), run over a generated ~1 MB document.
class JsonParser
  class ParseError < StandardError; end

  def initialize(text)
    @s = text
    @i = 0
    @n = text.bytesize
  end

  def parse
    v = value
    skip_ws
    raise ParseError, "trailing data at #{@i}" if @i < @n
    v
  end

  private

  def skip_ws
    while @i < @n
      c = @s.getbyte(@i)
      break unless c == 32 || c == 10 || c == 13 || c == 9
      @i += 1
    end
  end

  def value
    skip_ws
    c = @s.getbyte(@i)
    case c
    when 123 then object   # {
    when 91 then array     # [
    when 34 then string    # "
    when 116 then literal("true", true)
    when 102 then literal("false", false)
    when 110 then literal("null", nil)
    else number
    end
  end

  def literal(word, v)
    raise ParseError, "bad literal at #{@i}" unless @s[@i, word.size] == word
    @i += word.size
    v
  end

  def object
    @i += 1
    h = {}
    skip_ws
    if @s.getbyte(@i) == 125
      @i += 1
      return h
    end
    while true
      skip_ws
      raise ParseError, "key expected at #{@i}" unless @s.getbyte(@i) == 34
      k = string
      skip_ws
      raise ParseError, "colon expected at #{@i}" unless @s.getbyte(@i) == 58
      @i += 1
      h[k] = value
      skip_ws
      c = @s.getbyte(@i)
      @i += 1
      return h if c == 125
      raise ParseError, "comma expected at #{@i - 1}" unless c == 44
    end
  end

  def array
    @i += 1
    a = []
    skip_ws
    if @s.getbyte(@i) == 93
      @i += 1
      return a
    end
    while true
      a << value
      skip_ws
      c = @s.getbyte(@i)
      @i += 1
      return a if c == 93
      raise ParseError, "comma expected at #{@i - 1}" unless c == 44
    end
  end

  def string
    @i += 1
    start = @i
    buf = nil
    while true
      c = @s.getbyte(@i)
      raise ParseError, "unterminated string" if c.nil?
      if c == 34
        part = @s[start, @i - start]
        @i += 1
        return buf ? buf << part : part
      elsif c == 92
        buf ||= String.new
        buf << @s[start, @i - start]
        e = @s.getbyte(@i + 1)
        buf << case e
               when 110 then "\n"
               when 116 then "\t"
               when 117 then @s[@i + 2, 4].to_i(16).chr
               else e.chr
               end
        @i += e == 117 ? 6 : 2
        start = @i
      else
        @i += 1
      end
    end
  end

  def number
    start = @i
    float = false
    while @i < @n
      c = @s.getbyte(@i)
      if (c >= 48 && c <= 57) || c == 45 || c == 43
        @i += 1
      elsif c == 46 || c == 101 || c == 69
        float = true
        @i += 1
      else
        break
      end
    end
    raise ParseError, "value expected at #{start}" if start == @i
    t = @s[start, @i - start]
    float ? t.to_f : t.to_i
  end
end

# Deterministic document generator (a linear congruential generator, no Random).
class Gen
  def initialize = (@x = 12345)
  def rand(n) = (@x = (@x * 1103515245 + 12345) & 0x7fffffff) % n

  WORDS = %w[alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu]

  def value(depth)
    case depth > 3 ? rand(4) : rand(7)
    when 0 then rand(100_000).to_s
    when 1 then "#{rand(1000)}.#{rand(1000)}"
    when 2 then "\"#{WORDS[rand(WORDS.size)]} #{rand(100)}\\n\""
    when 3 then %w[true false null][rand(3)]
    when 4, 5 then "{" + Array.new(rand(6)) { |i| "\"#{WORDS[rand(WORDS.size)]}#{i}\": #{value(depth + 1)}" }.join(", ") + "}"
    else "[" + Array.new(rand(8)) { value(depth + 1) }.join(",") + "]"
    end
  end
end

def walk(v)
  case v
  when Hash then v.inject(1) { |s, (k, x)| s + k.size + walk(x) }
  when Array then v.inject(1) { |s, x| s + walk(x) }
  when String then v.size
  when Integer then v % 97
  when Float then v.floor % 89
  else 1
  end
end

gen = Gen.new
doc = "[" + Array.new(10_000) { gen.value(0) }.join(",\n") + "]"
total = 0
10.times { total += walk(JsonParser.new(doc).parse) }
puts doc.bytesize
puts total
