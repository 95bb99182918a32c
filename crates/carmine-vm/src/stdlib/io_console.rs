//! `io/console`: terminal control on IO objects (raw and cooked modes, echo, window
//! size, getch/getpass, cursor movement) over termios and ioctl, and `IO.console`.
//!
//! Invariants:
//! - A mode change with a block (`raw {}`, `cooked {}`, `noecho {}`) restores the
//!   terminal's previous attributes when the block ends, also by an exception.
//! - `IO.console` opens /dev/tty once per VM and keeps it in a hidden instance variable
//!   of IO (`IO.console(:close)` closes and forgets it); nil when there is no terminal.
//! - Errors of tcgetattr/ioctl are raised as Errno exceptions with the IO's path.

use crate::core::{array, integer, object, string};
use crate::core::process::{errno_error, last_errno};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn fd_of(ctx: &mut Ctx, io: Value) -> Result<i32> {
    let fd = ctx.call_str(io, "fileno", &[])?;
    integer::to_int_arg(ctx, fd)
}

fn sys_fail(ctx: &mut Ctx, io: Value) -> crate::error::Unwind {
    let code = last_errno();
    let path = ctx.call_str(io, "path", &[]).ok().filter(|p| string::is_string(*p)).map(string::to_rust_string_lossy).unwrap_or_default();
    errno_error(ctx, code, &path)
}

fn get_attr(ctx: &mut Ctx, io: Value) -> Result<(i32, libc::termios)> {
    let fd = fd_of(ctx, io)?;
    // SAFETY: termios is plain data; tcgetattr fills it or fails.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: `t` is a valid termios to write into.
    if unsafe { libc::tcgetattr(fd, &mut t) } != 0 {
        return Err(sys_fail(ctx, io));
    }
    Ok((fd, t))
}

fn set_attr(ctx: &mut Ctx, io: Value, fd: i32, t: &libc::termios) -> Result<()> {
    // SAFETY: `t` is a termios read by tcgetattr and adjusted.
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, t) } != 0 {
        return Err(sys_fail(ctx, io));
    }
    Ok(())
}

/// Options of `raw`/`getch`: `min:` and `time:` (VMIN, VTIME in tenths of a second) and
/// `intr:` (keep Ctrl-C and friends as signals).
struct RawOpts {
    min: Option<u8>,
    time: Option<u8>,
    intr: bool,
}

fn raw_opts(ctx: &mut Ctx, args: &Args) -> Result<RawOpts> {
    let mut o = RawOpts { min: None, time: None, intr: false };
    let Some(kw) = args.kw else { return Ok(o) };
    let get = |ctx: &mut Ctx, name: &str| {
        let id = ctx.intern(name);
        crate::core::hash::get(kw, Value::symbol(id)).filter(|v| !v.is_nil())
    };
    if let Some(v) = get(ctx, "min") {
        o.min = Some(integer::to_int_arg(ctx, v)?.clamp(0, 255) as u8);
    }
    if let Some(v) = get(ctx, "time") {
        let secs = crate::core::numeric::to_f64(ctx, v)?;
        o.time = Some((secs * 10.0).clamp(0.0, 255.0) as u8);
    }
    o.intr = get(ctx, "intr").is_some_and(|v| v.truthy());
    Ok(o)
}

fn make_raw(t: &mut libc::termios, o: &RawOpts) {
    // SAFETY: cfmakeraw only adjusts the flags of the termios it is given.
    unsafe { libc::cfmakeraw(t) };
    t.c_lflag &= !(libc::ECHOE | libc::ECHOK);
    if o.intr {
        t.c_iflag |= libc::BRKINT;
        t.c_lflag |= libc::ISIG;
        t.c_oflag |= libc::OPOST;
    }
    if let Some(m) = o.min {
        t.c_cc[libc::VMIN] = m;
    }
    if let Some(tm) = o.time {
        t.c_cc[libc::VTIME] = tm;
    }
}

fn make_cooked(t: &mut libc::termios) {
    t.c_iflag |= libc::BRKINT | libc::ISTRIP | libc::ICRNL | libc::IXON;
    t.c_oflag |= libc::OPOST;
    t.c_lflag |= libc::ECHO | libc::ECHOE | libc::ECHOK | libc::ECHONL | libc::ICANON | libc::ISIG | libc::IEXTEN;
}

fn make_noecho(t: &mut libc::termios) {
    t.c_lflag &= !(libc::ECHO | libc::ECHOE | libc::ECHOK | libc::ECHONL);
}

