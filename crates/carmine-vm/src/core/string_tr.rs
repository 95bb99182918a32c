//! Character sets and translation for `String#tr`, `#delete`, `#squeeze`, `#count`.
//!
//! Sets are byte-based (`a-z` ranges, leading `^` negation, `\\` escapes); multibyte
//! characters in `tr` are handled by mapping whole UTF-8 characters.

use crate::core::encoding;

/// A 256-entry membership table for a set specification like `"a-z^"`.
pub fn build_set(spec: &[u8]) -> Vec<bool> {
    let (negate, spec) = if spec.len() > 1 && spec[0] == b'^' { (true, &spec[1..]) } else { (false, spec) };
    let mut t = vec![false; 256];
    for c in expand(spec) {
        if c < 256 {
            t[c as usize] = true;
        }
    }
    if negate {
        for x in t.iter_mut() {
            *x = !*x;
        }
    }
    t
}

/// Expands ranges and escapes into a list of code units (bytes, or UTF-8 codepoints).
fn expand(spec: &[u8]) -> Vec<u32> {
    let chars: Vec<u32> = match std::str::from_utf8(spec) {
        Ok(s) => s.chars().map(|c| c as u32).collect(),
        Err(_) => spec.iter().map(|&b| b as u32).collect(),
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let mut c = chars[i];
        if c == '\\' as u32 && i + 1 < chars.len() {
            i += 1;
            c = chars[i];
            out.push(c);
            i += 1;
            continue;
        }
        if i + 2 < chars.len() && chars[i + 1] == '-' as u32 {
            let end = chars[i + 2];
            if end >= c {
                for x in c..=end {
                    out.push(x);
                }
            }
            i += 3;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// `tr`/`tr_s`: translates characters of `src` from `from` to `to`.
pub fn translate(src: &[u8], enc: u8, from: &[u8], to: &[u8], squeeze: bool) -> Vec<u8> {
    let negate = from.len() > 1 && from[0] == b'^';
    let from_set = expand(if negate { &from[1..] } else { from });
    let to_set = expand(to);
    let utf8 = encoding::is_utf8(enc) && std::str::from_utf8(src).is_ok();
    let chars: Vec<u32> = if utf8 { std::str::from_utf8(src).unwrap_or("").chars().map(|c| c as u32).collect() } else { src.iter().map(|&b| b as u32).collect() };
    let mut out_chars: Vec<u32> = Vec::with_capacity(chars.len());
    let mut last_translated: Option<u32> = None;
    for c in chars {
        let mapped = if negate {
            if from_set.contains(&c) {
                None
            } else {
                to_set.last().copied().map(Some).unwrap_or(None)
            }
        } else {
            from_set.iter().rposition(|&f| f == c).map(|pos| {
                let first = from_set.iter().position(|&f| f == c).unwrap_or(pos);
                if to_set.is_empty() {
                    u32::MAX
                } else {
                    *to_set.get(first).unwrap_or(to_set.last().unwrap_or(&c))
                }
            })
        };
        match mapped {
            Some(u32::MAX) => {
                last_translated = None;
            }
            Some(m) => {
                if squeeze && last_translated == Some(m) {
                    continue;
                }
                out_chars.push(m);
                last_translated = Some(m);
            }
            None => {
                out_chars.push(c);
                last_translated = None;
            }
        }
    }
    if utf8 {
        out_chars.iter().filter_map(|&c| char::from_u32(c)).collect::<String>().into_bytes()
    } else {
        out_chars.iter().map(|&c| c as u8).collect()
    }
}
