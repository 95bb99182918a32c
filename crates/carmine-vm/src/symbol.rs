//! The per-VM symbol table.
//!
//! Invariants: a `SymId` is an index into this VM's table and is never reused or freed
//! (all symbols are immortal). The first `PREDEFINED.len()` ids are the names below, in
//! order, so `sym::INITIALIZE` etc. are compile-time constants valid in every VM.
//! The table is shared by the VM's threads: interning takes the write lock, reading a
//! name takes the read lock.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
#[repr(transparent)]
pub struct SymId(pub u32);

/// Hasher for maps keyed by `SymId` (method tables, caches, ivar indexes): ids are small
/// integers, so one multiply spreads them well enough, and SipHash's per-lookup cost showed up
/// in method lookup profiles. Not for keys chosen by untrusted input.
#[derive(Default, Clone, Copy)]
pub struct SymHasher(u64);

impl SymHasher {
    #[inline(always)]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for SymHasher {
    /// Eight bytes at a time (symbol names are hashed on every `intern`).
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A HashMap keyed by symbol id.
pub type SymMap<V> = std::collections::HashMap<SymId, V, std::hash::BuildHasherDefault<SymHasher>>;

macro_rules! predefined_symbols {
    ($($name:ident = $text:expr),* $(,)?) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[repr(u32)]
        enum Predefined { $($name),* }
        /// Symbols every VM interns at start-up, with fixed ids.
        #[allow(non_upper_case_globals)]
        pub mod sym {
            use super::SymId;
            $(pub const $name: SymId = SymId(super::Predefined::$name as u32);)*
        }
        pub const PREDEFINED: &[&str] = &[$($text),*];
    };
}

