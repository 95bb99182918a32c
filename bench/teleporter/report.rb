# Assembles the columns bench/teleporter/run measured (one TSV per interpreter and
# transport) into Markdown tables with ratios to CRuby's pipe + Marshal, and scale.csv.
dir = ARGV.fetch(0)
COLS = [["Tunnel (Carmine)", "carmine-tunnel"], ["pipe+Marshal (Carmine)", "carmine-pipe"],
        ["socket+Marshal (Carmine)", "carmine-socket"], ["pipe+Marshal (CRuby)", "cruby-pipe"],
        ["socket+Marshal (CRuby)", "cruby-socket"], ["Ractor (CRuby)", "cruby-ractor"]]
data = Hash.new { |h, k| h[k] = {} }
COLS.each do |_, file|
  path = File.join(dir, "#{file}.tsv")
  next unless File.exist?(path)
  File.foreach(path) do |line|
    section, name, us = line.chomp.split("\t", 3)
    data[[section, name]][file] = us =~ /\A[\d.]+\z/ ? us.to_f : nil
  end
end
base = "cruby-pipe"
fmt = {}
%w[carmine cruby].each do |impl|
  path = File.join(dir, "#{impl}-format.tsv")
  next unless File.exist?(path)
  File.foreach(path) do |line|
    _, name, m, t = line.chomp.split("\t")
    (fmt[name] ||= {})[impl] = [m.to_f, t =~ /\A[\d.]+\z/ ? t.to_f : nil]
  end
end
unless fmt.empty?
  puts "### One dump + load in process, µs (ratio to Marshal in the same Ruby / to CRuby's Marshal)"
  puts
  puts "| type | copy format (Carmine) | Marshal (Carmine) | Marshal (CRuby) |"
  puts "|---|---:|---:|---:|"
  fmt.each do |name, d|
    cm, tp = d["carmine"] || [nil, nil]
    rm = d["cruby"]&.first
    tpc = tp ? format("%.3f (%.2fx / %s)", tp, tp / cm, rm ? format("%.2fx", tp / rm) : "–") : "–"
    puts "| #{name} | #{tpc} | #{cm ? format("%.3f", cm) : "–"} | #{rm ? format("%.3f", rm) : "–"} |"
  end
  puts
end
cell = ->(v) { v ? format("%.2f", v) : "–" }
%w[types scale].each do |section|
  rows = data.keys.select { |s, _| s == section }.map(&:last)
  next if rows.empty?
  puts(section == "types" ? "### µs per round trip (10,000 round trips; ratio to CRuby pipe+Marshal)" : "### String length scaling, µs per round trip")
  puts
  puts "| #{section == "types" ? "type" : "bytes"} | #{COLS.map(&:first).join(" | ")} |"
  puts "|---|#{COLS.map { "---:" }.join("|")}|"
  rows.each do |name|
    d = data[[section, name]]
    cells = COLS.map do |_, f|
      v = d[f]
      r = v && d[base] && f != base ? format(" (%.2fx)", v / d[base]) : ""
      "#{cell[v]}#{r}"
    end
    puts "| #{name} | #{cells.join(" | ")} |"
  end
  puts
  if section == "scale"
    # Only the columns that were measured (gnuplot plots each column of the file).
    cols = COLS.select { |_, c| rows.any? { |name| data[[section, name]][c] } }
    File.open(File.join(dir, "scale.csv"), "w") do |f|
      f.puts "bytes,#{cols.map(&:first).join(",")}"
      rows.each { |name| f.puts "#{name},#{cols.map { |_, c| data[[section, name]][c] || "" }.join(",")}" }
    end
  end
end

# The master/worker section: workers.tsv lines are "impl cores transport workers copies
# seconds lines/s checksum".
wpath = File.join(dir, "workers.tsv")
if File.exist?(wpath) && File.size(wpath) > 0
  runs = File.readlines(wpath, chomp: true).map { |l| l.split("\t") }
  label = ->(impl, transport, copies, cores) do
    name = { ["carmine", "tunnel"] => "Tunnel (Carmine)", ["carmine", "pipe"] => "pipe+Marshal (Carmine)",
             ["cruby", "pipe"] => "pipe+Marshal (CRuby)" }.fetch([impl, transport], "#{transport} (#{impl})")
    "#{name} (#{copies})#{cores == "1" ? ", 1 core" : ""}"
  end
  series = {}
  sums = Hash.new { |h, k| h[k] = [] }
  runs.each do |impl, cores, transport, workers, copies, secs, rate, sum|
    key = label.(impl, transport, copies, cores)
    (series[key] ||= {})[workers.to_i] = [secs.to_f, rate.to_f]
    sums[[copies, workers]] << sum
  end
  counts = series.values.flat_map(&:keys).uniq.sort
  wrong = sums.select { |_, s| s.uniq.size > 1 }
  puts "### Master/worker HTML application (fig. 13): address lines per second (seconds)"
  puts
  puts "| series | #{counts.map { |c| c == 0 ? "master alone" : "#{c} worker#{c == 1 ? "" : "s"}" }.join(" | ")} |"
  puts "|---|#{counts.map { "---:" }.join("|")}|"
  series.each do |key, by|
    cells = counts.map { |c| by[c] ? format("%d (%.2f s)", by[c][1], by[c][0]) : "–" }
    puts "| #{key} | #{cells.join(" | ")} |"
  end
  puts
  puts(wrong.empty? ? "Every run returned the same HTML (checksums agree)." : "CHECKSUMS DIFFER: #{wrong.keys.inspect}")
  puts
  File.open(File.join(dir, "workers.csv"), "w") do |f|
    f.puts "workers,#{series.keys.join(",")}"
    counts.each { |c| f.puts "#{c},#{series.values.map { |by| by[c] ? by[c][1].round : "" }.join(",")}" }
  end
end
