# Shared by bench/run and bench/fibers: the implementations compared, how a run is timed,
# and ratios net of each implementation's startup.
#
# Times are CPU seconds (user + system) of the child process, best of the runs: on a shared
# machine they vary far less than wall-clock times. Each implementation's startup (an empty
# script) is measured once and subtracted in the "net" ratios, so that CRuby's ~50 ms boot
# (250 ms with YJIT) does not count in its disfavour on short benchmarks.

require "tmpdir"

module Harness
  ROOT = File.dirname(File.expand_path(__dir__))
  CARMINE = ENV["CARMINE"] || File.join(ROOT, "target/release/carmine")

  # [name, command] of the implementations installed here.
  def self.impls
    @impls ||= [
      ["carmine", [CARMINE]],
      ["ruby", ["ruby"]],
      ["ruby --yjit", ["ruby", "--yjit"]],
      ["mruby", ["mruby"]],
    ].select { |_, cmd| system(*cmd, "-e", "1", out: File::NULL, err: File::NULL) }
  end

  def self.names
    impls.map(&:first)
  end

  # [cpu seconds, wall seconds] of the run with the least CPU time, or nil if a run failed.
  def self.measure(cmd, file, runs)
    best = nil
    runs.times do
      t0 = Process.times
      w0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      ok = system(*cmd, file, out: File::NULL, err: File::NULL)
      w = Process.clock_gettime(Process::CLOCK_MONOTONIC) - w0
      t1 = Process.times
      return nil unless ok
      cpu = (t1.cutime - t0.cutime) + (t1.cstime - t0.cstime)
      best = [cpu, w] if best.nil? || cpu < best[0]
    end
    best
  end

  # { name => [cpu, wall] } for `file` under every implementation.
  def self.measure_all(file, runs)
    impls.to_h { |name, cmd| [name, measure(cmd, file, runs)] }
  end

  # Startup times (an empty script), measured on first use.
  def self.startup(runs = 3)
    @startup ||= begin
      empty = File.join(Dir.tmpdir, "carmine-bench-#{Process.pid}-empty.rb")
      File.write(empty, "")
      measure_all(empty, [runs, 3].max).tap { File.delete(empty) }
    end
  end

  def self.startup_line
    impls.map { |name, _| startup[name] ? format("%s %.3f s", name, startup[name][0]) : "#{name} failed" }.join(", ")
  end

  # CPU seconds of `name` in `t` net of its startup, or nil.
  def self.net(t, name)
    t[name] && startup[name] && [t[name][0] - startup[name][0], 0.0].max
  end

  def self.ratio(t, other)
    t["carmine"] && t[other] && t[other][0] > 0 ? format("%.2f", t["carmine"][0] / t[other][0]) : "-"
  end

  def self.net_ratio(t, other)
    a, b = net(t, "carmine"), net(t, other)
    a && b && b > 0 ? format("%.2f", a / b) : "-"
  end

  def self.cell(t, name)
    t[name] ? format("%.3f", t[name][0]) : "fail"
  end

  # A Markdown table of rows [label, times]; `per` = [unit, count] adds net ns per unit.
  def self.md_table(rows, per = nil)
    head = ["run"] + names.map { |n| "#{n} (s)" } + ["carmine/ruby", "carmine/ruby net", "carmine/yjit net", "carmine/mruby net"]
    head << "carmine ns/#{per[0]} net" << "ruby ns/#{per[0]} net" if per
    lines = rows.map do |label, t|
      cells = [label] + names.map { |n| cell(t, n) } + [ratio(t, "ruby"), net_ratio(t, "ruby"), net_ratio(t, "ruby --yjit"), net_ratio(t, "mruby")]
      if per
        cells << (net(t, "carmine") ? format("%.0f", net(t, "carmine") * 1e9 / per[1]) : "-")
        cells << (net(t, "ruby") ? format("%.0f", net(t, "ruby") * 1e9 / per[1]) : "-")
      end
      cells
    end
    (["| " + head.join(" | ") + " |", "|" + head.map { "---" }.join("|") + "|"] + lines.map { |c| "| " + c.join(" | ") + " |" }).join("\n")
  end

  # One line of a run for the terminal.
  def self.print_row(label, t)
    cells = names.map { |name| t[name] ? format("%s %.3fs", name, t[name][0]) : "#{name} fail" }
    puts "#{label.ljust(16)} #{cells.join('  ')}  carmine/ruby #{ratio(t, 'ruby')} (net #{net_ratio(t, 'ruby')})"
  end

  def self.machine_line
    "#{`nproc`.strip} cores, #{RUBY_DESCRIPTION.split(' [').first}; #{`mruby -v 2>/dev/null`.strip}"
  end
end