/// Sets a mode, runs `body`, and restores the attributes read before.
fn with_mode(ctx: &mut Ctx, io: Value, change: impl FnOnce(&mut libc::termios), body: impl FnOnce(&mut Ctx) -> Result<Value>) -> Result<Value> {
    let (fd, saved) = get_attr(ctx, io)?;
    let mut t = saved;
    change(&mut t);
    set_attr(ctx, io, fd, &t)?;
    let r = body(ctx);
    let restored = set_attr(ctx, io, fd, &saved);
    let v = r?;
    restored?;
    Ok(v)
}

fn yield_self(ctx: &mut Ctx, io: Value, args: &Args) -> Result<Value> {
    match &args.block {
        Some(b) => ctx.yield1(b, io),
        None => Err(ctx.raise(ctx.c().local_jump_error, "no block given (yield)")),
    }
}

fn m_raw(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = raw_opts(ctx, args)?;
    with_mode(ctx, recv, |t| make_raw(t, &o), |ctx| yield_self(ctx, recv, args))
}

fn m_raw_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = raw_opts(ctx, args)?;
    let (fd, mut t) = get_attr(ctx, recv)?;
    make_raw(&mut t, &o);
    set_attr(ctx, recv, fd, &t)?;
    Ok(recv)
}

fn m_cooked(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_mode(ctx, recv, make_cooked, |ctx| yield_self(ctx, recv, args))
}

fn m_cooked_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (fd, mut t) = get_attr(ctx, recv)?;
    make_cooked(&mut t);
    set_attr(ctx, recv, fd, &t)?;
    Ok(recv)
}

fn m_noecho(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_mode(ctx, recv, make_noecho, |ctx| yield_self(ctx, recv, args))
}

fn m_set_echo(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (fd, mut t) = get_attr(ctx, recv)?;
    if args.pos[0].truthy() {
        t.c_lflag |= libc::ECHO | libc::ECHOE | libc::ECHOK | libc::ECHONL;
    } else {
        make_noecho(&mut t);
    }
    set_attr(ctx, recv, fd, &t)?;
    Ok(args.pos[0])
}

fn m_echo_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, t) = get_attr(ctx, recv)?;
    Ok(Value::bool(t.c_lflag & libc::ECHO != 0))
}

fn m_getch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = raw_opts(ctx, args)?;
    with_mode(ctx, recv, |t| make_raw(t, &o), |ctx| ctx.call_str(recv, "getc", &[]))
}

/// `getpass(prompt = nil)`: writes the prompt, reads a line without echo, ends the line
/// the user could not see, and returns it without its newline.
/// Standard input prompts on standard error.
fn m_getpass(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let obj = ctx.c().object;
    let stdin_id = ctx.intern("STDIN");
    let stdin = crate::core::module::body(obj).const_get(stdin_id).map(|e| e.value);
    let out = if stdin == Some(recv) {
        let id = ctx.intern("$stderr");
        crate::core::globals::get(ctx, id)?
    } else {
        recv
    };
    if let Some(&p) = args.pos.first() {
        if !p.is_nil() {
            ctx.call_str(out, "write", &[p])?;
            ctx.call_str(out, "flush", &[])?;
        }
    }
    let line = with_mode(ctx, recv, make_noecho, |ctx| ctx.call_str(recv, "gets", &[]))?;
    let mark = ctx.protect(line);
    let nl = string::new_utf8(ctx, "\n");
    let w = ctx.call_str(out, "write", &[nl]);
    ctx.unprotect(mark);
    w?;
    if line.is_nil() {
        return Ok(line);
    }
    ctx.call_str(line, "chomp!", &[])?;
    Ok(line)
}

fn winsize(ctx: &mut Ctx, io: Value) -> Result<libc::winsize> {
    let fd = fd_of(ctx, io)?;
    // SAFETY: winsize is plain data that TIOCGWINSZ fills.
    let mut w: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize into `w`.
    if unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut w) } != 0 {
        return Err(sys_fail(ctx, io));
    }
    Ok(w)
}

fn m_winsize(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let w = winsize(ctx, recv)?;
    Ok(array::from_slice(ctx, &[Value::fixnum(w.ws_row as i64), Value::fixnum(w.ws_col as i64)]))
}

