require_relative "../assert"
require_relative "support"
require "teleporter"

# Workers are killed with SIGKILL at random moments of a busy master/worker exchange (in a
# recv, a send, a dump, holding a lock or not): the survivors must go on, and once the
# dead are reclaimed, nothing the dead held may remain allocated.
test "killing workers during traffic: survivors go on, no shared memory leaks" do
  workers = [] # filled one by one: if a fork fails, the children made so far are reaped
  TPTest.named_tunnel("crash", capacity: 1 << 20, slots: 64) do |tasks, _name|
    results = Teleporter::Tunnel.new(capacity: 4 << 20, slots: 8192)
    n = GC.stress ? 60 : 3000
    6.times do
      workers << TPTest.fork_child do
        loop do
          i, pad = tasks.recv
          results.send [i, pad.size, "r" * (i % 700)]
        end
      end
    end
    victims = workers.sample(3)
    kill_at = victims.map { rand(n) }
    got = {}
    n.times do |i|
      tasks.send [i, "t" * (i * 7 % 500)]
      victims.each_with_index do |pid, k|
        Process.kill(:KILL, pid) if kill_at[k] == i
      end
      while (r = results.recv_nonblock(exception: false)) != :wait_readable
        got[r[0]] = r
      end
    end
    tasks.close
    survivors = workers - victims
    statuses = TPTest.reap(workers)
    survivors.each { |pid| assert statuses[pid]&.success?, "survivor #{pid} failed: #{statuses[pid].inspect}" }
    victims.each { |pid| assert_equal 9, statuses[pid]&.termsig }
    while (r = results.recv_nonblock(exception: false)) != :wait_readable
      assert !got.key?(r[0]), "result #{r[0]} twice"
      got[r[0]] = r
    end
    # A killed worker loses at most the one task it had taken.
    assert got.size >= n - victims.size, "#{got.size} results of #{n}"
    got.each_value do |i, pad, reply|
      assert_equal i * 7 % 500, pad
      assert_equal "r" * (i % 700), reply
    end
    tasks.reclaim
    results.reclaim
    [tasks, results].each do |t|
      st = t.stats
      assert_equal 0, st[:used_blocks], "blocks left: #{st.inspect}"
      assert_equal 0, st[:queued]
      assert_equal 0, st[:orphan_pages], "orphan pages left: #{st.inspect}"
      assert_equal 1, st[:processes], "slots left: #{st.inspect}"
    end
    tasks.unlink
  end
  assert_equal [], TPTest.leftovers
ensure
  TPTest.reap(workers, grace: 0)
end

# A process killed while it holds the queue lock must not wedge the others: the next
# locker recovers the lock (EOWNERDEAD) and the queue keeps its messages.
test "a process killed in the middle of sends and receives never wedges the tunnel" do
  t = Teleporter::Tunnel.new(capacity: 1 << 20, slots: 128)
  rounds = GC.stress ? 2 : 12
  rounds.times do |round|
    busy = Array.new(2) do
      TPTest.fork_child do
        i = 0
        loop do
          t.send [round, i, "b" * (i % 90)]
          t.recv
          i += 1
        end
      end
    end
    sleep(rand * 0.02)
    busy.each { |pid| Process.kill(:KILL, pid) }
    TPTest.reap(busy)
    # The parent still sends and receives: nothing is locked for good.
    t.send [:alive, round]
    loop do
      m = t.recv(timeout: 10)
      assert !m.nil?, "tunnel wedged in round #{round}"
      break if m == [:alive, round]
    end
  end
  t.reclaim
  assert t.stats[:reclaimed] <= 2 * rounds
  assert_equal 0, t.stats[:used_blocks]
  assert_equal 1, t.stats[:processes]
end
