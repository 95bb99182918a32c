require_relative "../assert"
require_relative "../support/process"
require_relative "support"
require "teleporter"

# A named tunnel outlives its processes until it is unlinked (as POSIX names do), so every
# test that makes one must unlink it however the test ends. Each other Teleporter test
# file runs here with `fork` refused (as under the panic-freedom check's prelude, or when
# the process limit is reached): most of its tests fail early, and /dev/shm must hold
# nothing of the process afterwards.
NO_FORK = <<~RUBY
  module Kernel
    private def fork(*) = raise(NotImplementedError, "fork is refused by cleanup_test")
    def self.fork(*) = raise(NotImplementedError, "fork is refused by cleanup_test")
  end
  def Process.fork(*) = raise(NotImplementedError, "fork is refused by cleanup_test")
RUBY

test "named tunnels are unlinked by every Teleporter test, also when its tests fail" do
  prelude = "#{ENV.fetch("TMPDIR", "/tmp")}/carmine_tp_nofork_#{$$}.rb"
  File.write(prelude, NO_FORK)
  files = Dir.glob(File.join(__dir__, "*_test.rb")).sort.reject { |f| File.basename(f) == File.basename(__FILE__) }
  assert files.size >= 3, "the other Teleporter tests: #{files.inspect}"
  files.each do |f|
    pid = Process.spawn(Support.carmine_path, "-r", prelude, f, out: File::NULL, err: File::NULL)
    Process.wait(pid)
    left = Dir.glob("/dev/shm/carmine-tp-*-#{pid}").map { |p| File.basename(p) }
    left.grep(/\Acarmine-tp-\w+-#{pid}\z/) { |n| Teleporter::Tunnel.unlink(n) rescue nil }
    assert_equal [], left, "#{File.basename(f)} left its named tunnels behind when fork failed"
  end
ensure
  File.delete(prelude) rescue nil
end

test "TPTest.named_tunnel removes the name when its block raises" do
  name = nil
  assert_raise(RuntimeError) do
    TPTest.named_tunnel("cleanup", capacity: 1 << 20) do |t, n|
      name = n
      t.send :x
      raise "half-way"
    end
  end
  assert_equal TPTest.name("cleanup"), name
  assert !File.exist?("/dev/shm/#{name}")
  assert_equal [], TPTest.leftovers
end
