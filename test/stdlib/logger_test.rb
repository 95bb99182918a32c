require_relative "helper"
StdlibTest.require_libs("logger")

test "Logger to a file with a formatter, levels and progname" do
  StdlibTest.scratch_dir do |d|
    l = Logger.new("#{d}/log.txt", progname: "app")
    l.formatter = proc { |sev, time, prog, msg| "#{sev}|#{prog}|#{msg}|#{time.class}\n" }
    l.info("one")
    l.debug("two")
    l.level = Logger::WARN
    l.info("hidden")
    l.error { "three" }
    l.warn("four")
    l.close
    lines = File.readlines("#{d}/log.txt").grep_v(/Logfile created/)
    assert_equal ["INFO|app|one|Time\n", "DEBUG|app|two|Time\n", "ERROR|app|three|Time\n", "WARN|app|four|Time\n"], lines
  end
end

test "the default format" do
  r, w = IO.pipe
  l = Logger.new(w)
  l.info("hello")
  w.close
  assert_match(/\AI, \[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6} #\d+\]  INFO -- : hello\n\z/, r.read)
end

test "level from a symbol, predicates, exceptions as messages" do
  r, w = IO.pipe
  l = Logger.new(w, level: :error, formatter: ->(s, _t, _p, m) { "#{s[0]}: #{m.is_a?(Exception) ? m.message : m}\n" })
  l.warn("no")
  l.error("yes")
  l.fatal(RuntimeError.new("boom"))
  assert l.error?
  assert !l.info?
  w.close
  assert_equal "E: yes\nF: boom\n", r.read
end

test "Logger from several threads writes whole lines" do
  r, w = IO.pipe
  l = Logger.new(w, formatter: ->(_s, _t, _p, m) { "#{m}\n" })
  4.times.map { |i| Thread.new { 20.times { |j| l.info("t#{i}-#{j}") } } }.each(&:join)
  w.close
  lines = r.read.lines
  assert_equal 80, lines.size
  assert lines.all? { |x| x =~ /\At\d-\d+\n\z/ }
end

Assert.report
