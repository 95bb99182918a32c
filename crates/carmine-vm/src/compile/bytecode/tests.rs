//! Round trips, the header's rejections, and the verifier on code broken on purpose.

use super::*;
use crate::compile::iseq::{iseq_of, Insn, RIseq};
use crate::compile::{compile_program, CompileOptions};
use crate::runtime::Runtime;

fn compiled(rt: &mut Runtime, src: &str) -> (Value, Option<usize>) {
    let opts = CompileOptions::main("t.rb");
    compile_program(rt.ctx(), src.as_bytes(), &opts).unwrap_or_else(|_| panic!("compiles: {src}"))
}

fn dumped(rt: &mut Runtime, src: &str) -> Vec<u8> {
    let (iseq, data) = compiled(rt, src);
    let data = data.map(|at| src.as_bytes()[at..].to_vec());
    dump(rt.ctx(), iseq, data.as_deref()).expect("dumps")
}

fn load_error(rt: &mut Runtime, bytes: &[u8]) -> String {
    match load(rt.ctx(), bytes) {
        Ok(_) => panic!("loaded invalid bytecode"),
        Err(Unwind::Raise(e)) => {
            let load_error = rt.ctx().c().load_error;
            assert!(crate::core::object::is_a(rt.ctx(), e, load_error), "a LoadError");
            crate::core::exception::message_string(rt.ctx(), e)
        }
        Err(_) => panic!("not an exception"),
    }
}

/// Rewrites header fields after a payload change (what a hostile writer would do).
fn reseal(bytes: &mut [u8]) {
    let sum = checksum(&bytes[HEADER_LEN..]);
    let len = (bytes.len() - HEADER_LEN) as u64;
    bytes[24..32].copy_from_slice(&len.to_le_bytes());
    bytes[32..40].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn round_trip_runs_like_the_source() {
    let mut rt = Runtime::new();
    let src = "def f(a, b = 2, *r, k: 3, **o, &blk) = [a, b, r, k, o]\n$r = [f(1), 2**80, 1.5, 3r, :s, \"x\", /a+/m, (1..4), __LINE__]\n[1, 2].each { |i| $r << i }\nbegin; raise 'e'; rescue => e; $r << e.message; ensure; $r << :ens; end\n$r\n";
    let bytes = dumped(&mut rt, src);
    assert!(is_bytecode(&bytes));
    let loaded = load(rt.ctx(), &bytes).unwrap_or_else(|_| panic!("loads"));
    assert_eq!(loaded.path, "t.rb");
    assert_eq!(loaded.data_offset, None);
    let keep = rt.ctx().protect(loaded.iseq);
    let v = rt.run_loaded(&loaded).unwrap_or_else(|_| panic!("runs"));
    rt.ctx().unprotect(keep);
    assert_eq!(rt.inspect(v), "[[1, 2, [], 3, {}], 1208925819614629174706176, 1.5, (3/1), :s, \"x\", /a+/m, 1..4, 2, 1, 2, \"e\", :ens]");
    // Loading twice gives two programs; the second run sees what the first defined.
    let again = load(rt.ctx(), &bytes).unwrap_or_else(|_| panic!("loads again"));
    let v = rt.run_loaded(&again).unwrap_or_else(|_| panic!("runs again"));
    assert!(rt.inspect(v).ends_with(":ens]"));
}

#[test]
fn data_section_and_header() {
    let mut rt = Runtime::new();
    let bytes = dumped(&mut rt, "p 1\n__END__\nhello\n");
    let loaded = load(rt.ctx(), &bytes).unwrap_or_else(|_| panic!("loads"));
    let at = loaded.data_offset.expect("a data section");
    assert_eq!(&bytes[at..], b"hello\n");
    assert_eq!(&bytes[..8], MAGIC);
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), VERSION);
}

