//! ngx_http_carmine_module inside a real nginx 1.22: content, rewrite, access and log
//! handlers, `carmine_set` variables, headers, request bodies read by nginx's non-blocking
//! reader, errors (500 and the backtrace in the error log), isolation and reload.

use carmine_web_servers::{handler_rb, request, setup, wait_for_log, Build, Kind, Server, RAISE_RB};

const MAIN: &str = "load_module {build}/ngx_http_carmine_module.so;\n";

fn start(build: &Build, site: &str, files: &[(&str, &str)]) -> Server {
    Server::start(Kind::Nginx, "", build, MAIN, site, files)
}

/// `carmine_init` runs once per worker and what it defines persists; `carmine_timeout`
/// ends a runaway script with 500 and the worker keeps serving.
#[test]
fn init_and_limits() {
    let Some(build) = setup() else { return };
    let http = "carmine_init {dir}/init.rb;\ncarmine_timeout 300ms;\ncarmine_gc_every 10;\n";
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
}
