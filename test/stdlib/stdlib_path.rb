# The tests of native stdlib parts need CRuby's pure-Ruby standard library on $LOAD_PATH
# (json.rb, digest.rb …); without it they are skipped with the reason printed.
CRUBY_STDLIB = "/usr/lib/ruby/3.1.0"
unless File.directory?(CRUBY_STDLIB)
  puts "skipped: CRuby's standard library (#{CRUBY_STDLIB}) is absent"
  exit 0
end
$LOAD_PATH << CRUBY_STDLIB unless $LOAD_PATH.include?(CRUBY_STDLIB)
