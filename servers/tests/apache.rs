//! mod_carmine inside a real Apache httpd 2.4: the event MPM (Debian's default, threads)
//! and prefork. Responses, headers, every phase, errors (500 and the backtrace in the
//! error log, the server keeps serving), isolation between runs, and reload of a changed
//! script file.

use carmine_web_servers::{handler_rb, request, setup, wait_for_log, Build, Kind, Server, RAISE_RB};

const LOAD: &str = "LoadModule carmine_module {build}/mod_carmine.so\n";

fn start(build: &Build, mpm: &str, site: &str, files: &[(&str, &str)]) -> Server {
    Server::start(Kind::Apache, mpm, build, "", &format!("{LOAD}{site}"), files)
}

const HANDLERS: &str = r##"
LoadModule authz_user_module /usr/lib/apache2/modules/mod_authz_user.so
LoadModule authn_core_module /usr/lib/apache2/modules/mod_authn_core.so
carminePostReadRequestCode 'Apache::Request.new.headers_in["X-Post-Read"] = "seen"'
carmineTranslateNameCode 'r = Apache::Request.new; if r.uri == "/translated"; r.filename = r.document_root + "/real.txt"; Apache.return Apache::OK; end'
carmineMapToStorageCode 'r = Apache::Request.new; r.notes["m2s"] = "mapped" if r.uri.start_with?("/phases")'
<Location /inline>
    carmineHandlerCode 'r = Apache::Request.new; r.content_type = "text/plain"; Apache.rputs "hello #{r.method} #{r.uri} #{r.args}"'
</Location>
<Location /file>
    carmineHandler {dir}/handler.rb
</Location>
<Location /raise>
    carmineHandler {dir}/raise.rb
</Location>
<Location /isolated>
    carmineHandlerCode '$count = ($count || 0) + 1; COUNT = $count; def helper = 1; Apache.rputs "#{$count} #{COUNT} #{defined?($leak).inspect}"; $leak = 1'
</Location>
<Location /phases>
    carmineFixupsCode 'Apache::Request.new.notes["fixup"] = "done"'
    carmineHandlerCode 'r = Apache::Request.new; Apache.echo [r.headers_in["X-Post-Read"], r.notes["m2s"], r.notes["fixup"]].join(",")'
    carmineLogTransactionCode 'Apache.errlogger Apache::APLOG_WARNING, "carmine-log #{Apache::Request.new.uri} #{Apache::Request.new.status}"'
</Location>
<Location /denied>
    carmineAccessCheckerCode 'Apache.return Apache::HTTP_FORBIDDEN if Apache::Request.new.headers_in["X-Key"] != "open"'
    carmineHandlerCode 'Apache.rputs "let in"'
</Location>
<Location /auth>
    AuthType Basic
    AuthName carmine
    Require valid-user
    carmineCheckUserIdCode 'r = Apache::Request.new; if r.headers_in["X-User"]; r.user = r.headers_in["X-User"]; Apache.return Apache::OK; else; Apache.return Apache::HTTP_UNAUTHORIZED; end'
    carmineAuthCheckerCode 'Apache.return(Apache::Request.new.user == "alice" ? Apache::OK : Apache::HTTP_FORBIDDEN)'
    carmineHandlerCode 'Apache.rputs "welcome #{Apache::Request.new.user}"'
</Location>
<Location /echo>
    carmineHandlerCode 'r = Apache::Request.new; Apache.rputs "#{r.method}:#{r.body.reverse}"'
</Location>
<Location /status>
    carmineHandlerCode 'Apache.return Apache::HTTP_NOT_FOUND'
</Location>
<Location /info>
    carmineHandlerCode 'c = Apache::Connection.new; s = Apache::Server.new; puts c.remote_ip; puts s.port == c.local_port; puts Apache.module_name; puts Apache::Request.new.headers_in.all["Host"]'
</Location>
"##;


