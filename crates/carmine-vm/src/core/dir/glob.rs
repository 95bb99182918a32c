//! `Dir.glob` / `Dir[]`: expanding file-name patterns against the file system.
//!
//! Invariants:
//! - Braces are expanded first (always, as CRuby's glob does); each alternative and each
//!   pattern of an Array is expanded in the order given, results concatenated.
//! - A pattern is matched one path segment at a time with `File.fnmatch`'s segment rules;
//!   a segment without wildcards is looked up directly (no directory listing).
//! - `**/` matches zero or more directories, depth first, entries sorted, without
//!   entering symbolic links or (without FNM_DOTMATCH) hidden directories; ".." is never
//!   matched by a wildcard, and "." only outside a `**/` descent.

use crate::core::file::fnmatch::{brace_expand, fnmatch, FNM_DOTMATCH, FNM_NOESCAPE, FNM_PATHNAME};

pub struct Glob<'a> {
    flags: u32,
    /// Directory the relative results are taken from (`base:`), "" for the working one.
    base: &'a str,
    sort: bool,
    pub out: Vec<String>,
}

fn has_magic(seg: &str, flags: u32) -> bool {
    let escape = flags & FNM_NOESCAPE == 0;
    seg.chars().any(|c| matches!(c, '*' | '?' | '[') || (escape && c == '\\'))
}

fn unescape(seg: &str, flags: u32) -> String {
    if flags & FNM_NOESCAPE != 0 {
        return seg.to_string();
    }
    let mut out = String::new();
    let mut chars = seg.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
                continue;
            }
        }
        out.push(c);
    }
    out
}

impl<'a> Glob<'a> {
    pub fn new(flags: u32, base: &'a str, sort: bool) -> Glob<'a> {
        // FNM_CASEFOLD is ignored by glob, as in CRuby (the file system decides).
        Glob { flags: flags & !crate::core::file::fnmatch::FNM_CASEFOLD, base, sort, out: Vec::new() }
    }

    fn fs_path(&self, shown: &str) -> String {
        if shown.starts_with('/') || self.base.is_empty() {
            if shown.is_empty() { ".".into() } else { shown.to_string() }
        } else if shown.is_empty() {
            self.base.to_string()
        } else {
            format!("{}/{shown}", self.base.trim_end_matches('/'))
        }
    }

    fn lstat_dir(&self, shown: &str) -> (bool, bool, bool) {
        let p = self.fs_path(shown);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => (true, std::fs::metadata(&p).is_ok_and(|m| m.is_dir()), true),
            Ok(m) => (true, m.is_dir(), false),
            Err(_) => (false, false, false),
        }
    }

    fn list(&self, dir: &str, with_dot: bool) -> Vec<String> {
        let Ok(rd) = std::fs::read_dir(self.fs_path(dir)) else { return Vec::new() };
        let mut names: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        if with_dot {
            names.push(".".into());
        }
        if self.sort {
            names.sort();
        }
        names
    }

    /// Expands one pattern (braces included).
    pub fn pattern(&mut self, pat: &str) {
        let chars: Vec<char> = pat.chars().collect();
        let mut alts = Vec::new();
        brace_expand(&chars, self.flags & FNM_NOESCAPE == 0, &mut alts);
        for alt in alts {
            let alt: String = alt.into_iter().collect();
            self.one(&alt);
        }
    }

    fn one(&mut self, pat: &str) {
        if pat.is_empty() {
            return;
        }
        let (root, rest) = if let Some(r) = pat.strip_prefix('/') { ("/", r) } else { ("", pat) };
        let dir_only = rest.ends_with('/');
        let mut segs: Vec<String> = rest.split('/').filter(|s| !s.is_empty()).map(String::from).collect();
        // "**" not followed by "/" is a plain "*".
        if let Some(last) = segs.last_mut() {
            if last == "**" && !dir_only {
                *last = "*".into();
            }
        }
        for s in segs.iter_mut() {
            if s.contains("**") && s != "**" {
                *s = s.replace("**", "*");
            }
        }
        if segs.is_empty() {
            if root == "/" {
                self.out.push("/".into());
            }
            return;
        }
        self.walk(root, &segs, 0, dir_only, false);
    }