predefined_symbols! {
    EMPTY = "",
    PLUS = "+", MINUS = "-", MUL = "*", DIV = "/", MOD = "%", POW = "**",
    EQ = "==", NEQ = "!=", EQQ = "===", LT = "<", LE = "<=", GT = ">", GE = ">=", CMP = "<=>",
    LTLT = "<<", GTGT = ">>", AND = "&", OR = "|", XOR = "^", NOT = "!", TILDE = "~",
    UPLUS = "+@", UMINUS = "-@", AREF = "[]", ASET = "[]=", MATCH = "=~", NMATCH = "!~",
    INITIALIZE = "initialize", INITIALIZE_COPY = "initialize_copy", INITIALIZE_CLONE = "initialize_clone",
    INITIALIZE_DUP = "initialize_dup",
    METHOD_MISSING = "method_missing", RESPOND_TO = "respond_to?",
    RESPOND_TO_MISSING = "respond_to_missing?", TO_S = "to_s", TO_STR = "to_str", TO_I = "to_i",
    TO_INT = "to_int", TO_F = "to_f", TO_A = "to_a", TO_ARY = "to_ary", TO_H = "to_h",
    TO_HASH = "to_hash", TO_PROC = "to_proc", TO_SYM = "to_sym", TO_R = "to_r", TO_C = "to_c",
    INSPECT = "inspect", HASH = "hash", EQL = "eql?", EQUAL = "equal?", CALL = "call", EACH = "each",
    NEW = "new", ALLOCATE = "allocate", INHERITED = "inherited", INCLUDED = "included",
    EXTENDED = "extended", PREPENDED = "prepended", METHOD_ADDED = "method_added",
    SINGLETON_METHOD_ADDED = "singleton_method_added", METHOD_REMOVED = "method_removed",
    METHOD_UNDEFINED = "method_undefined", CONST_MISSING = "const_missing",
    COERCE = "coerce", LENGTH = "length", SIZE = "size", SUCC = "succ", BEGIN = "begin",
    END = "end", EXCEPTION = "exception", MESSAGE = "message", BACKTRACE = "backtrace",
    FULL_MESSAGE = "full_message", DETAILED_MESSAGE = "detailed_message",
    NIL_P = "nil?", KEYS = "keys", VALUES = "values", NAME = "name", MESG = "mesg",
    BT = "bt", CAUSE = "cause", RECEIVER = "receiver", KEY = "key", ARGS = "args",
    OBJECT = "Object", MAIN = "main", LAMBDA = "lambda", PROC = "proc",
    BLOCK_GIVEN = "block_given?", BINDING = "binding", EVAL = "eval",
    LOCAL_VARIABLES = "local_variables", RAISE = "raise", FREEZE = "freeze", DUP = "dup",
    CLONE = "clone", CLASS = "class", SEND = "send", __SEND__ = "__send__",
    PUBLIC_SEND = "public_send", INSTANCE_EVAL = "instance_eval", INSTANCE_EXEC = "instance_exec",
    CLASS_EVAL = "class_eval", MODULE_EVAL = "module_eval", CLASS_EXEC = "class_exec",
    MODULE_EXEC = "module_exec", DEFINE_METHOD = "define_method", ATTACHED = "__attached__",
    CLASSPATH = "__classpath__", TMP_CLASSPATH = "__tmp_classpath__", IT = "it",
    UNDERSCORE_1 = "_1", AND_AND = "&&", OR_OR = "||", DEFAULT = "default", YIELD = "yield",
    SUPER = "super", SELF = "self", NIL = "nil", TRUE = "true", FALSE = "false",
    ARGV = "ARGV", DOLLAR_BANG = "$!", DOLLAR_AT = "$@", DOLLAR_TILDE = "$~", DOLLAR_UNDERSCORE = "$_",
    DOLLAR_ZERO = "$0", DOLLAR_STDOUT = "$stdout", DOLLAR_STDERR = "$stderr", DOLLAR_STDIN = "$stdin",
    DOLLAR_COMMA = "$,", DOLLAR_SLASH = "$/", DOLLAR_SEMICOLON = "$;", DOLLAR_BACKSLASH = "$\\",
    DOLLAR_LOAD_PATH = "$LOAD_PATH", DOLLAR_LOADED_FEATURES = "$LOADED_FEATURES",
    DOLLAR_VERBOSE = "$VERBOSE", DOLLAR_DEBUG = "$DEBUG", DOLLAR_PROGRAM_NAME = "$PROGRAM_NAME",
    DOLLAR_COLON = "$:", DOLLAR_DQUOTE = "$\"", DOLLAR_LT = "$<", DOLLAR_GT = "$>",
    DOLLAR_FILENAME = "$FILENAME", DOLLAR_STAR = "$*", DOLLAR_DOLLAR = "$$", DOLLAR_QUESTION = "$?",
    DOLLAR_DOT = "$.", DOLLAR_W = "$-w", DOLLAR_V = "$-v", DOLLAR_0 = "$-0",
    TO_ENUM = "to_enum", ENUM_FOR = "enum_for",
    STATUS = "status", SUCCESS_P = "success?",
    INCLUDE = "include", EXTEND = "extend", PREPEND = "prepend", PRIVATE = "private",
    PUBLIC = "public", PROTECTED = "protected", MODULE_FUNCTION = "module_function",
    SINGLETON_CLASS = "singleton_class", INSTANCE_VARIABLE_GET = "instance_variable_get",
    DIG = "dig", MEMBERS = "members", KEYWORD_INIT = "keyword_init",
    MARSHAL_DUMP = "marshal_dump", LAST = "last", FIRST = "first", MAP = "map",
    BACKTRACE_LOCATIONS = "backtrace_locations", SET_BACKTRACE = "set_backtrace",
    DECONSTRUCT = "deconstruct", DECONSTRUCT_KEYS = "deconstruct_keys",
    UNINITIALIZED = "__uninitialized__", REQUIRE = "require",
    HALF = "half", UP = "up", DOWN = "down", EVEN = "even", CHOMP = "chomp",
    TO_PATH = "to_path", TO_IO = "to_io", READ = "read", WRITE = "write",
    EXCEPTION_CLASS = "exception_class", RESULT = "result", INTERN = "intern",
    FORWARD = "...", TIMES = "times", LOOP = "loop", UPTO = "upto", DOWNTO = "downto",
    SELECT = "select", REJECT = "reject", COUNT = "count", INJECT = "inject",
    EACH_WITH_INDEX = "each_with_index",
    LITERAL_HASH = "__literal_hash__",
    STRUCT_MEMBERS = "__members__", STRUCT_KEYWORD_INIT = "__keyword_init__",
    // bigdecimal's class and per-thread modes (read on every BigDecimal operation)
    BIGDECIMAL = "BigDecimal",
    BIGDECIMAL_EXCEPTION_MODE = "BigDecimal.exception_mode",
    BIGDECIMAL_ROUNDING_MODE = "BigDecimal.rounding_mode",
    BIGDECIMAL_PRECISION_LIMIT = "BigDecimal.precision_limit",
    STDOUT = "STDOUT", STDERR = "STDERR",
    // the Warning module and its categories' switches (read on calls that may warn)
    WARNING = "Warning", WARNING_DEPRECATED = "__warning_deprecated",
    WARNING_EXPERIMENTAL = "__warning_experimental", WARNING_PERFORMANCE = "__warning_performance",
    WARNING_STRICT_UNUSED_BLOCK = "__warning_strict_unused_block",
}