#[test]
fn header_rejections_are_load_errors() {
    let mut rt = Runtime::new();
    let good = dumped(&mut rt, "x = [1, 2]\nx.map { |y| y + 1 }\n");
    assert!(load_error(&mut rt, b"puts 1\n").contains("bad magic"));
    assert!(load_error(&mut rt, &good[..20]).contains("truncated header"));
    let mut v = good.clone();
    v[8] = 99;
    assert!(load_error(&mut rt, &v).contains("format version 99"));
    let mut v = good.clone();
    v[12] ^= 1;
    assert!(load_error(&mut rt, &v).contains("another instruction set"));
    assert!(load_error(&mut rt, &good[..good.len() - 1]).contains("truncated payload"));
    let mut v = good.clone();
    let last = v.len() - 1;
    v[last] ^= 0x40;
    assert!(load_error(&mut rt, &v).contains("checksum mismatch"));
    let mut v = good.clone();
    v.push(0);
    assert!(load_error(&mut rt, &v).contains("bytes after the payload"));
    // A resealed truncation reaches the decoder, which finds the end.
    let mut v = good[..good.len() - 3].to_vec();
    reseal(&mut v);
    assert!(load_error(&mut rt, &v).starts_with("invalid bytecode: "));
}

/// Dumps `src` after `edit` changed its top-level code, and loads it.
fn broken(src: &str, edit: impl Fn(&mut Vec<Insn>)) -> String {
    let mut rt = Runtime::new();
    let (iseq, _) = compiled(&mut rt, src);
    // SAFETY: a fresh iseq that no frame runs; only this test refers to it.
    unsafe {
        let is = &mut (*iseq.as_ptr::<RIseq>()).iseq;
        edit(&mut is.code);
        is.lines.resize(is.code.len(), 1);
    }
    let keep = rt.ctx().protect(iseq);
    let bytes = dump(rt.ctx(), iseq, None).unwrap_or_else(|_| panic!("dumps"));
    rt.ctx().unprotect(keep);
    load_error(&mut rt, &bytes)
}

#[test]
fn verifier_rejects_what_the_loop_would_trust() {
    let src = "a = 1\nb = [a, 2]\nwhile a < 3\n  a += 1\nend\nb\n";
    let n = |f: fn(&Insn) -> bool| move |code: &mut Vec<Insn>| code.iter().position(f).expect("instruction present");
    let msg = broken(src, |c| {
        let i = n(|i| matches!(i, Insn::SetLocal(_)))(c);
        c[i] = Insn::SetLocal(999);
    });
    assert!(msg.contains("local 999 out of range"), "{msg}");
    let msg = broken(src, |c| {
        let i = n(|i| matches!(i, Insn::Pop | Insn::SetLocal(_)))(c);
        c.insert(i, Insn::Pop);
        c.insert(i, Insn::Pop);
    });
    assert!(msg.contains("underflow") || msg.contains("stack depth"), "{msg}");
    let msg = broken(src, |c| {
        let len = c.len() as u32;
        c.insert(0, Insn::Jump(len + 5));
    });
    assert!(msg.contains("jump target"), "{msg}");
    let msg = broken(src, |c| {
        c.pop();
    });
    assert!(msg.contains("runs off the end"), "{msg}");
    let msg = broken(src, |c| c.insert(0, Insn::PutLit(77)));
    assert!(msg.contains("literal 77 out of range"), "{msg}");
    let msg = broken(src, |c| c.insert(0, Insn::GetLocalUp(0, 1)));
    assert!(msg.contains("outer local"), "{msg}");
    let msg = broken(src, |c| c.insert(0, Insn::DefineMethod(crate::symbol::SymId(0), 0)));
    assert!(msg.contains("child 0"), "{msg}");
    let msg = broken(src, |c| c.insert(0, Insn::Send(500)));
    assert!(msg.contains("call 500 out of range"), "{msg}");
}

