//! Random mutations of Ruby source: byte- and line-level edits plus insertions of Ruby
//! tokens, so that the parser and compiler see almost-valid programs (the inputs that reach
//! their rarely exercised paths) rather than noise.
//!
//! A mutation is a pure function of the source, a donor text (another corpus file, for
//! splicing) and the RNG state: the same seed always gives the same mutated bytes.

use crate::rng::Rng;

/// Ruby tokens and fragments inserted at random positions: keywords that open or close
/// scopes, operators that change how a line parses, literal starts that swallow the rest of
/// the file, numbers at the edges of Fixnum/Bignum/Float, and bytes that are not UTF-8.
pub const TOKENS: &[&[u8]] = &[
    b"end", b" end ", b"end\n", b"do", b" do ", b" do |x| ", b"|", b"||", b"{", b"}", b"(", b")", b"[", b"]",
    b"def ", b"def m(", b"def self.", b"def m = ", b"*", b"**", b"&", b"&&", b"=>", b" in ", b"case ",
    b"case x\nin ", b"when ", b"then", b"<<~EOS\n", b"<<-EOS\n", b"<<EOS\n", b"<<'EOS'\n",
    b"EOS\n", b"%w[", b"%i[", b"%q(", b"%Q{", b"%r{", b"%s(", b"%(", b"\"#{",
    b"#{", b"}\"", b"\"", b"'", b"/", b"?", b"?a", b"?\\", b"::", b".", b"&.", b"..", b"...",
    b"->", b"-> { ", b"lambda { |a, b = 1, *c, d:, e: 2, **f, &g| ", b"proc { ", b".()", b".call",
    b"99999999999999999999999999999999999999999", b"9223372036854775807", b"-9223372036854775808",
    b"4611686018427387904", b"2**64", b"(2**62)", b"10**100", b"1e400", b"-0.0", b"0x", b"0b1", b"0o7",
    b"1r", b"2i", b"1.5ri", b"1_", b"0d", b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
    b"\0", b"\r", b"\t", b"\\", b"__END__\n", b"\n=begin\n", b"\n=end\n", b"yield", b"yield(", b"super",
    b"super(", b"retry", b"redo", b"next", b"break", b"return", b"self", b"nil", b"true", b"__method__",
    b"defined?(", b"alias ", b"alias $a $b", b"undef ", b"BEGIN {", b"END {", b"rescue", b"rescue => e",
    b" rescue ", b"ensure", b"else", b"elsif ", b"if ", b" if ", b"unless ", b"while ", b" while ",
    b"until ", b"for x in ", b"begin", b"begin\n", b"class ", b"class << self\n", b"module ", b"<<",
    b"<=>", b"===", b"=~", b"!~", b"@", b"@a", b"@@a", b"$", b"$a", b"$~", b"$1", b"$_", b"$!",
    b"/(?<n>a)/ =~ ", b"#", b"\n", b";", b",", b"=", b"+=", b"||=", b"&&=", b"<<=", b"!", b"not ",
    b" and ", b" or ", b"*a", b"**kw", b"&blk", b"a:", b"a: 1, ", b"...)", b"(...)", b"it", b"_1",
    b"_2", b"__FILE__", b"__LINE__", b"__dir__", b"__ENCODING__", b"binding", b"eval(", b"instance_eval",
    b"send(", b"public_send(:", b"method_missing", b"Fiber.new { ", b"Thread.new { ", b".freeze",
    b".dup", b".clone", b"Struct.new(", b"\"\\u{", b"\"\\u{10ffff 110000}\"", b"\"\\x", b"\"\\xff\"",
    b"\"\\M-\\C-x\"", b"\"\\c?\"", b"'\\", b"1.0/0", b"0/0", b"-2**63", b"[*1..3]", b"{**h}", b"[] * 3",
    b"\"a\" * ", b"Array.new(", b"Hash.new { |h, k| h[k] = ", b".each { |a| ", b".map(&:to_s)", b".inspect",
    b".to_s", b".to_sym", b".hash", b"<<~A\n  #{<<~B}\n  B\n  A\n", b"catch(:x) { throw :x }", b"loop { ",
    b"ObjectSpace", b"GC.start", b"GC.stress = true;", b"raise", b"raise ", b"$stderr", b"exit", b"exit!",
    b"abort", b"=begin", b"\x1a", b"\xef\xbb\xbf", b"# encoding: ascii-8bit\n", b"# frozen_string_literal: true\n",
    b"# encoding: utf-16le\n", b"p ", b"puts ", b"pp ", b"*[", b"**{", b"!@", b"-@", b"+@", b"[]=",
];

/// The ways a mutation can change the source (recorded, to help minimise a failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    DeleteBytes,
    DeleteLine,
    DuplicateLine,
    SwapLines,
    Truncate,
    InsertToken,
    InsertTokenAtLineStart,
    DuplicateBytes,
    ReplaceByte,
    HugeNumber,
    SpliceDonorLine,
    Nest,
    RepeatToken,
}

