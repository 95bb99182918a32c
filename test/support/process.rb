# Runs carmine in a child process (for tests of the command line and of process exit).
module Support
  def self.carmine_path
    ENV["CARMINE"] || File.expand_path("../../target/release/carmine", __dir__)
  end

  def self.run_carmine(source, *args)
    src = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_test_#{Process.pid}_#{rand(1_000_000)}.rb"
    File.write(src, source)
    out = `#{carmine_path} #{args.join(' ')} #{src} 2>#{src}.err`
    status = $?
    err = File.read("#{src}.err")
    File.delete(src)
    File.delete("#{src}.err")
    [out, err, status]
  end
end
