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
    ReplaceLiteral,
    SwapMethod,
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
    Op::ReplaceLiteral,
    Op::ReplaceLiteral,
    Op::SwapMethod,
    Op::SwapMethod,
];

/// Values put in place of a literal (`Op::ReplaceLiteral`): other types, edge numbers,
/// odd strings and objects with hostile conversions, so builtins see arguments of every kind.
const VALUES: &[&[u8]] = &[
    b"nil", b"true", b"false", b"0", b"-1", b"1", b"2**64", b"-(2**64)", b"2**62", b"(2**62 - 1)", b"-(2**63)",
    b"0.0", b"-0.0", b"1.5", b"Float::NAN", b"Float::INFINITY", b"-Float::INFINITY", b"Float::MAX", b"Float::MIN",
    b"1r", b"(1/3r)", b"1i", b"Complex(1, 2)", b"\"\"", b"\"abc\"", b"\"\\xff\\xfe\"", b"\"\\u3042\"",
    b"\"a\".encode(\"UTF-16LE\")", b"\"a\".force_encoding(\"ASCII-8BIT\")", b"\"a\".b", b"\"a\" * 100_000",
    b"'%s %d %*s'", b":sym", b":\"\"", b"[]", b"[nil]", b"[1, [2, [3]]]", b"{}", b"{a: 1}", b"{1 => 2}",
    b"(1..)", b"(..1)", b"(1...1)", b"('a'..'z')", b"(1.0..2.0)", b"Object.new", b"BasicObject.new",
    b"Class.new", b"Module.new", b"Struct.new(:a).new(1)", b"method(:puts)", b"proc { |*a| a }", b"-> {}",
    b"$stdout", b"STDIN", b"__FILE__", b"Time.at(0)", b"/a(b)?/", b"//", b"Comparable", b"Kernel",
    b"Integer", b"String", b"Encoding::UTF_8", b"Encoding::BINARY", b"[].each", b"1.step(10, 3)",
    b"Fiber.new { Fiber.yield 1 }", b"Thread.current", b"ObjectSpace", b"(o = Object.new; def o.to_int = 2**70; o)",
    b"(o = Object.new; def o.to_str = nil; o)", b"(o = Object.new; def o.to_ary = [o]; o)",
    b"(o = Object.new; def o.to_s = raise('x'); o)", b"(o = Object.new; def o.coerce(x) = [x, x]; o)",
    b"(o = Object.new; def o.each = yield(o); o)", b"(o = Object.new; def o.<=>(x) = nil; o)",
    b"(o = Object.new; def o.hash = 2**80; o)", b"(o = Object.new; def o.method_missing(*) = self; o)",
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
        Op::ReplaceLiteral => {
            if len == 0 {
                return false;
            }
            // Prefer literals and plain names to keywords (a replaced `end` is only a
            // syntax error).
            const KEYWORDS: &[&[u8]] = &[
                b"def", b"end", b"do", b"if", b"else", b"elsif", b"unless", b"while", b"until", b"class", b"module",
                b"begin", b"rescue", b"ensure", b"then", b"case", b"when", b"in", b"return", b"yield", b"it",
                b"describe", b"should", b"should_not", b"require_relative", b"require", b"and", b"or", b"not",
            ];
            let mut found = None;
            for _ in 0..8 {
                let Some((a, b)) = token_at(src, rng.below(len)) else { continue };
                if !KEYWORDS.contains(&&src[a..b]) {
                    found = Some((a, b));
                    break;
                }
            }
            let Some((a, b)) = found else { return false };
            src.splice(a..b, rng.pick(VALUES).iter().copied());
        }
        Op::SwapMethod => {
            // Another method name of this file or of the donor, so the receiver gets a
            // message with the arguments meant for a different one.
            let here = method_names(src);
            if here.is_empty() {
                return false;
            }
            let (a, b) = *rng.pick(&here);
            let from_donor = method_names(donor);
            let name = if !from_donor.is_empty() && rng.chance(1, 2) {
                let (x, y) = *rng.pick(&from_donor);
                donor[x..y].to_vec()
            } else {
                let (x, y) = *rng.pick(&here);
                src[x..y].to_vec()
            };
            src.splice(a..b, name);
        }
    }
    true
}

/// Start of the literal or word at (or just after) `at`: a number, a quoted string, a
/// symbol or an identifier, as the byte range it spans.
fn token_at(src: &[u8], at: usize) -> Option<(usize, usize)> {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut a = at;
    while a < src.len() && !(is_word(src[a]) || src[a] == b'"' || src[a] == b'\'' || src[a] == b':') {
        a += 1;
    }
    let first = *src.get(a)?;
    let mut b = a + 1;
    if first == b'"' || first == b'\'' {
        while b < src.len() && src[b] != first && src[b] != b'\n' {
            b += if src[b] == b'\\' { 2 } else { 1 };
        }
        b = (b + 1).min(src.len());
    } else {
        while b < src.len() && (is_word(src[b]) || (first.is_ascii_digit() && (src[b] == b'.' && src.get(b + 1).is_some_and(u8::is_ascii_digit)))) {
            b += 1;
        }
    }
    Some((a, b))
}

/// The method names called in `src` (`.name`), as byte ranges.
fn method_names(src: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < src.len() {
        if src[i] == b'.' && (src[i + 1].is_ascii_lowercase() || src[i + 1] == b'_') {
            let a = i + 1;
            let mut b = a;
            while b < src.len() && (src[b].is_ascii_alphanumeric() || src[b] == b'_') {
                b += 1;
            }
            if b < src.len() && matches!(src[b], b'?' | b'!' | b'=') {
                b += 1;
            }
            out.push((a, b));
            i = b;
        } else {
            i += 1;
        }
    }
    out
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
    fn literal_and_method_swaps_change_the_source() {
        let src = b"x = [1, 2].pack('C*')\nputs \"a\".center(5, :b)\n";
        for op in [Op::ReplaceLiteral, Op::SwapMethod] {
            let mut changed = 0;
            for seed in 0..50 {
                let mut out = src.to_vec();
                if apply(&mut Rng::new(seed), op, &mut out, b"y.encode(1)\n") && out != src {
                    changed += 1;
                }
            }
            assert!(changed > 20, "{op:?} changed only {changed} of 50");
        }
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
