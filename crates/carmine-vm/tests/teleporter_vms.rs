//! Several VMs of one process exchanging objects through Teleporter tunnels (issue 15): each
//! VM runs on its own native thread, as an embedding server runs them, and the VMs reach a
//! tunnel by name (`Tunnel.open`) or by a handle (`teleporter::handoff`, for anonymous
//! tunnels). Every VM takes its own process slot in a tunnel; when the VMs are closed the
//! slots are given back and no block stays allocated.

use std::thread;

use carmine_vm::runtime::Runtime;
use carmine_vm::teleporter::handoff;

/// The program every VM starts with: the library and classes both sides know by name.
const PRELUDE: &str = r##"
require "teleporter"
TpVmPoint = Struct.new(:x, :y)
class TpVmBox
  attr_accessor :items
  def initialize(items) = @items = items
  def ==(o) = o.is_a?(TpVmBox) && o.items == items
end
# recv with a deadline, so that a lost message fails the test instead of hanging it (nil is
# also a message: only a nil after the whole wait is the timeout).
def take(t)
  start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  v = t.recv(timeout: 20)
  raise "no message within 20 s" if v.nil? && Process.clock_gettime(Process::CLOCK_MONOTONIC) - start > 19
  v
end
# Sends on `to` what the block makes of each message of `from`, until `from` is closed
# (Teleporter::ClosedError is a StopIteration, which ends `loop`); how many.
def relay(from, to)
  n = 0
  loop { to.send(yield(take(from))); n += 1 }
  n
end
"##;

/// Runs `src` in `rt`; the `inspect` of its value, or a panic with the Ruby error.
fn eval(rt: &mut Runtime, src: &str) -> String {
    match rt.eval(src) {
        Ok(v) => rt.inspect(v),
        Err(e) => {
            let info = rt.error_info(e);
            panic!("{}: {}\n{}", info.class_name, info.message, info.backtrace.join("\n"))
        }
    }
}

/// A VM on a thread of its own (VMs need deeper stacks than a test thread's default).
fn spawn_vm<T: Send + 'static>(f: impl FnOnce(&mut Runtime) -> T + Send + 'static) -> thread::JoinHandle<T> {
    thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut rt = Runtime::new();
            eval(&mut rt, PRELUDE);
            let r = f(&mut rt);
            rt.close();
            r
        })
        .expect("spawn a VM thread")
}

fn shm_name(tag: &str) -> String {
    format!("carmine-tp-vms-{tag}-{}", std::process::id())
}

fn shm_exists(name: &str) -> bool {
    std::path::Path::new(&format!("/dev/shm/{name}")).exists()
}

/// Objects of every kind the copy format knows, built the same way in each VM.
const OBJECTS: &str = r##"
shared = "shared"
cyclic = [1, 2]
cyclic << cyclic
[nil, true, false, 42, -7, 2**100, 1.5, 1e300, :sym, "text", "日本語", "bin\xff".b,
 Rational(2, 3), Complex(1, -2), 1..5, [shared, shared], (1..1000).to_a,
 (1..1000).map { |i| i * 0.5 }, (1..300).map { |i| 2**70 + i },
 { "k" => [1, { n: nil }], 3 => 4.5 }, TpVmPoint.new(1, "y"), TpVmBox.new([1, [2]]),
 cyclic]
"##;

#[test]
fn two_vms_ping_pong_through_named_tunnels() {
    let name = shm_name("pp");
    let (there, back) = (format!("{name}-there"), format!("{name}-back"));
    let echo = {
        let (there, back) = (there.clone(), back.clone());
        spawn_vm(move |rt| {
            let src = format!(
                r##"relay(Teleporter::Tunnel.open({there:?}), Teleporter::Tunnel.open({back:?})) {{ _1 }}"##
            );
            eval(rt, &src)
        })
    };
    let mut rt = Runtime::new();
    eval(&mut rt, PRELUDE);
    let src = format!(
        r##"there = Teleporter::Tunnel.open({there:?}); back = Teleporter::Tunnel.open({back:?})
           objects = begin
             {OBJECTS}
           end
           objects.each_with_index do |o, i|
             there.send(o)
             r = take(back)
             if o.equal?(objects.last)
               raise "cycle lost" unless r[2].equal?(r)
             elsif o.is_a?(Float) || o.is_a?(Integer) || [nil, true, false].include?(o) || o.is_a?(Symbol)
               raise "object #{{i}} changed: #{{r.inspect}}" unless r == o
             else
               raise "object #{{i}} changed: #{{r.inspect[0, 80]}}" unless r == o && r.class == o.class
               raise "object #{{i}} was not copied" if r.equal?(o)
             end
           end
           raise "identity lost" unless take(back.tap {{ there.send(objects[15]) }}).then {{ |a| a[0].equal?(a[1]) }}
           5000.times {{ |i| there.send(i); raise "#{{i}} came back wrong" unless take(back) == i }}
           stats = there.stats
           there.close
           [objects.size + 5001, stats[:processes]]"##
    );
    let mine = eval(&mut rt, &src);
    let echoed = echo.join().expect("echo VM thread");
    let (sent, processes) = mine.trim_matches(['[', ']']).split_once(", ").expect("two numbers");
    assert_eq!(echoed, sent, "the echo VM returned every message");
    // The two VMs of this process took a slot each.
    assert_eq!(processes, "2");
    rt.close();
    // With both VMs closed, a fresh VM finds the tunnels empty and unused.
    let mut rt = Runtime::new();
    eval(&mut rt, PRELUDE);
    let src = format!(
        r##"[{there:?}, {back:?}].map do |n|
             t = Teleporter::Tunnel.open(n)
             s = t.stats
             t.unlink
             [s[:processes], s[:used_blocks], s[:queued]]
           end"##
    );
    assert_eq!(eval(&mut rt, &src), "[[0, 0, 0], [0, 0, 0]]");
    rt.close();
    assert!(!shm_exists(&there) && !shm_exists(&back));
}