/// `winsize = [rows, columns]` or `[rows, columns, xpixels, ypixels]`.
fn m_set_winsize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let size = args.pos[0];
    let a = array::to_ary_arg(ctx, size)?;
    let n = array::len(a);
    if n != 2 && n != 4 {
        return Err(ctx.arg_error(&format!("wrong number of arguments (given {n}, expected 2 or 4)")));
    }
    let mut dims = [0u16; 4];
    for (i, d) in dims.iter_mut().enumerate().take(n) {
        *d = integer::to_int_arg(ctx, array::get(a, i))?.clamp(0, u16::MAX as i32) as u16;
    }
    let fd = fd_of(ctx, recv)?;
    let w = libc::winsize { ws_row: dims[0], ws_col: dims[1], ws_xpixel: dims[2], ws_ypixel: dims[3] };
    // SAFETY: TIOCSWINSZ reads one winsize from `w`.
    if unsafe { libc::ioctl(fd, libc::TIOCSWINSZ, &w) } != 0 {
        return Err(sys_fail(ctx, recv));
    }
    Ok(size)
}

fn flush(ctx: &mut Ctx, io: Value, which: i32) -> Result<Value> {
    let fd = fd_of(ctx, io)?;
    // SAFETY: tcflush only discards queued terminal data.
    if unsafe { libc::tcflush(fd, which) } != 0 {
        return Err(sys_fail(ctx, io));
    }
    Ok(io)
}

fn m_iflush(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    flush(ctx, recv, libc::TCIFLUSH)
}

fn m_oflush(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    flush(ctx, recv, libc::TCOFLUSH)
}

fn m_ioflush(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    flush(ctx, recv, libc::TCIOFLUSH)
}

fn write_seq(ctx: &mut Ctx, io: Value, seq: &str) -> Result<Value> {
    let s = string::new_utf8(ctx, seq);
    ctx.call_str(io, "write", &[s])?;
    Ok(io)
}

fn int_arg(ctx: &mut Ctx, args: &Args, i: usize) -> Result<i64> {
    integer::to_i64_arg(ctx, args.pos[i])
}

fn m_beep(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    write_seq(ctx, recv, "\x07")
}

fn m_goto(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (row, col) = (int_arg(ctx, args, 0)?, int_arg(ctx, args, 1)?);
    write_seq(ctx, recv, &format!("\x1b[{};{}H", row + 1, col + 1))
}

fn m_goto_column(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let col = int_arg(ctx, args, 0)?;
    write_seq(ctx, recv, &format!("\x1b[{}G", col + 1))
}

/// Moves the cursor by `n` cells: positive `up`/`down`/`right`/`left` sequences.
fn move_cursor(ctx: &mut Ctx, io: Value, n: i64, forward: char, backward: char) -> Result<Value> {
    if n == 0 {
        return Ok(io);
    }
    let (n, c) = if n > 0 { (n, forward) } else { (-n, backward) };
    write_seq(ctx, io, &format!("\x1b[{n}{c}"))
}

fn m_cursor_up(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args, 0)?;
    move_cursor(ctx, recv, n, 'A', 'B')
}

fn m_cursor_down(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args, 0)?;
    move_cursor(ctx, recv, n, 'B', 'A')
}

fn m_cursor_right(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args, 0)?;
    move_cursor(ctx, recv, n, 'C', 'D')
}

fn m_cursor_left(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args, 0)?;
    move_cursor(ctx, recv, n, 'D', 'C')
}

fn m_scroll_forward(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args, 0)?;
    move_cursor(ctx, recv, n, 'S', 'T')
}

fn m_scroll_backward(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args, 0)?;
    move_cursor(ctx, recv, n, 'T', 'S')
}

/// `erase_line(mode)` / `erase_screen(mode)`: 0 after the cursor, 1 before, 2 all.
fn erase(ctx: &mut Ctx, io: Value, args: &Args, c: char, max: i64) -> Result<Value> {
    let mode = int_arg(ctx, args, 0)?;
    if !(0..=max).contains(&mode) {
        return Err(ctx.arg_error(&format!("argument out of range: {mode}")));
    }
    write_seq(ctx, io, &format!("\x1b[{mode}{c}"))
}

fn m_erase_line(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    erase(ctx, recv, args, 'K', 2)
}

fn m_erase_screen(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    erase(ctx, recv, args, 'J', 3)
}

fn m_clear_screen(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    write_seq(ctx, recv, "\x1b[2J\x1b[1;1H")
}

/// `cursor`: [row, column] (0-based), asked of the terminal ("ESC [6n").
fn m_cursor(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let o = RawOpts { min: None, time: None, intr: false };
    let reply = with_mode(ctx, recv, |t| make_raw(t, &o), |ctx| {
        write_seq(ctx, recv, "\x1b[6n")?;
        ctx.call_str(recv, "flush", &[])?;
        let mut buf = Vec::new();
        loop {
            let c = ctx.call_str(recv, "getbyte", &[])?;
            if c.is_nil() {
                break;
            }
            let b = integer::to_int_arg(ctx, c)? as u8;
            buf.push(b);
            if b == b'R' || buf.len() > 32 {
                break;
            }
        }
        Ok(string::new_binary(ctx, &buf))
    })?;
    let text = string::to_rust_string_lossy(reply);
    let nums: Vec<i64> = text.trim_start_matches("\x1b[").trim_end_matches('R').split(';').filter_map(|n| n.parse().ok()).collect();
    if nums.len() != 2 {
        return Err(ctx.raise(ctx.c().runtime_error, "unexpected reply to the cursor position query"));
    }
    Ok(array::from_slice(ctx, &[Value::fixnum(nums[0] - 1), Value::fixnum(nums[1] - 1)]))
}

