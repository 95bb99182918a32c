# Prints a Ruby program of about N lines (default 10,000) for bench/bytecode/run: classes
# with methods that use the common constructs (blocks, string interpolation, hashes,
# case/when, rescue, keyword arguments), defined at load time; the program then calls a
# few of them, so that running it costs little beside parsing and compiling it.

lines = Integer(ARGV[0] || 10_000)
out = []
i = 0
while out.size < lines
  out << "class Generated#{i}"
  out << "  LIMIT = #{i % 97}"
  out << "  def initialize(name, size: #{i % 13})"
  out << "    @name = name"
  out << "    @size = size"
  out << "    @items = (1..size).map { |k| k * #{i % 7 + 1} }"
  out << "  end"
  out << ""
  out << "  def describe"
  out << "    \"\#{@name} (\#{@size}): \#{@items.sum} over \#{LIMIT}\""
  out << "  end"
  out << ""
  out << "  def classify(x)"
  out << "    case x"
  out << "    when Integer then x > LIMIT ? :big : :small"
  out << "    when String, Symbol then :word"
  out << "    when nil then :none"
  out << "    else :other"
  out << "    end"
  out << "  end"
  out << ""
  out << "  def totals"
  out << "    h = Hash.new(0)"
  out << "    @items.each_with_index { |v, k| h[k.even? ? :even : :odd] += v }"
  out << "    h"
  out << "  end"
  out << ""
  out << "  def safe_div(a, b)"
  out << "    a / b"
  out << "  rescue ZeroDivisionError => e"
  out << "    warn e.message if $DEBUG"
  out << "    nil"
  out << "  end"
  out << "end"
  out << ""
  i += 1
end
out << "puts Generated0.new(\"first\").describe"
out << "puts Generated#{i - 1}.new(\"last\", size: 3).totals.inspect"
puts out
