# Strings (issue 16 item 5): scan and gsub over a long string with 100,000 matches and one
# multibyte character, so each match's character offset must be found (from the previous
# one, not from the start).
N = Integer(ENV.fetch("N", "100000"))
s = "ab" * N + "é"
3.times do
  raise "scan" unless s.scan(/a(b)/).size == N
  raise "scan block" unless s.scan("ab") { $~[0] } == s
  raise "gsub" unless s.gsub("a", "x").size == 2 * N + 1
end
raise "index" unless s.index("é") == 2 * N