    fn join(prefix: &str, name: &str) -> String {
        if prefix.is_empty() {
            name.to_string()
        } else if prefix.ends_with('/') {
            format!("{prefix}{name}")
        } else {
            format!("{prefix}/{name}")
        }
    }

    fn emit(&mut self, path: String, is_dir: bool, dir_only: bool) {
        if dir_only {
            if is_dir {
                self.out.push(format!("{path}/"));
            }
        } else {
            self.out.push(path);
        }
    }

    /// Matches `segs[i..]` below `prefix`; `in_descent` while a `**/` is walking.
    fn walk(&mut self, prefix: &str, segs: &[String], i: usize, dir_only: bool, in_descent: bool) {
        let seg = &segs[i];
        if seg == "**" {
            if i + 1 == segs.len() {
                // "**/" at the end: every directory below, at any depth.
                self.descend(prefix, segs, i, dir_only, in_descent, true);
                return;
            }
            self.descend(prefix, segs, i, dir_only, in_descent, false);
            return;
        }
        if !has_magic(seg, self.flags) {
            let name = unescape(seg, self.flags);
            let path = Self::join(prefix, &name);
            let (exists, is_dir, _) = self.lstat_dir(&path);
            if !exists {
                return;
            }
            if i + 1 == segs.len() {
                self.emit(path, is_dir, dir_only);
            } else if is_dir {
                self.walk(&path, segs, i + 1, dir_only, false);
            }
            return;
        }
        for name in self.list(prefix, !in_descent) {
            self.step(prefix, &name, segs, i, dir_only);
        }
    }

    /// Tries entry `name` of `prefix` against `segs[i]`, emitting or going deeper.
    fn step(&mut self, prefix: &str, name: &str, segs: &[String], i: usize, dir_only: bool) {
        if name == ".." {
            return;
        }
        let seg = &segs[i];
        let ok = if has_magic(seg, self.flags) { fnmatch(seg, name, self.flags | FNM_PATHNAME) } else { unescape(seg, self.flags) == name };
        if !ok {
            return;
        }
        let path = Self::join(prefix, name);
        let (_, is_dir, _) = self.lstat_dir(&path);
        if i + 1 == segs.len() {
            self.emit(path, is_dir, dir_only);
        } else if is_dir && name != "." {
            self.walk(&path, segs, i + 1, dir_only, false);
        }
    }

    /// `**/` at `segs[i]`: for each entry, first the rest of the pattern, then the entry as
    /// one more directory (so results come depth first, as CRuby's do).
    fn descend(&mut self, prefix: &str, segs: &[String], i: usize, dir_only: bool, in_descent: bool, dirs_only_tail: bool) {
        let dotmatch = self.flags & FNM_DOTMATCH != 0;
        let next_literal = !dirs_only_tail && !has_magic(&segs[i + 1], self.flags);
        if next_literal {
            // The rest starts with a plain name: look it up here directly.
            self.walk(prefix, segs, i + 1, dir_only, in_descent);
        }
        for name in self.list(prefix, !in_descent && !dirs_only_tail) {
            if !dirs_only_tail && !next_literal {
                self.step(prefix, &name, segs, i + 1, dir_only);
            }
            if name == "." || name == ".." || (!dotmatch && name.starts_with('.')) {
                continue;
            }
            let path = Self::join(prefix, &name);
            let (_, is_dir, link) = self.lstat_dir(&path);
            if is_dir && !link {
                if dirs_only_tail {
                    self.out.push(format!("{path}/"));
                }
                self.descend(&path, segs, i, dir_only, true, dirs_only_tail);
            }
        }
    }
}
