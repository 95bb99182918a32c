require_relative "../assert"
require_relative "../support/process"

# The line-processing switches of the command (-n -p -a -F -l -0 -i), run in a separate
# carmine process on files in a fresh directory.

DIR = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_cli_test_#{Process.pid}"

def fresh_files
  Dir.mkdir(DIR) unless File.directory?(DIR)
  Dir.children(DIR).each { |f| File.delete(File.join(DIR, f)) }
  File.write("#{DIR}/one", "a b\nc d\n\n\ne f\n")
  File.write("#{DIR}/two", "x:y\n")
end

# Runs carmine with `switches` and then `args` in DIR, standard input from `stdin`;
# returns [stdout, stderr, status].
def cli(switches, *args, stdin: "")
  fresh_files
  File.write("#{DIR}/.stdin", stdin)
  quoted = (switches + args).map { |a| "'" + a.gsub("'", "'\\\\''") + "'" }.join(" ")
  out = `cd #{DIR} && #{Support.carmine_path} #{quoted} <.stdin 2>.stderr`
  status = $?
  [out, File.read("#{DIR}/.stderr"), status]
end

test "-n runs the program for each line, -p prints $_ after each" do
  assert_equal "c d\n", cli(["-ne", "print if /c/"], "one")[0]
  assert_equal "A B\nC D\n\n\nE F\nX:Y\n", cli(["-pe", "$_.upcase!"], "one", "two")[0]
  assert_equal "1:x:y\n", cli(["-pe", "$_ = \"\#{$.}:\#{$_}\""], "two")[0]
end

test "-p does not print a line that next skips" do
  assert_equal "c d\n\n\ne f\n", cli(["-pe", "next if /a/"], "one")[0]
end

test "-n reads standard input without file arguments" do
  assert_equal "[\"1\\n\", \"2\\n\"]\n", cli(["-ne", "BEGIN { $a = [] }; $a << $_; END { p $a }"], stdin: "1\n2\n")[0]
end

test "BEGIN runs once before the loop and END once after it" do
  out = cli(["-ne", "BEGIN { puts :begin }; END { puts $. }; print"], "two")[0]
  assert_equal "begin\nx:y\n1\n", out
end

test "-a splits each line into $F, with -F's pattern as $;" do
  assert_equal "[\"a\", \"b\"]\n[\"c\", \"d\"]\n[]\n[]\n[\"e\", \"f\"]\n", cli(["-ane", "p $F"], "one")[0]
  assert_equal "[\"x\", \"y\\n\"]\n/:/\n", cli(["-F:", "-ane", "p $F, $;"], "two")[0]
end

test "-l chomps each line and sets $\\ to $/" do
  assert_equal "a b|\nc d|\n|\n|\ne f|\n", cli(["-lpe", "$_ << '|'"], "one")[0]
  assert_equal "[\"x\", \"y\"]\n", cli(["-F:", "-lane", "p $F"], "two")[0]
  assert_equal "\"\\n\"\n\"\\n\"\n", cli(["-le", "p $\\, $/"])[0]
end

test "the switch variables $-p, $-l and $-a" do
  assert_equal "[false, false, false]\n", cli(["-e", "p [$-p, $-l, $-a]"])[0]
  assert_equal "[true, true, true]\n", cli(["-lap", "-e", "$stderr.print [$-p, $-l, $-a].inspect"], "two")[1]
end

test "-0 sets $/ from an octal code; -00 is paragraph mode, -0777 reads whole files" do
  assert_equal "\"\\x00\"\n", cli(["-0", "-e", "p $/"])[0]
  assert_equal "\"A\"\n", cli(["-0101", "-e", "p $/"])[0]
  assert_equal "\"a b\\nc d\\n\\n\"\n\"e f\\n\"\n", cli(["-00", "-ne", "p $_"], "one")[0]
  assert_equal "\"a b\\nc d\\n\\n\\ne f\\n\"\n", cli(["-0777", "-ne", "p $_"], "one")[0]
  assert_equal "\"a b\\nc d\"\n\"e f\"\n", cli(["-00", "-lne", "p $_"], "one")[0]
end

test "-l takes $/ as it is when -l comes" do
  assert_equal "\"\\n\"\n\"\\x00\"\n", cli(["-l0", "-e", "p $\\, $/"])[0]
  assert_equal "\"\\x00\"\n\"\\x00\"\n", cli(["-0l", "-e", "p $\\, $/"])[0]
end

test "an Integer literal in a flip-flop compares with $." do
  assert_equal "c d\n\n", cli(["-ne", "print if 2..3"], "one")[0]
end

test "-i edits the files in place, -i.ext keeps backups" do
  out, _, status = cli(["-i", "-pe", "$_.upcase!"], "one", "two")
  assert_equal ["", 0], [out, status.exitstatus]
  assert_equal "A B\nC D\n\n\nE F\n", File.read("#{DIR}/one")
  assert_equal "X:Y\n", File.read("#{DIR}/two")
  assert_false File.exist?("#{DIR}/one.bak")
  cli(["-i.bak", "-ne", "print $_.tr('a-z', 'A-Z') unless $_ == \"\\n\""], "one")
  assert_equal "A B\nC D\nE F\n", File.read("#{DIR}/one")
  assert_equal "a b\nc d\n\n\ne f\n", File.read("#{DIR}/one.bak")
