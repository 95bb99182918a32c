//! `File.fnmatch`: shell-style wildcard matching with CRuby's flags, shared with `Dir.glob`.
//!
//! Invariants:
//! - Matching works on characters (a `?` matches one character, not one byte).
//! - Without `FNM_PATHNAME`, `*`, `?` and brackets also match '/', and the leading-period
//!   rule applies only at the start of the string; with it, the pattern and the string are
//!   matched segment by segment, the rule applies to every segment, and `**/` matches any
//!   number of whole directories (not hidden ones unless `FNM_DOTMATCH`).
//! - `FNM_EXTGLOB` expands `{a,b}` alternatives (nested, with escapes) before matching.

use crate::core::string;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const FNM_NOESCAPE: u32 = 1;
pub const FNM_PATHNAME: u32 = 2;
pub const FNM_DOTMATCH: u32 = 4;
pub const FNM_CASEFOLD: u32 = 8;
pub const FNM_EXTGLOB: u32 = 16;

/// Expands the first top-level `{…}` of `pat` into its alternatives, recursively; a pattern
/// without a balanced brace is returned as it is.
pub fn brace_expand(pat: &[char], escape: bool, out: &mut Vec<Vec<char>>) {
    let mut open = None;
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut i = 0;
    while i < pat.len() {
        match pat[i] {
            '\\' if escape => i += 1,
            '{' => {
                if depth == 0 {
                    open = Some(i);
                }
                depth += 1;
            }
            ',' if depth == 1 => commas.push(i),
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let start = open.unwrap_or(0);
                    let mut cuts = vec![start];
                    cuts.extend(&commas);
                    cuts.push(i);
                    for w in cuts.windows(2) {
                        let mut alt = pat[..start].to_vec();
                        alt.extend_from_slice(&pat[w[0] + 1..w[1]]);
                        alt.extend_from_slice(&pat[i + 1..]);
                        brace_expand(&alt, escape, out);
                    }
                    return;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out.push(pat.to_vec());
}

fn fold(c: char, casefold: bool) -> char {
    if casefold {
        c.to_lowercase().next().unwrap_or(c)
    } else {
        c
    }
}

/// Matches a bracket expression starting after '[' at `p[i]` against `c`; the index after
/// ']' and whether it matched, or None when the bracket is not closed.
fn bracket(p: &[char], mut i: usize, c: char, flags: u32) -> Option<(usize, bool)> {
    let escape = flags & FNM_NOESCAPE == 0;
    let casefold = flags & FNM_CASEFOLD != 0;
    let negate = matches!(p.get(i), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let c = fold(c, casefold);
    let mut ok = false;
    let mut first = true;
    loop {
        let mut lo = *p.get(i)?;
        if lo == ']' && !first {
            return Some((i + 1, ok != negate));
        }
        first = false;
        if lo == '\\' && escape {
            i += 1;
            lo = *p.get(i)?;
        }
        i += 1;
        let mut hi = lo;
        if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|&h| h != ']') {
            hi = p[i + 1];
            i += 2;
            if hi == '\\' && escape {
                hi = *p.get(i)?;
                i += 1;
            }
        }
        let (lo, hi) = (fold(lo, casefold), fold(hi, casefold));
        if lo <= c && c <= hi {
            ok = true;
        }
    }
}

/// Matches the pattern `p` against the string `s`, both up to '/' when `pathname` (one
/// segment each) or to their ends; true when both are consumed together.
fn match_segment(p: &[char], s: &[char], flags: u32) -> bool {
    let escape = flags & FNM_NOESCAPE == 0;
    let pathname = flags & FNM_PATHNAME != 0;
    let casefold = flags & FNM_CASEFOLD != 0;
    let p_end = if pathname { p.iter().position(|&c| c == '/').unwrap_or(p.len()) } else { p.len() };
    let s_end = if pathname { s.iter().position(|&c| c == '/').unwrap_or(s.len()) } else { s.len() };
    let (p, s) = (&p[..p_end], &s[..s_end]);
    if flags & FNM_DOTMATCH == 0 && s.first() == Some(&'.') {
        let first = if escape && p.first() == Some(&'\\') { p.get(1) } else { p.first() };
        if first != Some(&'.') {
            return false;
        }
    }
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    while pi < p.len() && p[pi] == '*' {
                        pi += 1;
                    }
                    star = Some((pi, si));
                    continue;
                }
                '?' if si < s.len() => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                '[' if si < s.len() => match bracket(p, pi + 1, s[si], flags) {
                    Some((next, true)) => {
                        pi = next;
                        si += 1;
                        continue;
                    }
                    Some((_, false)) => {}
                    None => return false,
                },
                pc if si < s.len() => {
                    let (pc, adv) = if pc == '\\' && escape && pi + 1 < p.len() { (p[pi + 1], 2) } else { (pc, 1) };
                    if fold(pc, casefold) == fold(s[si], casefold) {
                        pi += adv;
                        si += 1;
                        continue;
                    }
                }
                _ => {}
            }
        } else if si == s.len() {
            return true;
        }
        // Mismatch: let the last star take one more character.
        match star {
            Some((sp, ss)) if ss < s.len() => {
                star = Some((sp, ss + 1));
                pi = sp;
                si = ss + 1;
            }
            _ => return false,
        }
    }
}

