# io/console is native (stdlib/io_console.rs). The terminal part runs a child Carmine
# under a pseudo-terminal made by script(1) from util-linux, when it is installed.
require_relative "helper"
require "io/console"

test "terminal methods on a pipe raise Errno::ENOTTY" do
  r, w = IO.pipe
  assert_raise(Errno::ENOTTY) { r.winsize }
  assert_raise(Errno::ENOTTY) { r.raw { } }
  assert_raise(Errno::ENOTTY) { w.echo = false }
  assert_raise(Errno::ENOTTY) { r.getch }
end

test "IO.console is a File on /dev/tty or nil" do
  c = IO.console
  assert(c.nil? || c.is_a?(File))
  assert_nil IO.console(:close)
end

test "escape sequences go to the IO" do
  r, w = IO.pipe
  w.goto(2, 3)
  w.cursor_up(1)
  w.erase_line(2)
  w.close
  assert_equal "\e[3;4H\e[1A\e[2K", r.read
end

test "modes, echo and winsize under a pseudo-terminal" do
  carmine = ENV["CARMINE"] || File.realpath("/proc/self/exe")
  script = "/usr/bin/script"
  next unless File.executable?(script) && RUBY_ENGINE == "carmine"
  code = 'require "io/console"; i = $stdin; i.winsize = [30, 100]; p i.winsize; p i.echo?; ' \
         'i.noecho { p i.echo? }; p i.echo?; i.raw { p :raw }; i.echo = false; p i.echo?; i.echo = true; p IO.console.class'
  r, w = IO.pipe
  pid = Process.spawn(script, "-qec", "#{carmine} -e '#{code}'", "/dev/null", in: File::NULL, out: w, err: w)
  w.close
  out = r.read
  Process.wait(pid)
  assert_equal ["[30, 100]", "true", "false", "true", ":raw", "false", "File"], out.split(/\r?\n/).map(&:strip).reject(&:empty?)
end

Assert.report
