# String processing over a generated 10 MB text: gsub with a pattern and a block, scan,
# split into lines and words, and =~ matching.
words = %w[lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
           incididunt ut labore et dolore magna aliqua 2024 1999 42 x7]
x = 7
lines = []
size = 0
while size < 10_000_000
  line = Array.new(12) { words[(x = (x * 48_271) % 2_147_483_647) % words.size] }.join(" ")
  lines << line
  size += line.size + 1
end
text = lines.join("\n")

numbers = text.scan(/\d+/).size
upcased = text.gsub(/\b(d\w+)/) { $1.upcase }
caps = upcased.count("D")
replaced = text.gsub("ipsum", "IPSUM").size
word_count = 0
long_lines = 0
text.split("\n").each do |l|
  word_count += l.split(" ").size
  long_lines += 1 if l =~ /consectetur.*aliqua/
end
puts [text.size, numbers, caps, replaced, word_count, long_lines].inspect