fn is_globstar(p: &[char]) -> bool {
    p.len() >= 3 && p[0] == '*' && p[1] == '*' && p[2] == '/'
}

/// FNM_PATHNAME matching, segment by segment, with `**/` crossing directories.
fn match_path(mut p: &[char], mut s: &[char], flags: u32) -> bool {
    let period = flags & FNM_DOTMATCH == 0;
    let mut retry: Option<(&[char], &[char])> = None;
    loop {
        if is_globstar(p) {
            while is_globstar(p) {
                p = &p[3..];
            }
            retry = Some((p, s));
        }
        if match_segment(p, s, flags) {
            let pn = p.iter().position(|&c| c == '/');
            let sn = s.iter().position(|&c| c == '/');
            match (pn, sn) {
                (None, None) => return true,
                (Some(a), Some(b)) => {
                    p = &p[a + 1..];
                    s = &s[b + 1..];
                    continue;
                }
                _ => {}
            }
        }
        // `**/` takes one more directory of the string, if it is not hidden.
        match retry {
            Some((rp, rs)) if !(period && rs.first() == Some(&'.')) => match rs.iter().position(|&c| c == '/') {
                Some(n) => {
                    retry = Some((rp, &rs[n + 1..]));
                    p = rp;
                    s = &rs[n + 1..];
                }
                None => return false,
            },
            _ => return false,
        }
    }
}

/// Whether `pattern` matches `path` under `flags`.
pub fn fnmatch(pattern: &str, path: &str, flags: u32) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = path.chars().collect();
    let one = |p: &[char]| if flags & FNM_PATHNAME != 0 { match_path(p, &s, flags) } else { match_segment(p, &s, flags) };
    if flags & FNM_EXTGLOB != 0 {
        let mut alts = Vec::new();
        brace_expand(&p, flags & FNM_NOESCAPE == 0, &mut alts);
        return alts.iter().any(|a| one(a));
    }
    one(&p)
}

/// `File.fnmatch(pattern, path, flags = 0)` / `fnmatch?`.
fn f_fnmatch(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let pat = string::to_str_arg(ctx, args.pos[0])?;
    let pat = string::to_rust_string_lossy(pat);
    let path = super::stat::cpath_arg(ctx, args.pos[1])?;
    let flags = match args.pos.get(2) {
        Some(&f) => crate::core::integer::to_int_arg(ctx, f)? as u32,
        None => 0,
    };
    Ok(Value::bool(fnmatch(&pat, &String::from_utf8_lossy(path.as_bytes()), flags)))
}

pub fn init(ctx: &mut Ctx) {
    let f = ctx.c().file;
    crate::methods!(ctx, f, [
        ("fnmatch", f_fnmatch, [2..=3], Safe, Singleton),
        ("fnmatch?", f_fnmatch, [2..=3], Safe, Singleton),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_and_brackets() {
        assert!(fnmatch("c*t", "c/a/b/t", 0));
        assert!(!fnmatch("c*t", "c/a/b/t", FNM_PATHNAME));
        assert!(fnmatch("ca[a-z]", "cat", 0));
        assert!(!fnmatch("ca[^t]", "cat", 0));
        assert!(!fnmatch("abc[de", "abc[de", 0));
        assert!(fnmatch("[\\?]", "?", 0));
        assert!(fnmatch("[a-z]", "D", FNM_CASEFOLD));
    }

    #[test]
    fn periods_and_globstar() {
        assert!(!fnmatch("*", ".profile", 0));
        assert!(fnmatch("*", "home/.profile", 0));
        assert!(!fnmatch("*/*", "dave/.profile", FNM_PATHNAME));
        assert!(fnmatch("**/*.rb", "one/two/main.rb", FNM_PATHNAME));
        assert!(fnmatch("**/*.rb", "main.rb", FNM_PATHNAME));
        assert!(!fnmatch("**/foo", "a/.b/c/foo", FNM_PATHNAME));
        assert!(fnmatch("**/foo", "a/.b/c/foo", FNM_PATHNAME | FNM_DOTMATCH));
    }

    #[test]
    fn braces() {
        assert!(fnmatch("{1,5{a,b{c,d}}}", "5bd", FNM_EXTGLOB));
        assert!(!fnmatch("c{at,ub}}s", "cats", FNM_EXTGLOB));
        assert!(fnmatch("\\\\{a\\,b,b\\}c}", "\\a,b", FNM_EXTGLOB));
        assert!(!fnmatch("c{at,ub}s", "cats", 0));
    }
}
