//! ngx_http_carmine_module inside a real nginx 1.22: content, rewrite, access and log
//! handlers, `carmine_set` variables, headers, request bodies read by nginx's non-blocking
//! reader, errors (500 and the backtrace in the error log), isolation and reload; scripts
//! that sleep or wait on sockets without blocking the worker.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use carmine_web_servers::{handler_rb, request, setup, wait_for_log, Build, Kind, Server, RAISE_RB};

const MAIN: &str = "load_module {build}/ngx_http_carmine_module.so;\n";

fn start(build: &Build, site: &str, files: &[(&str, &str)]) -> Server {
    Server::start(Kind::Nginx, "", build, MAIN, site, files)
}

/// nginx with one worker (so that a blocked worker would show), `init` as `carmine_init`
/// and a 20 s `carmine_timeout`.
fn one_worker(build: &Build, init: &str, site: &str) -> Server {
    let http = "carmine_init {dir}/init.rb;\ncarmine_timeout 20s;\n";
    Server::start_with_env(Kind::Nginx, "", build, MAIN, site, &[("init.rb", init), ("http.conf", http)], &[("NGINX_WORKERS", "1")])
}

/// `carmine_init` runs once per worker and what it defines persists; `carmine_timeout`
/// ends a runaway script with 500 and the worker keeps serving.
#[test]
fn init_and_limits() {
    let Some(build) = setup() else { return };
    let http = "carmine_init {dir}/init.rb;\ncarmine_timeout 300ms;\ncarmine_gc_every 10;\ncarmine_gc_malloc_limit 256k;\n";
    let site = "location /greet { carmine_content_handler_code 'Nginx.rputs Greeter.new.greet(Nginx::Request.new.args)'; }\n\
                location /spin { carmine_content_handler_code 'loop {}'; }\n";
    let init = "class Greeter\n  def greet(name) = \"hello, #{name}\"\nend\n";
    let s = start(build, site, &[("init.rb", init), ("http.conf", http)]);
    for _ in 0..30 {
        let r = s.get("/greet?ann");
        assert_eq!((r.status, r.text().as_str()), (200, "hello, ann"), "{}", s.error_log());
    }
    assert_eq!(s.get("/spin").status, 500);
    assert!(wait_for_log(&s, "TimeoutError").contains("TimeoutError"), "{}", s.error_log());
    assert_eq!(s.get("/greet?bob").text(), "hello, bob");
}

const SITE: &str = r##"
location /inline {
    carmine_content_handler_code 'r = Nginx::Request.new; r.content_type = "text/plain"; Nginx.rputs "hello #{r.method} #{r.uri} #{r.args}"';
}
location /file {
    carmine_content_handler {dir}/handler.rb;
}
location /raise {
    carmine_content_handler {dir}/raise.rb;
}
location /isolated {
    carmine_content_handler_code '$count = ($count || 0) + 1; COUNT = $count; Nginx.rputs "#{$count} #{COUNT} #{defined?($leak).inspect}"; $leak = 1';
}
location /rewrite {
    carmine_rewrite_handler_code 'Nginx.redirect "/target"';
}
location /target {
    return 200 "target reached";
}
location /moved {
    carmine_rewrite_handler_code 'Nginx.redirect "http://example.com/new", Nginx::HTTP_MOVED_PERMANENTLY';
}
location /denied {
    carmine_access_handler_code 'Nginx.return Nginx::HTTP_FORBIDDEN unless Nginx::Request.new.headers_in["X-Key"] == "open"';
    carmine_content_handler_code 'Nginx.rputs "let in"';
}
location /var {
    carmine_set_code $greeting 'r = Nginx::Request.new; "hi " + r.var.arg_name.to_s';
    return 200 $greeting;
}
location /setvar {
    set $mine "before";
    carmine_access_handler_code 'Nginx::Request.new.var.mine = "after"';
    carmine_content_handler_code 'Nginx.rputs Nginx::Request.new.var.mine';
    add_header X-Mine $mine;
}
location /echo {
    carmine_content_handler_code 'r = Nginx::Request.new; Nginx.rputs "#{r.method}:#{r.body.reverse}"';
}
location /created {
    carmine_content_handler_code 'Nginx::Request.new.status = 201; Nginx.rputs "made"';
}
location /content-redirect {
    carmine_content_handler_code 'Nginx.redirect "/target"';
}
location /status {
    carmine_content_handler_code 'Nginx.return Nginx::HTTP_NOT_FOUND';
}
location /logged {
    carmine_content_handler_code 'Nginx.echo "logged"; puts "via puts"';
    carmine_log_handler_code 'Nginx.errlogger Nginx::LOG_WARN, "carmine-log #{Nginx::Request.new.uri}"';
}
location /reload {
    carmine_content_handler {dir}/reload.rb;
}
"##;