fn m_set_cursor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = array::to_ary_arg(ctx, args.pos[0])?;
    if array::len(a) != 2 {
        return Err(ctx.arg_error("expected 2D coordinate"));
    }
    let pos = [array::get(a, 0), array::get(a, 1)];
    m_goto(ctx, recv, &Args::new(&pos))
}

/// `IO.console(sym = nil, *args)`: the process's terminal (/dev/tty) opened read-write,
/// or nil; `:close` closes it; another symbol is sent to the console with `args`.
fn s_console(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = ctx.intern("__console__");
    let io_class = ctx.c().io;
    let mut con = object::ivar_get(ctx, io_class, id);
    if !con.is_nil() && ctx.call_str(con, "closed?", &[])?.truthy() {
        con = Value::NIL;
    }
    let sym = args.pos.first().copied();
    let close = ctx.intern("close");
    if let Some(s) = sym {
        if s.as_symbol() == Some(close) {
            if !con.is_nil() {
                ctx.call(con, close, &[])?;
                object::ivar_set_raw(ctx, io_class, id, Value::NIL);
            }
            return Ok(Value::NIL);
        }
    }
    if con.is_nil() {
        let file = ctx.c().file;
        let path = string::new_utf8(ctx, "/dev/tty");
        let mode = string::new_utf8(ctx, "r+");
        let mark = ctx.protect(path);
        ctx.protect(mode);
        let opened = ctx.call_str(file, "open", &[path, mode]);
        ctx.unprotect(mark);
        con = match opened {
            Ok(c) => c,
            Err(_) => return Ok(Value::NIL),
        };
        ctx.call_str(con, "sync=", &[Value::TRUE])?;
        object::ivar_set_raw(ctx, io_class, id, con);
    }
    let _ = recv;
    match sym {
        Some(s) => {
            let mid = crate::core::symbol::to_sym_id(ctx, s)?;
            ctx.call_kw(con, mid, &args.pos[1..], args.kw, args.block)
        }
        None => Ok(con),
    }
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let io = ctx.c().io;
    crate::methods!(ctx, io, [
        ("raw", m_raw, [0], Unsafe, Kw),
        ("raw!", m_raw_bang, [0], Unsafe, Kw),
        ("cooked", m_cooked, [0], Unsafe),
        ("cooked!", m_cooked_bang, [0], Unsafe),
        ("noecho", m_noecho, [0], Unsafe),
        ("echo=", m_set_echo, [1], Unsafe),
        ("echo?", m_echo_p, [0], Unsafe),
        ("getch", m_getch, [0], Unsafe, Kw),
        ("getpass", m_getpass, [0..=1], Unsafe),
        ("winsize", m_winsize, [0], Unsafe),
        ("winsize=", m_set_winsize, [1], Unsafe),
        ("iflush", m_iflush, [0], Unsafe),
        ("oflush", m_oflush, [0], Unsafe),
        ("ioflush", m_ioflush, [0], Unsafe),
        ("beep", m_beep, [0], Unsafe),
        ("goto", m_goto, [2], Unsafe),
        ("goto_column", m_goto_column, [1], Unsafe),
        ("cursor", m_cursor, [0], Unsafe),
        ("cursor=", m_set_cursor, [1], Unsafe),
        ("cursor_up", m_cursor_up, [1], Unsafe),
        ("cursor_down", m_cursor_down, [1], Unsafe),
        ("cursor_left", m_cursor_left, [1], Unsafe),
        ("cursor_right", m_cursor_right, [1], Unsafe),
        ("scroll_forward", m_scroll_forward, [1], Unsafe),
        ("scroll_backward", m_scroll_backward, [1], Unsafe),
        ("erase_line", m_erase_line, [1], Unsafe),
        ("erase_screen", m_erase_screen, [1], Unsafe),
        ("clear_screen", m_clear_screen, [0], Unsafe),
    ]);
    let meta = object::singleton_class(ctx, io)?;
    crate::methods!(ctx, meta, [
        ("console", s_console, [0..], Unsafe, Kw),
    ]);
    Ok(())
}