const OPS: &[Op] = &[
    Op::DeleteBytes,
    Op::DeleteLine,
    Op::DuplicateLine,
    Op::SwapLines,
    Op::Truncate,
    Op::InsertToken,
    Op::InsertToken,
    Op::InsertToken,
    Op::InsertTokenAtLineStart,
    Op::DuplicateBytes,
    Op::ReplaceByte,
    Op::HugeNumber,
    Op::SpliceDonorLine,
    Op::Nest,
    Op::RepeatToken,
];

/// Wrappers for `Op::Nest`: the opening and closing text put around a range of lines.
const NESTS: &[(&[u8], &[u8])] = &[
    (b"begin\n", b"\nend\n"),
    (b"begin\n", b"\nrescue => e\n  e\nensure\n  1\nend\n"),
    (b"[\n", b"\n]\n"),
    (b"(\n", b"\n)\n"),
    (b"-> {\n", b"\n}.call\n"),
    (b"1.times do\n", b"\nend\n"),
    (b"loop do\n", b"\nbreak\nend\n"),
    (b"if true\n", b"\nend\n"),
    (b"def fuzz_m(*a, **k, &b)\n", b"\nend\nfuzz_m(1, a: 2) { 3 }\n"),
    (b"class FuzzC\n", b"\nend\n"),
    (b"module FuzzM\n", b"\nend\n"),
    (b"while true\n", b"\nbreak\nend\n"),
    (b"catch(:fuzz) do\n", b"\nend\n"),
    (b"x = <<~EOS\n", b"\nEOS\n"),
    (b"eval(<<'EOS')\n", b"\nEOS\n"),
    (b"instance_eval do\n", b"\nend\n"),
    (b"Class.new do\n", b"\nend\n"),
    (b"[1, 2].each_with_index.map do |a, i|\n", b"\nend\n"),
    (b"case 1\nwhen Integer\n", b"\nend\n"),
    (b"=begin\n", b"\n=end\n"),
];

/// Line start offsets of `src` (always includes 0) plus the end.
fn line_bounds(src: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    for (i, &b) in src.iter().enumerate() {
        if b == b'\n' {
            v.push(i + 1);
        }
    }
    if *v.last().unwrap_or(&0) != src.len() {
        v.push(src.len());
    }
    v
}

/// A random whole line of `src` as a byte range (without its newline), if any.
fn random_line(rng: &mut Rng, src: &[u8]) -> Option<(usize, usize)> {
    let b = line_bounds(src);
    if b.len() < 2 {
        return None;
    }
    let i = rng.below(b.len() - 1);
    Some((b[i], b[i + 1]))
}