pub struct SymbolTable {
    inner: RwLock<Inner>,
}

/// Hashes symbol names with `SymHasher` from a per-table random seed (names can come from
/// input, e.g. `String#to_sym`, so collisions must not be predictable).
#[derive(Clone)]
struct NameHash(u64);

impl std::hash::BuildHasher for NameHash {
    type Hasher = SymHasher;
    fn build_hasher(&self) -> SymHasher {
        SymHasher(self.0)
    }
}

impl NameHash {
    fn random() -> NameHash {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(0);
        NameHash(h.finish())
    }
}

struct Inner {
    by_name: HashMap<Arc<[u8]>, SymId, NameHash>,
    names: Vec<Arc<[u8]>>,
}

impl Default for SymbolTable {
    fn default() -> Self {
        Self::new()
    }
}

impl SymbolTable {
    pub fn new() -> SymbolTable {
        // Room for the ~1,710 symbols a booted VM has and a host's API (2,048 buckets, 24
        // bytes each, hold 1,792): every VM of an embedding host pays for this table, and a
        // program that interns more grows it once.
        let mut inner = Inner { by_name: HashMap::with_capacity_and_hasher(1792, NameHash::random()), names: Vec::with_capacity(1792) };
        for name in PREDEFINED {
            let bytes: Arc<[u8]> = Arc::from(name.as_bytes());
            let id = SymId(inner.names.len() as u32);
            // Duplicate predefined texts (two constants with one name) share the first id.
            inner.by_name.entry(bytes.clone()).or_insert(id);
            inner.names.push(bytes);
        }
        SymbolTable { inner: RwLock::new(inner) }
    }

    pub fn intern(&self, name: &[u8]) -> SymId {
        if let Some(id) = self.lookup(name) {
            return id;
        }
        let mut inner = self.inner.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&id) = inner.by_name.get(name) {
            return id;
        }
        let id = SymId(inner.names.len() as u32);
        let bytes: Arc<[u8]> = Arc::from(name);
        inner.names.push(bytes.clone());
        inner.by_name.insert(bytes, id);
        id
    }

    pub fn lookup(&self, name: &[u8]) -> Option<SymId> {
        let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
        inner.by_name.get(name).copied()
    }

    pub fn name(&self, id: SymId) -> Arc<[u8]> {
        let inner = self.inner.read().unwrap_or_else(|e| e.into_inner());
        inner.names.get(id.0 as usize).cloned().unwrap_or_else(|| Arc::from(&b""[..]))
    }

    pub fn len(&self) -> usize {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predefined_ids_are_stable() {
        let t = SymbolTable::new();
        assert_eq!(t.intern(b"initialize"), sym::INITIALIZE);
        assert_eq!(&*t.name(sym::PLUS), b"+");
        let a = t.intern(b"hello");
        assert_eq!(t.intern(b"hello"), a);
        assert_ne!(t.intern(b"world"), a);
        assert_eq!(&*t.name(a), b"hello");
    }

    #[test]
    fn predefined_names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for name in PREDEFINED {
            assert!(seen.insert(*name), "duplicate predefined symbol {name:?}");
        }
    }
}