end

test "-i keeps the file's mode and leaves $stdout on the last file" do
  fresh_files
  File.chmod(0o640, "#{DIR}/two")
  out = `cd #{DIR} && #{Support.carmine_path} -i -e 'while gets; puts $_.reverse; end; puts "end"' two 2>&1`
  assert_equal "", out
  assert_equal "\ny:x\nend\n", File.read("#{DIR}/two")
  assert_equal 0o640, File.stat("#{DIR}/two").mode & 0o777
end

test "inplace_mode and $-i" do
  out = cli(["-e", "p $-i, ARGF.inplace_mode; ARGF.inplace_mode = '.b'; p $-i; $-i = ''; p ARGF.inplace_mode; $-i = nil; p $-i; begin; $-i = 3; rescue TypeError => e; p e.class; end"])[0]
  assert_equal "nil\nnil\n\".b\"\n\"\"\nnil\nTypeError\n", out
  assert_equal "\".x\"\n", cli(["-i.x", "-e", "p $-i"])[0]
  cli(["-e", "ARGF.inplace_mode = '.old'; while gets; ARGF.puts $_.size; end"], "two")
  assert_equal "4\n", File.read("#{DIR}/two")
  assert_equal "x:y\n", File.read("#{DIR}/two.old")
end

test "a copy of ARGF edits in place too, from its own file list" do
  out = cli(["-e", "ARGF.inplace_mode = '.bak'; f = ARGF.dup; while line = f.gets; puts line.chomp + '.new'; end; STDOUT.puts ARGV.inspect"], "two")[0]
  assert_equal "[\"two\"]\n", out
  assert_equal "x:y.new\n", File.read("#{DIR}/two")
  assert_equal "x:y\n", File.read("#{DIR}/two.bak")
end

test "standard input is not edited in place" do
  out, err, = cli(["-i", "-pe", "$_.upcase!"], stdin: "q\n")
  assert_equal "Q\n", out
  assert_match(/warning: Can't do inplace edit for stdio/, err)
  out, err, = cli(["-i", "-pe", "$_.upcase!"], "-", "two", stdin: "q\n")
  assert_equal "", out
  assert_match(/Can't do inplace edit for stdio; skipping/, err)
  assert_equal "X:Y\n", File.read("#{DIR}/two")
end

test "ARGF's writers need a file being edited" do
  out = cli(["-e", "begin; ARGF.puts 'x'; rescue IOError => e; p e.message; end"])[0]
  assert_equal "\"not opened for writing\"\n", out
end

test "-s turns the program's leading -name[=value] arguments into globals" do
  out = cli(["-s", "-e", "p $n, $_name, $a_b, ARGV", "--", "-n", "--name=x", "-a-b", "rest", "-c"])[0]
  assert_equal "true\n\"x\"\ntrue\n[\"rest\", \"-c\"]\n", out
end

test "-x starts the program at its #!ruby line, -d sets $DEBUG, -X changes directory" do
  embedded = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_cli_embedded_#{Process.pid}.txt"
  File.write(embedded, "not ruby\n#!/usr/bin/ruby\np [:ok, __LINE__]\n")
  assert_equal "[:ok, 3]\n", cli(["-x", embedded])[0]
  File.delete(embedded)
  _, err, status = cli(["-x", "one"])
  assert_equal 1, status.exitstatus
  assert_match(/no Ruby script found in input/, err)
  assert_equal "[true, true]\n", cli(["-d", "-e", "p [$DEBUG, $VERBOSE]"])[0]
  assert_equal "\"/tmp\"\n", cli(["-X/tmp", "-e", "p Dir.pwd"])[0]
end

test "RUBYOPT adds switches after the command line's; RUBYLIB directories follow -I's" do
  out = `RUBYOPT='-I/opt1 -w' RUBYLIB=/lib1:/lib2 #{Support.carmine_path} -I/cli -e 'p $LOAD_PATH.first(4), $VERBOSE'`
  assert_equal "[\"/cli\", \"/opt1\", \"/lib1\", \"/lib2\"]\ntrue\n", out
  assert_equal "true\n", `RUBYOPT=-W0 #{Support.carmine_path} -w -e 'p $VERBOSE'`
  err = `RUBYOPT=-x #{Support.carmine_path} -e 1 2>&1`
  assert_match(/invalid switch in RUBYOPT: -x/, err)
end

test "switch errors" do
  _, err, status = cli(["-Q"])
  assert_equal 1, status.exitstatus
  assert_match(/invalid option -Q/, err)
  _, err, status = cli(["-e"])
  assert_equal 1, status.exitstatus
  assert_match(/no code specified for -e/, err)
end

at_exit do
  Dir.children(DIR).each { |f| File.delete(File.join(DIR, f)) } if File.directory?(DIR)
  Dir.rmdir(DIR) if File.directory?(DIR)
end