#[test]
fn many_vms_share_one_tunnel_as_a_task_queue() {
    // Three producer VMs and three consumer VMs on one named tunnel, all in this process:
    // every message is received exactly once.
    let name = shm_name("mpmc");
    let results = format!("{name}-results");
    const EACH: usize = 3000;
    let mut producers = Vec::new();
    for p in 0..3 {
        let name = name.clone();
        producers.push(spawn_vm(move |rt| {
            let src = format!(
                r##"t = Teleporter::Tunnel.open({name:?}, capacity: 1 << 20)
                   {EACH}.times {{ |i| t.send(i.even? ? [{p}, i] : [{p}, i, "x" * (i % 200)]) }}
                   :done"##
            );
            eval(rt, &src)
        }));
    }
    let mut consumers = Vec::new();
    for _ in 0..3 {
        let (name, results) = (name.clone(), results.clone());
        consumers.push(spawn_vm(move |rt| {
            let src = format!(
                r##"t = Teleporter::Tunnel.open({name:?}, capacity: 1 << 20)
                   out = Teleporter::Tunnel.open({results:?}, capacity: 4 << 20)
                   relay(t, out) {{ |m| m[0] * 100_000 + m[1] }}"##
            );
            eval(rt, &src)
        }));
    }
    let mut rt = Runtime::new();
    eval(&mut rt, PRELUDE);
    let src = format!(
        r##"t = Teleporter::Tunnel.open({name:?}, capacity: 1 << 20)
           out = Teleporter::Tunnel.open({results:?}, capacity: 4 << 20)
           seen = {{}}
           (3 * {EACH}).times do
             v = take(out)
             raise "#{{v}} received twice" if seen[v]
             seen[v] = true
           end
           t.close
           expected = (0...3).flat_map {{ |p| (0...{EACH}).map {{ |i| p * 100_000 + i }} }}
           raise "messages lost" unless seen.keys.sort == expected
           seen.size"##
    );
    assert_eq!(eval(&mut rt, &src), (3 * EACH).to_string());
    for p in producers {
        assert_eq!(p.join().expect("producer VM"), ":done");
    }
    let received: usize = consumers.into_iter().map(|c| c.join().expect("consumer VM").parse::<usize>().expect("a count")).sum();
    assert_eq!(received, 3 * EACH);
    let src = format!(
        r##"s = Teleporter::Tunnel.open({name:?}).stats
           Teleporter::Tunnel.unlink({name:?}); Teleporter::Tunnel.unlink({results:?})
           [s[:used_blocks], s[:queued]]"##
    );
    assert_eq!(eval(&mut rt, &src), "[0, 0]");
    rt.close();
    assert!(!shm_exists(&name) && !shm_exists(&results));
}

#[test]
fn an_anonymous_tunnel_is_handed_to_another_vm() {
    let mut rt = Runtime::new();
    eval(&mut rt, PRELUDE);
    let there = rt.eval("$there = Teleporter::Tunnel.new(capacity: 1 << 20)").expect("a tunnel");
    let back = rt.eval("$back = Teleporter::Tunnel.new(capacity: 1 << 20)").expect("a tunnel");
    let exported = (handoff::export(rt.ctx(), there).expect("export"), handoff::export(rt.ctx(), back).expect("export"));
    assert!(exported.0.name().is_none());
    let echo = thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            // A VM that never required the library: import does it.
            let mut rt = Runtime::new();
            let (there, back) = exported;
            let tunnel_class = rt.eval("defined?(Teleporter::Tunnel).inspect").expect("defined?");
            assert_eq!(rt.inspect(tunnel_class), "\"nil\"");
            let t = handoff::import(rt.ctx(), there).expect("import");
            let id = rt.ctx().intern("$there");
            carmine_vm::core::globals::set(rt.ctx(), id, t).expect("set $there");
            let b = handoff::import(rt.ctx(), back).expect("import");
            let id = rt.ctx().intern("$back");
            carmine_vm::core::globals::set(rt.ctx(), id, b).expect("set $back");
            eval(&mut rt, PRELUDE);
            let n = eval(&mut rt, "relay($there, $back) { _1 }");
            rt.close();
            n
        })
        .expect("spawn a VM thread");
    let src = r##"
        [[1, "two", 3.0], 2**80, { a: [1] }].each { |o| $there.send(o); raise "changed" unless take($back) == o }
        1000.times { |i| $there.send("m#{i}"); raise "wrong" unless take($back) == "m#{i}" }
        s = $there.stats
        $there.close
        s[:processes]"##;
    assert_eq!(eval(&mut rt, src), "2");
    assert_eq!(echo.join().expect("echo VM"), "1003");
    // The echo VM is closed: its slots are free again, and nothing is left allocated.
    assert_eq!(eval(&mut rt, "[$there.stats, $back.stats].map { |s| [s[:processes], s[:used_blocks]] }"), "[[1, 0], [1, 0]]");
    // A non-tunnel is refused with TypeError.
    let five = rt.eval("5").expect("5");
    let err = handoff::export(rt.ctx(), five).err().expect("TypeError");
    assert_eq!(rt.error_info(err).class_name, "TypeError");
    rt.close();
}

