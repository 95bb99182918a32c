# Helpers of the Teleporter tests: forked children that never run the parent's at_exit
# handlers (test/assert.rb's report), and reaping that cannot leave a child behind.
module TPTest
  # Forks a child running the block; it exits 0 when the block returns or a closed tunnel
  # ends it (Teleporter::ClosedError is a StopIteration), 1 on any other exception.
  def self.fork_child
    fork do
      begin
        yield
      rescue StopIteration
      rescue Exception => e
        $stderr.puts "child #{$$}: #{e.class}: #{e.message}"
        exit!(1)
      end
      exit!(0)
    end
  end

  # Waits for `pids` (up to `grace` seconds in all), then kills and reaps what is left.
  # Returns the statuses of the children that ended by themselves, by pid.
  def self.reap(pids, grace: 30)
    deadline = Time.now + grace
    statuses = {}
    pids.each do |pid|
      loop do
        r = begin
          Process.waitpid(pid, Process::WNOHANG)
        rescue Errno::ECHILD
          break
        end
        if r
          statuses[pid] = $?
          break
        end
        if Time.now > deadline
          Process.kill(:KILL, pid) rescue nil
          Process.waitpid(pid) rescue nil
          break
        end
        sleep 0.005
      end
    end
    statuses
  end

  # A shared-memory name of this test process.
  def self.name(tag)
    "carmine-tp-#{tag}-#{$$}"
  end

  # Opens the named tunnel `name(tag)` (created with `opts`) for the block and removes the
  # name when the block ends, however it ends: a test that fails half-way (an assertion,
  # `fork` refused, a child that never answers) leaves nothing in /dev/shm.
  def self.named_tunnel(tag, **opts)
    n = name(tag)
    begin
      yield Teleporter::Tunnel.open(n, **opts), n
    ensure
      Teleporter::Tunnel.unlink(n) rescue nil
    end
  end

  # Names in /dev/shm made by this test process.
  def self.leftovers
    Dir.glob("/dev/shm/carmine-tp-*-#{$$}")
  end
end