#[test]
fn handlers_and_api() {
    let Some(build) = setup() else { return };
    let s = start(build, SITE, &[("handler.rb", &handler_rb("Nginx")), ("raise.rb", RAISE_RB), ("reload.rb", "Nginx.rputs 'version 1'")]);

    let r = s.get("/inline?a=1");
    assert_eq!(r.status, 200, "{r:?}\n{}", s.error_log());
    assert_eq!(r.text(), "hello GET /inline a=1");
    assert_eq!(r.header("Content-Type"), Some("text/plain"));

    let r = request(s.port, "GET", "/file", &[("X-Test", "abc")], b"");
    assert_eq!(r.text(), r#"{"got":"abc","v":1}"#, "{}", s.error_log());
    assert_eq!(r.header("X-Carmine"), Some("handled"));
    assert_eq!(r.header("Content-Type"), Some("application/json"));

    let r = s.get("/raise");
    assert_eq!(r.status, 500);
    let log = wait_for_log(&s, "boom from the handler");
    assert!(log.contains("ArgumentError") && log.contains("raise.rb:2"), "no backtrace in the error log:\n{log}");
    for _ in 0..3 {
        assert_eq!(s.get("/inline").status, 200);
    }

    // Two workers, many requests: each VM runs the script many times, always isolated.
    for _ in 0..50 {
        assert_eq!(s.get("/isolated").text(), "1 1 nil", "{}", s.error_log());
    }
    assert!(!s.error_log().contains("already initialized constant"), "{}", s.error_log());

    let r = s.get("/rewrite");
    assert_eq!((r.status, r.text().as_str()), (200, "target reached"), "{}", s.error_log());
    let r = s.get("/moved");
    assert_eq!((r.status, r.header("Location")), (301, Some("http://example.com/new")));

    assert_eq!(s.get("/denied").status, 403);
    let r = request(s.port, "GET", "/denied", &[("X-Key", "open")], b"");
    assert_eq!((r.status, r.text().as_str()), (200, "let in"));

    assert_eq!(s.get("/var?name=bob").text(), "hi bob", "{}", s.error_log());
    let r = s.get("/setvar");
    assert_eq!((r.text().as_str(), r.header("X-Mine")), ("after", Some("after")), "{}", s.error_log());

    let r = request(s.port, "POST", "/echo", &[], b"abcdef");
    assert_eq!(r.text(), "POST:fedcba");
    let big = "x".repeat(300_000) + "y";
    let r = request(s.port, "POST", "/echo", &[], big.as_bytes());
    assert_eq!(r.body.len(), "POST:".len() + big.len(), "{}", s.error_log());
    assert!(r.text().starts_with("POST:yx"));

    assert_eq!(s.get("/status").status, 404);
    // A content script that ends at once answers through its handler's result: a status
    // it set, an internal redirect, a HEAD request (headers only, the body's length).
    let r = s.get("/created");
    assert_eq!((r.status, r.text().as_str()), (201, "made"), "{}", s.error_log());
    let r = s.get("/content-redirect");
    assert_eq!((r.status, r.text().as_str()), (200, "target reached"), "{}", s.error_log());
    let r = request(s.port, "HEAD", "/inline", &[], b"");
    assert_eq!((r.status, r.body.len()), (200, 0), "{}", s.error_log());
    assert_eq!(r.header("Content-Length"), Some("hello HEAD /inline ".len().to_string().as_str()));

    let r = s.get("/logged");
    assert_eq!(r.text(), "logged\nvia puts\n");
    let log = wait_for_log(&s, "carmine-log /logged");
    assert!(log.contains("carmine-log /logged"), "{log}");

    // Reload of a changed file.
    assert_eq!(s.get("/reload").text(), "version 1");
    s.write("reload.rb", "Nginx.rputs 'version two'");
    for _ in 0..10 {
        assert_eq!(s.get("/reload").text(), "version two", "{}", s.error_log());
    }
    // A worker uses a file without a stat until inotify reports a change (or a second
    // passed): changes made right after a request, in place and by replacing the file
    // with a rename (as editors and deploy tools do), are seen by the next request.
    for i in 3..8 {
        if i % 2 == 0 {
            s.write("reload.rb", &format!("Nginx.rputs 'version {i}'"));
        } else {
            s.write("reload.rb.new", &format!("Nginx.rputs 'version {i}'"));
            std::fs::rename(s.dir.join("reload.rb.new"), s.dir.join("reload.rb")).unwrap();
        }
        assert_eq!(s.get("/reload").text(), format!("version {i}"), "{}", s.error_log());
    }
}

/// A handler that sleeps or waits on a socket suspends its run and yields to nginx's event
/// loop: with one worker, many sleeping requests are inside their handlers at the same
/// time, a fast location answers while they sleep, a handler can wait for a response from
/// the same worker, rewrite and access scripts can sleep too, and every suspended run keeps
/// its own globals.
#[test]
fn suspended_handlers_do_not_block_the_worker() {
    let Some(build) = setup() else { return };
    // STATE is shared by the runs (an object the init script made): how many handlers are
    // inside their sleep now, and the most there ever were at once.
    let init = "STATE = { in: 0, max: 0 }\n";
    let site = r##"
location /slow {
    carmine_content_handler_code 'STATE[:in] += 1; STATE[:max] = [STATE[:max], STATE[:in]].max; sleep 1; STATE[:in] -= 1; Nginx.rputs "#{Nginx::Request.new.args} #{STATE[:max]}"';
}
location /inside { carmine_content_handler_code 'Nginx.rputs STATE[:in].to_s'; }
location /fast { return 200 "fast"; }
location /own {
    carmine_content_handler_code '$mine = Nginx::Request.new.args; MINE = $mine; sleep 0.2; Nginx.rputs "#{$mine} #{MINE}"';
}
location /loopback {
    carmine_content_handler_code 'require "socket"; s = TCPSocket.new("127.0.0.1", Nginx::Request.new.args.to_i); s.write "GET /own?inner HTTP/1.0\r\n\r\n"; Nginx.rputs s.read.lines.last';
}
location /gate {
    carmine_rewrite_handler_code 'sleep 0.1; $seen = "rewrite"';
    carmine_access_handler_code 'sleep 0.1; Nginx.return Nginx::HTTP_FORBIDDEN if Nginx::Request.new.args == "deny"';
    carmine_content_handler_code 'sleep 0.1; Nginx.rputs "through #{$seen.inspect}"';
}
location /expire { carmine_content_handler_code 'sleep 10'; }
"##;
    let s = one_worker(build, init, site);

    // Many requests sleeping at once in the one worker.
    const N: usize = 24;
    let done = Arc::new(AtomicUsize::new(0));
    let port = s.port;
    let slow: Vec<_> = (0..N)
        .map(|i| {
            let done = done.clone();
            std::thread::spawn(move || {
                let r = request(port, "GET", &format!("/slow?{i}"), &[], b"");
                done.fetch_add(1, Ordering::SeqCst);
                r
            })
        })
        .collect();
    // The worker answers other locations (a Ruby one, and nginx's own) while they sleep,
    // until all N are inside their handlers.
    let mut inside = 0;
    for _ in 0..400 {
        let r = s.get("/inside");
        assert_eq!(r.status, 200, "{}", s.error_log());
        inside = r.text().parse().unwrap();
        if inside == N {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(inside, N, "the sleeping handlers were not all inside at once\n{}", s.error_log());
    assert_eq!(s.get("/fast").text(), "fast");
    assert_eq!(done.load(Ordering::SeqCst), 0, "a sleeping request finished before the fast ones were answered");
    for (i, t) in slow.into_iter().enumerate() {
        let r = t.join().unwrap();
        assert_eq!((r.status, r.text()), (200, format!("{i} {N}")), "{}", s.error_log());
    }

    // Runs suspended together each keep their own globals and constants.
    let own: Vec<_> = (0..10).map(|i| std::thread::spawn(move || request(port, "GET", &format!("/own?v{i}"), &[], b"").text())).collect();
    for (i, t) in own.into_iter().enumerate() {
        assert_eq!(t.join().unwrap(), format!("v{i} v{i}"), "{}", s.error_log());
    }
    assert!(!s.error_log().contains("already initialized constant"), "{}", s.error_log());

    // A handler waiting for a socket: here for a response the same worker produces.
    let r = s.get(&format!("/loopback?{port}"));
    assert_eq!((r.status, r.text().as_str()), (200, "inner inner"), "{}", s.error_log());

    // Rewrite, access and content scripts in one request, each sleeping.
    let r = s.get("/gate?ok");
    assert_eq!((r.status, r.text().as_str()), (200, "through nil"), "{}", s.error_log());
    assert_eq!(s.get("/gate?deny").status, 403);

    // The timeout counts suspended time: the run ends with 500, the worker goes on.
    let http_timeout = Server::start_with_env(Kind::Nginx, "", build, MAIN, site, &[("init.rb", init), ("http.conf", "carmine_init {dir}/init.rb;\ncarmine_timeout 300ms;\n")], &[("NGINX_WORKERS", "1")]);
    assert_eq!(http_timeout.get("/expire").status, 500);
    assert!(wait_for_log(&http_timeout, "TimeoutError").contains("TimeoutError"), "{}", http_timeout.error_log());
    assert_eq!(http_timeout.get("/fast").text(), "fast");
}

/// Mutex, Queue and ConditionVariable waits suspend the run (the VM's waker resumes it
/// when another request unlocks, pushes or signals), so one worker keeps serving while
/// a request waits on them. With a blocked worker the polling requests below would not
/// be answered before the waiting ones end (at the 20 s `carmine_timeout`, with 500).
#[test]
fn mutex_queue_and_condition_waits_do_not_block_the_worker() {
    let Some(build) = setup() else { return };
    let init = "Q = Queue.new\nGATE = Queue.new\nM = Mutex.new\nCV = ConditionVariable.new\nSTATE = Hash.new(0)\n";
    let site = r##"
location /pop { carmine_content_handler_code 'STATE[:pop] += 1; v = Q.pop; Nginx.rputs "got #{v}"'; }
location /push { carmine_content_handler_code 'Q << Nginx::Request.new.args; Nginx.rputs "pushed"'; }
location /state { carmine_content_handler_code 'Nginx.rputs STATE[Nginx::Request.new.args.to_sym].to_s'; }
location /poptimeout { carmine_content_handler_code 'Nginx.rputs "got #{Q.pop(timeout: 0.2).inspect}"'; }
location /hold { carmine_content_handler_code 'M.synchronize { STATE[:held] += 1; GATE.pop }; Nginx.rputs "released"'; }
location /lock { carmine_content_handler_code 'STATE[:lock] += 1; M.synchronize { Nginx.rputs "locked #{STATE[:held]}" }'; }
location /open { carmine_content_handler_code 'GATE << 1; Nginx.rputs "opened"'; }
location /cvwait { carmine_content_handler_code 'M.synchronize { STATE[:cv] += 1; CV.wait(M) until STATE[:go] > 0; Nginx.rputs "signalled" }'; }
location /cvsignal { carmine_content_handler_code 'M.synchronize { STATE[:go] += 1; CV.signal }; Nginx.rputs "signal"'; }
location /fast { return 200 "fast"; }
"##;
    let s = one_worker(build, init, site);
    let port = s.port;
    // Polls /state?key until it answers `want` (each answer is itself proof the worker
    // is free).
    let wait_state = |key: &str, want: &str| {
        for _ in 0..2000 {
            let r = s.get(&format!("/state?{key}"));
            assert_eq!(r.status, 200, "{}", s.error_log());
            if r.text() == want {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("{key} never reached {want}\n{}", s.error_log());
    };
    let background = |path: &'static str| {
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        let t = std::thread::spawn(move || {
            let r = request(port, "GET", path, &[], b"");
            d.fetch_add(1, Ordering::SeqCst);
            r
        });
        (t, done)
    };

    // Queue#pop: three requests wait at once; each push wakes one of them.
    let pops: Vec<_> = (0..3).map(|_| background("/pop")).collect();
    wait_state("pop", "3");
    assert_eq!(s.get("/fast").text(), "fast");
    assert!(pops.iter().all(|(_, d)| d.load(Ordering::SeqCst) == 0), "a pop ended before anything was pushed");
    let mut got: Vec<String> = Vec::new();
    for v in ["a", "b", "c"] {
        assert_eq!(s.get(&format!("/push?{v}")).text(), "pushed", "{}", s.error_log());
    }
    for (t, _) in pops {
        let r = t.join().unwrap();
        assert_eq!(r.status, 200, "{}", s.error_log());
        got.push(r.text());
    }
    got.sort();
    assert_eq!(got, ["got a", "got b", "got c"]);

    // A timed pop that nobody fills ends when its timer does.
    assert_eq!(s.get("/poptimeout").text(), "got nil", "{}", s.error_log());

    // Mutex#lock: /hold keeps the lock while it waits on GATE; /lock waits for the lock.
    let (hold, _) = background("/hold");
    wait_state("held", "1");
    let (lock, lock_done) = background("/lock");
    wait_state("lock", "1");
    assert_eq!(s.get("/fast").text(), "fast");
    assert_eq!(lock_done.load(Ordering::SeqCst), 0, "/lock got the lock while /hold held it");
    assert_eq!(s.get("/open").text(), "opened");
    assert_eq!(hold.join().unwrap().text(), "released", "{}", s.error_log());
    assert_eq!(lock.join().unwrap().text(), "locked 1", "{}", s.error_log());

    // ConditionVariable#wait (which gives the Mutex up while it waits) and #signal.
    let (cv, cv_done) = background("/cvwait");
    wait_state("cv", "1");
    assert_eq!(cv_done.load(Ordering::SeqCst), 0);
    assert_eq!(s.get("/cvsignal").text(), "signal", "{}", s.error_log());
    assert_eq!(cv.join().unwrap().text(), "signalled", "{}", s.error_log());
    assert!(!s.error_log().contains("[alert]"), "{}", s.error_log());
}

/// A script may start Ruby threads. `Thread#value` waits for them in place (the worker
/// serves nothing else meanwhile: docs/web-servers.md, "What still blocks the worker"),
/// and once the run's threads have ended its waits suspend again: with one worker,
/// /state is answered while /join sleeps (3 s) after joining. A thread a run leaves running
/// is killed when the run ends: its change never lands, and the worker goes on.
#[test]
fn threads_started_by_a_script() {
    let Some(build) = setup() else { return };
    let site = r##"
location /join { carmine_content_handler_code 't = Thread.new { 21 * 2 }; v = t.value; STATE[:joined] = true; sleep 3; Nginx.rputs v.to_s'; }
location /state { carmine_content_handler_code 'Nginx.rputs STATE[:joined].inspect'; }
location /queue { carmine_content_handler_code 'q = Queue.new; t = Thread.new { q.pop * 2 }; q << 5; Nginx.rputs "#{t.value} #{$g.inspect}"'; }
location /leave { carmine_content_handler_code 'Thread.new { sleep 0.2; $g = 2 }; Nginx.rputs "left"'; }
"##;
    let s = one_worker(build, "STATE = {}\n", site);
    let port = s.port;
    let start = std::time::Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let join = std::thread::spawn(move || {
        let r = request(port, "GET", "/join", &[], b"");
        d.fetch_add(1, Ordering::SeqCst);
        r
    });
    let mut joined = false;
    for _ in 0..2000 {
        if s.get("/state").text() == "true" {
            joined = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(joined, "/join never joined its thread\n{}", s.error_log());
    let answered = start.elapsed();
    assert!(done.load(Ordering::SeqCst) == 0 && answered.as_secs_f64() < 2.5, "the worker answered only after /join's sleep ({answered:?}): it blocked");
    assert_eq!(join.join().unwrap().text(), "42", "{}", s.error_log());

    assert_eq!(s.get("/queue").text(), "10 nil", "{}", s.error_log());
    assert_eq!(s.get("/leave").text(), "left", "{}", s.error_log());
    std::thread::sleep(std::time::Duration::from_millis(400));
    for _ in 0..5 {
        assert_eq!(s.get("/queue").text(), "10 nil", "{}", s.error_log());
    }
    assert!(!s.error_log().contains("[alert]"), "{}", s.error_log());
}

/// `Thread#join` and `Thread#value` suspend a run while its threads go on (the worker is
/// in its event loop meanwhile): several requests each start threads that wait for a
/// signal another request gives, then join them. Each thread sees and changes only its
/// own run's globals; the other runs' requests are answered during the waits.
#[test]
fn joins_do_not_block_the_worker() {
    let Some(build) = setup() else { return };
    let site = r##"
location /work { carmine_content_handler_code 'n = (STATE[:started] += 1); $g = n; ts = [Thread.new { sleep 0.01 until STATE[:go]; $g += 100; n * 10 }, Thread.new(n) { |k| Thread.new { k }.value }]; ts[0].join; Nginx.rputs "#{n} #{ts.map(&:value).inspect} #{$g}"'; }
location /state { carmine_content_handler_code 'Nginx.rputs "#{STATE[:started]} #{$g.inspect}"'; }
location /go { carmine_content_handler_code 'STATE[:go] = true; Nginx.rputs "go"'; }
location /api { carmine_content_handler_code 'Nginx.rputs Thread.new { begin; Nginx.rputs "x"; rescue ThreadError => e; e.class.name; end }.value'; }
"##;
    let s = one_worker(build, "STATE = {started: 0}\n", site);
    let port = s.port;
    let done = Arc::new(AtomicUsize::new(0));
    let works: Vec<_> = (0..3)
        .map(|_| {
            let d = done.clone();
            std::thread::spawn(move || {
                let r = request(port, "GET", "/work", &[], b"");
                d.fetch_add(1, Ordering::SeqCst);
                r
            })
        })
        .collect();
    let mut started = false;
    for _ in 0..2000 {
        if s.get("/state").text() == "3 nil" {
            started = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(started, "the worker did not answer while /work joined its threads\n{}", s.error_log());
    assert_eq!(done.load(Ordering::SeqCst), 0, "a /work ended before its threads could");
    assert_eq!(s.get("/go").text(), "go", "{}", s.error_log());
    let mut answers: Vec<String> = works.into_iter().map(|w| w.join().unwrap().text()).collect();
    answers.sort();
    assert_eq!(answers, ["1 [10, 1] 101", "2 [20, 2] 102", "3 [30, 3] 103"], "{}", s.error_log());
    assert_eq!(s.get("/state").text(), "3 nil", "{}", s.error_log());
    // A thread calling the Nginx API while the worker is outside the VM gets a ThreadError.
    assert_eq!(s.get("/api").text(), "ThreadError", "{}", s.error_log());
    assert!(!s.error_log().contains("[alert]"), "{}", s.error_log());
}