/// Applies one operator in place; returns false when it could not apply (empty input).
pub fn apply(rng: &mut Rng, op: Op, src: &mut Vec<u8>, donor: &[u8]) -> bool {
    let len = src.len();
    match op {
        Op::DeleteBytes => {
            if len == 0 {
                return false;
            }
            let at = rng.below(len);
            let n = rng.range(1, 16).min(len - at);
            src.drain(at..at + n);
        }
        Op::DeleteLine => {
            let Some((a, b)) = random_line(rng, src) else { return false };
            src.drain(a..b);
        }
        Op::DuplicateLine => {
            let Some((a, b)) = random_line(rng, src) else { return false };
            let line = src[a..b].to_vec();
            let bounds = line_bounds(src);
            let at = *rng.pick(&bounds);
            let mut ins = line;
            if ins.last() != Some(&b'\n') {
                ins.push(b'\n');
            }
            src.splice(at..at, ins);
        }
        Op::SwapLines => {
            let Some((a1, b1)) = random_line(rng, src) else { return false };
            let Some((a2, b2)) = random_line(rng, src) else { return false };
            if a1 == a2 {
                return false;
            }
            let ((a1, b1), (a2, b2)) = if a1 < a2 { ((a1, b1), (a2, b2)) } else { ((a2, b2), (a1, b1)) };
            let first = src[a1..b1].to_vec();
            let second = src[a2..b2].to_vec();
            let mut out = Vec::with_capacity(src.len());
            out.extend_from_slice(&src[..a1]);
            out.extend_from_slice(&second);
            out.extend_from_slice(&src[b1..a2]);
            out.extend_from_slice(&first);
            out.extend_from_slice(&src[b2..]);
            *src = out;
        }
        Op::Truncate => {
            if len == 0 {
                return false;
            }
            let at = rng.below(len);
            src.truncate(at);
        }
        Op::InsertToken => {
            let at = if len == 0 { 0 } else { rng.below(len + 1) };
            let t = rng.pick(TOKENS);
            src.splice(at..at, t.iter().copied());
        }
        Op::InsertTokenAtLineStart => {
            let bounds = line_bounds(src);
            let at = *rng.pick(&bounds);
            let mut t = rng.pick(TOKENS).to_vec();
            if rng.chance(1, 2) {
                t.push(b' ');
            }
            src.splice(at..at, t);
        }
        Op::DuplicateBytes => {
            if len == 0 {
                return false;
            }
            let a = rng.below(len);
            let n = rng.range(1, 64).min(len - a);
            let chunk = src[a..a + n].to_vec();
            let at = rng.below(len + 1);
            src.splice(at..at, chunk);
        }
        Op::ReplaceByte => {
            if len == 0 {
                return false;
            }
            let at = rng.below(len);
            src[at] = match rng.below(4) {
                0 => src[at] ^ (1 << rng.below(8)),
                1 => *rng.pick(b"(){}[]|&*,.;:\"'#\n \\$@%?=<>!~^-+/"),
                2 => *rng.pick(&[0x00u8, 0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xf8, 0xfe, 0xff]),
                _ => rng.next_u64() as u8,
            };
        }
        Op::HugeNumber => {
            // Replace a run of digits with a number at a boundary (or append one).
            let digits: Vec<usize> = src.iter().enumerate().filter(|(_, b)| b.is_ascii_digit()).map(|(i, _)| i).collect();
            let huge: &[&[u8]] = &[
                b"4611686018427387903", b"4611686018427387904", b"9223372036854775807", b"18446744073709551616",
                b"99999999999999999999999999999999999999999999999999", b"2147483648", b"4294967296", b"0", b"-1",
                b"1073741824", b"(2**100)", b"(2**62)", b"(10**20)", b"1.0e308", b"1e-400", b"0x7fffffffffffffff",
            ];
            let num = rng.pick(huge);
            if digits.is_empty() {
                src.extend_from_slice(num);
                return true;
            }
            let mut a = *rng.pick(&digits);
            while a > 0 && src[a - 1].is_ascii_digit() {
                a -= 1;
            }
            let mut b = a;
            while b < src.len() && src[b].is_ascii_digit() {
                b += 1;
            }
            src.splice(a..b, num.iter().copied());
        }
        Op::SpliceDonorLine => {
            let Some((a, b)) = random_line(rng, donor) else { return false };
            let mut line = donor[a..b].to_vec();
            if line.last() != Some(&b'\n') {
                line.push(b'\n');
            }
            let bounds = line_bounds(src);
            let at = *rng.pick(&bounds);
            src.splice(at..at, line);
        }
        Op::Nest => {
            let bounds = line_bounds(src);
            let i = rng.below(bounds.len());
            let j = (i + rng.range(1, 8)).min(bounds.len() - 1);
            let (a, b) = (bounds[i], bounds[j]);
            let (open, close) = *rng.pick(NESTS);
            src.splice(b..b, close.iter().copied());
            src.splice(a..a, open.iter().copied());
        }
        Op::RepeatToken => {
            // Deep nesting or long runs: the inputs that overflow recursive Rust code.
            const REPEATED: &[&[u8]] = &[b"(", b"[", b"{", b"-> { ", b"begin ", b"!", b"-", b"+", b"a.", b"[[", b"\"#{", b"if a then ", b"def m\n", b"*", b"::A", b"(1 + ", b"p ", b"x = ", b"1, "];
            let t: &[u8] = *rng.pick(REPEATED);
            let n = match rng.below(4) {
                0 => rng.range(2, 50),
                1 => rng.range(50, 1000),
                2 => rng.range(1000, 20000),
                _ => rng.range(20000, 120000),
            };
            let at = if len == 0 { 0 } else { rng.below(len + 1) };
            let mut ins = Vec::with_capacity(t.len() * n);
            for _ in 0..n {
                ins.extend_from_slice(t);
            }
            src.splice(at..at, ins);
        }
    }
    true
}

/// One mutation: 1 to 4 operators applied in turn. Returns the new source and the
/// operators used.
pub fn mutate(rng: &mut Rng, src: &[u8], donor: &[u8]) -> (Vec<u8>, Vec<Op>) {
    let mut out = src.to_vec();
    let mut ops = Vec::new();
    let n = match rng.below(10) {
        0..=4 => 1,
        5..=7 => 2,
        8 => 3,
        _ => 4,
    };
    for _ in 0..n {
        let op = *rng.pick(OPS);
        if apply(rng, op, &mut out, donor) {
            ops.push(op);
        }
    }
    (out, ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_and_change_the_source() {
        let src = b"def foo(a, b = 2)\n  [a, b].map { |x| x * 2 }\nend\nputs foo(1)\n";
        let mut changed = 0;
        for seed in 0..200 {
            let (a, oa) = mutate(&mut Rng::new(seed), src, b"x = 1\n");
            let (b, ob) = mutate(&mut Rng::new(seed), src, b"x = 1\n");
            assert_eq!(a, b);
            assert_eq!(oa, ob);
            if a != src {
                changed += 1;
            }
        }
        assert!(changed > 150, "only {changed} of 200 mutations changed the source");
    }

    #[test]
    fn every_operator_handles_empty_input() {
        let mut rng = Rng::new(7);
        for &op in OPS {
            let mut v = Vec::new();
            apply(&mut rng, op, &mut v, b"");
            let mut one = b"x".to_vec();
            apply(&mut rng, op, &mut one, b"");
        }
    }
}
