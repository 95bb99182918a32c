//! The heap's sizing parameters, and CRuby's environment variables that override them.
//!
//! Invariants:
//! - Read once, when a heap is made (`Tuning::from_env`); a running heap's parameters
//!   change only through `Heap::set_malloc_limit_min`.
//! - `min_free < goal_free < max_free < 100` (percent of the heap's bytes) and
//!   `max_growth > 0` (percent): a value from the environment that would break this is
//!   ignored, as CRuby ignores out-of-range ratios.

/// Free-slot shares after a collection (percent of the heap's bytes): below `min_free` the
/// heap grows to `goal_free`; above `max_free` empty pages are released down to the goal.
/// The most the heap grows at once is `max_growth` percent of its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    pub min_free: usize,
    pub goal_free: usize,
    pub max_free: usize,
    pub max_growth: usize,
    /// Old objects allowed after a major collection, in percent of the ones it left.
    pub old_limit_factor: usize,
    /// The floor of the malloc limit (bytes of buffers allocated between collections).
    pub malloc_limit_min: usize,
}

/// CRuby's 20/40 took the least memory but made binary_trees run 2.8% more instructions
/// when every collection marked the whole heap; 30/50 was within 1.4% of the old policy's
/// instructions everywhere measured (docs/benchmarks.md, issue 13).
pub const DEFAULT: Tuning = Tuning { min_free: 30, goal_free: 50, max_free: 65, max_growth: 80, old_limit_factor: 200, malloc_limit_min: 16 * 1024 * 1024 };

impl Default for Tuning {
    fn default() -> Self {
        DEFAULT
    }
}

impl Tuning {
    /// The defaults, overridden by CRuby's variables where they are set and valid:
    /// `RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO`, `_GOAL_RATIO`, `_MAX_RATIO` (0.0-1.0),
    /// `RUBY_GC_HEAP_GROWTH_FACTOR` (above 1.0), `RUBY_GC_HEAP_OLDOBJECT_LIMIT_FACTOR`
    /// (at least 1.0) and `RUBY_GC_MALLOC_LIMIT` (bytes).
    pub fn from_env() -> Tuning {
        Tuning::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(get: impl Fn(&str) -> Option<String>) -> Tuning {
        let ratio = |name: &str| get(name).and_then(|s| s.trim().parse::<f64>().ok()).filter(|r| (0.0..1.0).contains(r)).map(|r| (r * 100.0).round() as usize);
        let mut t = DEFAULT;
        let candidate = Tuning {
            min_free: ratio("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO").unwrap_or(t.min_free),
            goal_free: ratio("RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO").unwrap_or(t.goal_free),
            max_free: ratio("RUBY_GC_HEAP_FREE_SLOTS_MAX_RATIO").unwrap_or(t.max_free),
            ..t
        };
        if candidate.min_free < candidate.goal_free && candidate.goal_free < candidate.max_free {
            t = candidate;
        }
        if let Some(f) = get("RUBY_GC_HEAP_GROWTH_FACTOR").and_then(|s| s.trim().parse::<f64>().ok()).filter(|f| *f > 1.0 && *f <= 100.0) {
            t.max_growth = ((f - 1.0) * 100.0).round().max(1.0) as usize;
        }
        if let Some(f) = get("RUBY_GC_HEAP_OLDOBJECT_LIMIT_FACTOR").and_then(|s| s.trim().parse::<f64>().ok()).filter(|f| *f >= 1.0 && *f <= 100.0) {
            t.old_limit_factor = (f * 100.0).round() as usize;
        }
        if let Some(n) = get("RUBY_GC_MALLOC_LIMIT").and_then(|s| s.trim().parse::<usize>().ok()).filter(|&n| n > 0) {
            t.malloc_limit_min = n;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Tuning {
        Tuning::from_vars(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn defaults_without_variables() {
        assert_eq!(with(&[]), DEFAULT);
    }

    #[test]
    fn ratios_and_growth_factor() {
        let t = with(&[("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "0.2"), ("RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO", "0.40"), ("RUBY_GC_HEAP_GROWTH_FACTOR", "1.5"), ("RUBY_GC_HEAP_OLDOBJECT_LIMIT_FACTOR", "1.3"), ("RUBY_GC_MALLOC_LIMIT", "1000000")]);
        assert_eq!((t.min_free, t.goal_free, t.max_free, t.max_growth, t.old_limit_factor, t.malloc_limit_min), (20, 40, 65, 50, 130, 1_000_000));
    }

    #[test]
    fn inconsistent_or_invalid_values_are_ignored() {
        let t = with(&[("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "0.6"), ("RUBY_GC_HEAP_GROWTH_FACTOR", "0.5"), ("RUBY_GC_MALLOC_LIMIT", "lots")]);
        assert_eq!(t, DEFAULT);
        assert_eq!(with(&[("RUBY_GC_HEAP_FREE_SLOTS_GOAL_RATIO", "1.5")]), DEFAULT);
        assert_eq!(with(&[("RUBY_GC_HEAP_FREE_SLOTS_MIN_RATIO", "nan")]), DEFAULT);
    }
}