fn common_checks(s: &Server) {
    let r = s.get("/inline?a=1");
    assert_eq!(r.status, 200, "{r:?}\n{}", s.error_log());
    assert_eq!(r.text(), "hello GET /inline a=1");
    assert_eq!(r.header("Content-Type"), Some("text/plain"));

    let r = request(s.port, "GET", "/file", &[("X-Test", "abc")], b"");
    assert_eq!(r.status, 200, "{r:?}\n{}", s.error_log());
    assert_eq!(r.text(), r#"{"got":"abc","v":1}"#);
    assert_eq!(r.header("X-Carmine"), Some("handled"));
    assert_eq!(r.header("Content-Type"), Some("application/json"));

    // A raising script: 500, the report with its backtrace in the error log, and the
    // server (and the same VM) keeps serving.
    let r = s.get("/raise");
    assert_eq!(r.status, 500);
    let log = wait_for_log(s, "boom from the handler");
    assert!(log.contains("ArgumentError"), "{log}");
    assert!(log.contains("raise.rb:2"), "no backtrace in the error log:\n{log}");
    for _ in 0..3 {
        assert_eq!(s.get("/inline").status, 200);
    }

    // Each run is isolated: globals, constants and methods of one run are gone in the next.
    // More requests than worker threads (MaxRequestWorkers 150), so VMs are reused.
    for _ in 0..200 {
        let r = s.get("/isolated");
        assert_eq!(r.status, 200, "{}", s.error_log());
        assert_eq!(r.text(), "1 1 nil");
    }
    assert!(!s.error_log().contains("already initialized constant"), "{}", s.error_log());
}

#[test]
fn event_mpm() {
    let Some(build) = setup() else { return };
    let s = start(build, "event", HANDLERS, &[("handler.rb", &handler_rb("Apache")), ("raise.rb", RAISE_RB), ("htdocs/real.txt", "the real file\n")]);
    common_checks(&s);

    // Phases: post-read-request, map-to-storage and fixups leave marks the handler reads;
    // the log phase writes to the error log after the response.
    let r = s.get("/phases");
    assert_eq!(r.text(), "seen,mapped,done\n", "{}", s.error_log());
    let log = wait_for_log(&s, "carmine-log /phases 200");
    assert!(log.contains("carmine-log /phases 200"), "{log}");

    // translate-name maps a URI to a file the core handler then serves.
    let r = s.get("/translated");
    assert_eq!((r.status, r.text().as_str()), (200, "the real file\n"), "{}", s.error_log());

    // access checker
    assert_eq!(s.get("/denied").status, 403);
    let r = request(s.port, "GET", "/denied", &[("X-Key", "open")], b"");
    assert_eq!((r.status, r.text().as_str()), (200, "let in"));

    // authentication (check_user_id) and authorization (auth_checker)
    assert_eq!(s.get("/auth").status, 401);
    assert_eq!(request(s.port, "GET", "/auth", &[("X-User", "bob")], b"").status, 403);
    let r = request(s.port, "GET", "/auth", &[("X-User", "alice")], b"");
    assert_eq!((r.status, r.text().as_str()), (200, "welcome alice"));

    // request body, status codes, Server / Connection, $stdout into the response
    let r = request(s.port, "POST", "/echo", &[], b"abcdef");
    assert_eq!(r.text(), "POST:fedcba");
    assert_eq!(s.get("/status").status, 404);
    let r = s.get("/info");
    assert_eq!(r.text(), "127.0.0.1\ntrue\nmod_carmine\nlocalhost\n", "{}", s.error_log());
}

#[test]
fn prefork_mpm() {
    let Some(build) = setup() else { return };
    let s = start(build, "prefork", HANDLERS, &[("handler.rb", &handler_rb("Apache")), ("raise.rb", RAISE_RB)]);
    common_checks(&s);
}

/// A changed script file is recompiled at the next request, in every worker thread, with
/// the event MPM and with prefork (where the workers are processes).
#[test]
fn reload_changed_file() {
    let Some(build) = setup() else { return };
    for mpm in ["event", "prefork"] {
        let site = "<Location /r>\n    carmineHandler {dir}/reload.rb\n</Location>\n";
        let s = start(build, mpm, site, &[("reload.rb", "Apache.rputs 'version 1'")]);
        for _ in 0..5 {
            assert_eq!(s.get("/r").text(), "version 1", "{}", s.error_log());
        }
        s.write("reload.rb", "Apache.rputs 'version two'");
        watcher_caught_up(&s);
        for _ in 0..20 {
            assert_eq!(s.get("/r").text(), "version two", "{}", s.error_log());
        }
        // A syntax error is a 500 with the SyntaxError in the log; fixing the file recovers.
        s.write("reload.rb", "Apache.rputs(");
        watcher_caught_up(&s);
        assert_eq!(s.get("/r").status, 500);
        assert!(wait_for_log(&s, "SyntaxError").contains("SyntaxError"), "{}", s.error_log());
        s.write("reload.rb", "Apache.rputs 'version 3'");
        watcher_caught_up(&s);
        for _ in 0..20 {
            assert_eq!(s.get("/r").text(), "version 3", "{mpm}\n{}", s.error_log());
        }
        // The VMs use the file without a stat until the parent's watcher counts a change
        // (or a second passed): changes made right after requests (which every VM of every
        // process likely served in the same second), in place and by replacing the file
        // with a rename, are seen by every request after them; a deleted file is an error
        // (500, Errno::ENOENT in the log) until it is back.
        for i in 4..10 {
            match i % 3 {
                0 => s.write("reload.rb", &format!("Apache.rputs 'version {i}'")),
                1 => {
                    s.write("reload.rb.new", &format!("Apache.rputs 'version {i}'"));
                    std::fs::rename(s.dir.join("reload.rb.new"), s.dir.join("reload.rb")).unwrap();
                }
                _ => {
                    std::fs::remove_file(s.dir.join("reload.rb")).unwrap();
                    watcher_caught_up(&s);
                    assert_eq!(s.get("/r").status, 500, "{}", s.error_log());
                    assert!(wait_for_log(&s, "ENOENT").contains("ENOENT"), "{}", s.error_log());
                    s.write("reload.rb", &format!("Apache.rputs 'version {i}'"));
                }
            }
            watcher_caught_up(&s);
            for _ in 0..20 {
                assert_eq!(s.get("/r").text(), format!("version {i}"), "{mpm}\n{}", s.error_log());
            }
        }
    }
}

/// Waits until the watcher thread of the server's parent process (named carmine-watch)
/// sleeps, i.e. has read the inotify events of the changes made before this call: the
/// kernel queues them and wakes it inside the system calls that make the changes.
fn watcher_caught_up(s: &Server) {
    let parent = s.pids()[0];
    let tasks = std::fs::read_dir(format!("/proc/{parent}/task")).unwrap();
    let watcher = tasks
        .filter_map(|t| t.ok())
        .map(|t| t.path())
        .find(|t| std::fs::read_to_string(t.join("comm")).is_ok_and(|c| c.trim() == "carmine-watch"))
        .unwrap_or_else(|| panic!("no carmine-watch thread in Apache's parent process {parent}\n{}", s.error_log()));
    for _ in 0..1000 {
        let stat = std::fs::read_to_string(watcher.join("stat")).unwrap();
        let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
        if state == Some(Some('S')) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("Apache's carmine-watch thread never went back to sleep");
}

/// `carmineInit` defines what every run of the VM may use; `carmineTimeout` ends a runaway
/// script with a 500 and Carmine::TimeoutError in the log, and the server keeps serving;
/// the memory directives (one VM per process collecting after every allocating run) are
/// accepted and the VM serves an allocating script run after run.
#[test]
fn init_and_limits() {
    let Some(build) = setup() else { return };
    let site = "carmineInit {dir}/init.rb\ncarmineTimeout 300\ncarmineMaxVMs 1\ncarmineGCMallocLimit 16384\ncarmineMallocArenas 2\n\
        <Location /alloc>\n    carmineHandlerCode 'a = Array.new(1000) { |i| i }; Apache.rputs \"#{a.sum} #{(\"x\" * 1000).size}\"'\n</Location>\n\
        <Location /greet>\n    carmineHandlerCode 'Apache.rputs Greeter.new.greet(Apache::Request.new.args)'\n</Location>\n\
        <Location /spin>\n    carmineHandlerCode 'loop {}'\n</Location>\n";
    let init = "class Greeter\n  def greet(name) = \"hello, #{name}\"\nend\n";
    let s = start(build, "event", site, &[("init.rb", init)]);
    for _ in 0..3 {
        let r = s.get("/greet?ann");
        assert_eq!((r.status, r.text().as_str()), (200, "hello, ann"), "{}", s.error_log());
    }
    // A VM per process that collects after every run allocating 4 KiB or more.
    for _ in 0..40 {
        assert_eq!(s.get("/alloc").text(), "499500 1000", "{}", s.error_log());
    }
    assert_eq!(s.get("/spin").status, 500);
    assert!(wait_for_log(&s, "TimeoutError").contains("TimeoutError"), "{}", s.error_log());
    assert_eq!(s.get("/greet?bob").text(), "hello, bob");
}

/// The C "Hello World" module the benchmark compares with.
#[test]
fn hello_module() {
    let Some(build) = setup() else { return };
    let site = "LoadModule hello_module {build}/mod_hello.so\n<Location />\n    SetHandler hello\n</Location>\n";
    let s = Server::start(Kind::Apache, "event", build, "", site, &[]);
    let r = s.get("/");
    assert_eq!((r.status, r.text().as_str()), (200, "hello world\n"));
}
