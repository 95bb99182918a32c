//! The Rust side of the web-server tests: builds libcarmine and the modules (through
//! `servers/harness`), starts Apache httpd or nginx with a generated config on a free
//! loopback port, and sends real HTTP requests.
//!
//! Invariants:
//! - Every server lives in its own temporary directory and is stopped (all its processes
//!   gone) when its `Server` is dropped, also when a test fails.
//! - The modules are built once per test process, against the libcarmine of the profile
//!   the tests were built with (target/release for `cargo test --release`).
//! - `setup` returns None (after printing why) only when the servers cannot exist on this
//!   machine: no Debian packages installed and no way to install them.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// Where the built modules are.
pub struct Build {
    pub dir: PathBuf,
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("workspace root")
}

fn harness() -> PathBuf {
    root().join("servers/harness")
}

/// target/<profile>, from the path of the running test executable (…/target/<profile>/deps/x).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().and_then(Path::parent).expect("target/<profile>").to_path_buf()
}

/// Installs the servers when missing and builds the modules, once per process.
pub fn setup() -> Option<&'static Build> {
    static BUILD: OnceLock<Option<Build>> = OnceLock::new();
    BUILD.get_or_init(|| {
        let deps = Command::new(harness()).arg("deps").status().expect("run servers/harness deps");
        if deps.code() == Some(3) {
            eprintln!("SKIPPED: Apache httpd and nginx are not installed and cannot be installed here (see the message above)");
            return None;
        }
        assert!(deps.success(), "servers/harness deps failed");
        let profile = profile_dir();
        // Always through cargo (a no-op when it is up to date): `cargo test` builds the
        // carmine-embed crate for its tests but does not refresh `libcarmine.a`, and a stale
        // archive links modules that miss the newer C API.
        let lib = profile.join("libcarmine.a");
        let release = profile.file_name().is_some_and(|n| n == "release");
        let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cargo.current_dir(root()).args(["build", "-p", "carmine-embed", "--lib"]);
        if release {
            cargo.arg("--release");
        }
        assert!(cargo.status().expect("run cargo").success(), "building libcarmine failed");
        assert!(lib.exists(), "{} was not built", lib.display());
        let dir = profile.join("web-servers");
        let status = Command::new(harness())
            .args(["build", dir.to_str().unwrap()])
            .env("CARMINE_LIB_DIR", &profile)
            .env("CARMINE_INCLUDE_DIR", root().join("crates/carmine-embed/include"))
            .status()
            .expect("run servers/harness build");
        assert!(status.success(), "building the modules failed");
        Some(Build { dir })
    })
    .as_ref()
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Apache,
    Nginx,
}

/// A running server in its own directory.
pub struct Server {
    pub dir: PathBuf,
    pub port: u16,
}

impl Server {
    /// Starts a server whose site config is `site` (and, for nginx, `main` before the http
    /// block). `{dir}` in the configs and in `files` is replaced by the server's directory,
    /// `{build}` by the modules' directory. `files` are written into the directory first.
    pub fn start(kind: Kind, mpm: &str, build: &Build, main: &str, site: &str, files: &[(&str, &str)]) -> Server {
        Server::start_with_env(kind, mpm, build, main, site, files, &[])
    }

    /// `start` with variables for `servers/harness` (e.g. `NGINX_WORKERS`).
    pub fn start_with_env(kind: Kind, mpm: &str, build: &Build, main: &str, site: &str, files: &[(&str, &str)], env: &[(&str, &str)]) -> Server {
        let dir = tempdir();
        let fill = |s: &str| s.replace("{dir}", dir.to_str().unwrap()).replace("{build}", build.dir.to_str().unwrap());
        for (name, content) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, fill(content)).unwrap();
        }
        std::fs::write(dir.join("site.conf"), fill(site)).unwrap();
        if !main.is_empty() {
            std::fs::write(dir.join("main.conf"), fill(main)).unwrap();
        }
        let kind_name = if kind == Kind::Apache { "apache" } else { "nginx" };
        let out = Command::new(harness())
            .args(["start", kind_name, dir.to_str().unwrap(), "auto"])
            .env("MPM", mpm)
            .envs(env.iter().copied())
            .output()
            .expect("run servers/harness start");
        let port = String::from_utf8_lossy(&out.stdout).trim().parse().ok();
        match port {
            Some(port) if out.status.success() => Server { dir, port },
            _ => panic!("the {kind:?} server did not start:\n{}", String::from_utf8_lossy(&out.stderr)),
        }
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }

    pub fn write(&self, name: &str, content: &str) {
        std::fs::write(self.dir.join(name), content).unwrap();
    }

    pub fn get(&self, path: &str) -> Response {
        request(self.port, "GET", path, &[], b"")
    }

    /// The process ids of the server (master first).
    pub fn pids(&self) -> Vec<u32> {
        let out = Command::new(harness()).args(["pids", self.dir.to_str().unwrap()]).output().expect("harness pids");
        String::from_utf8_lossy(&out.stdout).split_whitespace().filter_map(|s| s.parse().ok()).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(harness()).args(["stop", self.dir.to_str().unwrap()]).status();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!("server directory kept for inspection: {}", self.dir.display());
        }
    }
}

fn tempdir() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("carmine-web-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.1 request on a new connection (`Connection: close`), read to the end.
pub fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the response");
    parse_response(&raw).unwrap_or_else(|| panic!("malformed response: {:?}", String::from_utf8_lossy(&raw)))
}

fn parse_response(raw: &[u8]) -> Option<Response> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))).collect();
    let mut body = raw[end + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body)?;
    }
    Some(Response { status, headers, body })
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n")?;
        let size = usize::from_str_radix(std::str::from_utf8(&b[..eol]).ok()?.split(';').next()?.trim(), 16).ok()?;
        b = &b[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = b.get(size + 2..)?;
    }
}

/// Waits until the error log contains `needle` (log lines of the log phase are written
/// after the response is sent). Gives up after a generous deadline, returning the log.
pub fn wait_for_log(server: &Server, needle: &str) -> String {
    for _ in 0..200 {
        let log = server.error_log();
        if log.contains(needle) {
            return log;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    server.error_log()
}

/// A script file handler for both servers (`module` is "Apache" or "Nginx"): echoes the
/// X-Test request header as JSON and sets a response header.
pub fn handler_rb(module: &str) -> String {
    r##"r = MOD::Request.new
r.headers_out["X-Carmine"] = "handled"
r.content_type = "application/json"
MOD.rputs "{\"got\":\"#{r.headers_in["X-Test"]}\",\"v\":1}"
"##
    .replace("MOD", module)
}

/// A script whose backtrace the error log must show (raise.rb:2, from line 4).
pub const RAISE_RB: &str = "def explode\n  raise ArgumentError, \"boom from the handler\"\nend\nexplode\n";