#[test]
fn verifier_accepts_what_the_compiler_makes() {
    let mut rt = Runtime::new();
    let src = "class A; def m(*a, **k, &b) = yield(a, k); end\nA.new.m(1, z: 2) { |x, y| [x, y] }\ncase [1, {k: 2}]\nin [Integer => i, {k:}] then i + k\nend\nx = 0\nfor i in 1..3 do x += i end\n/(?<w>o+)/ =~ 'foo'\nbegin; 1/0; rescue ZeroDivisionError; retry if (x += 1) < 9; ensure; x; end\nx\n";
    let bytes = dumped(&mut rt, src);
    let loaded = load(rt.ctx(), &bytes).unwrap_or_else(|_| panic!("loads"));
    assert!(iseq_of(loaded.iseq).stack_max >= 4);
    let v = rt.run_loaded(&loaded).unwrap_or_else(|_| panic!("runs"));
    assert_eq!(rt.inspect(v), "9");
}

/// Loads `src` after `edit` changed its top-level code (the verifier accepts it) and runs it.
fn run_edited(src: &str, edit: impl Fn(&mut Vec<Insn>)) -> String {
    let mut rt = Runtime::new();
    let (iseq, _) = compiled(&mut rt, src);
    // SAFETY: a fresh iseq that no frame runs; only this test refers to it.
    unsafe {
        let is = &mut (*iseq.as_ptr::<RIseq>()).iseq;
        edit(&mut is.code);
        is.lines.resize(is.code.len(), 1);
    }
    let keep = rt.ctx().protect(iseq);
    let bytes = dump(rt.ctx(), iseq, None).unwrap_or_else(|_| panic!("dumps"));
    rt.ctx().unprotect(keep);
    let loaded = match load(rt.ctx(), &bytes) {
        Ok(l) => l,
        Err(_) => return load_error(&mut rt, &bytes),
    };
    let keep = rt.ctx().protect(loaded.iseq);
    let r = rt.run_loaded(&loaded);
    let out = match r {
        Ok(v) => rt.inspect(v),
        Err(Unwind::Raise(e)) => {
            let shown = rt.inspect(e);
            // What `carmine` does with an uncaught one.
            let status = rt.report(Unwind::Raise(e)).status();
            format!("raised {shown}, status {status}")
        }
        Err(_) => "unwind".to_string(),
    };
    rt.ctx().unprotect(keep);
    out
}

#[test]
fn untyped_values_where_exceptions_are_expected_do_not_crash() {
    // `Reraise` of a local that holds no exception, and `$!` set to an Integer.
    let out = run_edited("a = 5\nb = 1\na\n", |c| {
        let leave = c.len() - 1;
        c.insert(leave, Insn::Reraise(0));
    });
    assert_eq!(out, "raised 5, status 1");
    let out = run_edited("a = 5\n[$!, (raise rescue $!), $!]\n", |c| {
        c[0] = Insn::PutInt(7);
        c[1] = Insn::SetErrinfo;
    });
    assert_eq!(out, "raised 7, status 1");
}

#[test]
fn a_loaded_program_runs_many_times_without_leaving_locals_behind() {
    let mut rt = Runtime::new();
    let bytes = dumped(&mut rt, "x = ($runs = ($runs || 0) + 1)\ny = [x] * 2\ny.sum\n");
    let loaded = load(rt.ctx(), &bytes).unwrap_or_else(|_| panic!("loads"));
    let keep = rt.ctx().protect(loaded.iseq);
    let before = rt.eval("TOPLEVEL_BINDING.local_variables.size").unwrap_or_else(|_| panic!("eval"));
    for i in 1..=200 {
        let v = rt.run_loaded(&loaded).unwrap_or_else(|_| panic!("runs"));
        assert_eq!(v.as_fixnum(), Some(2 * i));
    }
    let after = rt.eval("TOPLEVEL_BINDING.local_variables.size").unwrap_or_else(|_| panic!("eval"));
    assert_eq!(before, after);
    rt.ctx().unprotect(keep);
}
