# Live fibers (seed 000, fig. 8): creates N fibers (default 1,000,000), resumes each once so
# that it waits in Fiber.yield, keeps them all alive, and reports how many it got and the
# process's peak RSS. Stops early (and reports) if the runtime cannot create more.
N = Integer(ENV.fetch("N", "1000000"))
fibers = []
error = nil
begin
  N.times do
    f = Fiber.new { Fiber.yield }
    f.resume
    fibers << f
  end
rescue Exception => e
  error = "#{e.class}: #{e.message}"
end
# Peak RSS from /proc (no Regexp: mruby has none).
rss_kb = 0
File.open("/proc/self/status") do |io|
  while (line = io.gets)
    rss_kb = line.split(" ")[1].to_i if line.start_with?("VmHWM:")
  end
end
puts "fibers=#{fibers.size} peak_rss_kb=#{rss_kb} bytes_per_fiber=#{fibers.empty? ? 0 : rss_kb * 1024 / fibers.size}#{error ? " error=#{error}" : ""}"
