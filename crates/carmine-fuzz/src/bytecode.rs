//! Hostile bytecode files: byte-level mutations of real compiled programs, loaded
//! in-process (a load must end in a value or a `LoadError`, never a panic), and the ones
//! that still load run in `carmine` subprocesses (they must not crash the VM).
//!
//! Half the mutations are *resealed*: the header's length and checksum are recomputed
//! after the change, as a hostile writer would, so the decoder and the verifier see them;
//! the others stop at the header checks (truncation, checksum).

use std::panic::AssertUnwindSafe;

use carmine_vm::compile::bytecode::{self, HEADER_LEN};
use carmine_vm::runtime::{Runtime, Verbosity};

use crate::rng::Rng;

/// Recomputes the header's payload length and checksum, keeping a data section of
/// `data_len` bytes at the end.
pub fn reseal(bytes: &mut [u8], data_len: usize) {
    if bytes.len() < HEADER_LEN + data_len {
        return;
    }
    let end = bytes.len() - data_len;
    let sum = bytecode::checksum(&bytes[HEADER_LEN..end]);
    let len = (end - HEADER_LEN) as u64;
    bytes[24..32].copy_from_slice(&len.to_le_bytes());
    bytes[32..40].copy_from_slice(&sum.to_le_bytes());
    if data_len > 0 {
        bytes[40..48].copy_from_slice(&(end as u64).to_le_bytes());
    }
}

/// The data-section length of a well-formed file (0 when it has none or is not one).
pub fn data_len(bytes: &[u8]) -> usize {
    if bytes.len() < HEADER_LEN {
        return 0;
    }
    let at = u64::from_le_bytes(bytes[40..48].try_into().unwrap_or([0; 8])) as usize;
    if at == 0 || at > bytes.len() {
        0
    } else {
        bytes.len() - at
    }
}

/// One mutation of a bytecode file (its data section is left alone).
pub fn mutate(rng: &mut Rng, file: &[u8]) -> Vec<u8> {
    let data = data_len(file);
    let mut v = file.to_vec();
    let reseal_it = rng.chance(1, 2);
    for _ in 0..rng.range(1, 4) {
        let end = v.len() - data;
        if end <= HEADER_LEN {
            break;
        }
        let i = rng.range(HEADER_LEN, end - 1);
        match rng.below(8) {
            0 => v[i] ^= 1 << rng.below(8),
            1 => v[i] = rng.next_u64() as u8,
            2 => v[i] = *rng.pick(&[0u8, 1, 0x7f, 0x80, 0xff]),
            3 => {
                let n = rng.range(1, 16).min(end - i);
                v.drain(i..i + n);
            }
            4 => {
                let n = rng.range(1, 8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                v.splice(i..i, bytes);
            }
            5 => {
                let n = rng.range(1, 32).min(end - i);
                let copy = v[i..i + n].to_vec();
                let j = rng.range(HEADER_LEN, end);
                v.splice(j..j, copy);
            }
            6 => {
                // Truncation (of the whole file: the data section goes too).
                v.truncate(rng.range(0, v.len()));
                return v;
            }
            _ => {
                // A varint made huge.
                let n = rng.range(1, 10);
                v.splice(i..i, std::iter::repeat_n(0xffu8, n));
            }
        }
    }
    if reseal_it {
        reseal(&mut v, data);
    }
    v
}

/// What loading one input did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadOutcome {
    Loaded,
    Rejected(String),
    Panic(String),
}

/// Loads bytecode in-process under `catch_unwind`.
pub struct Loader {
    rt: Option<Runtime>,
    loads: usize,
}

impl Default for Loader {
    fn default() -> Self {
        Self::new()
    }
}

impl Loader {
    pub fn new() -> Loader {
        Loader { rt: None, loads: 0 }
    }

    pub fn load(&mut self, bytes: &[u8]) -> LoadOutcome {
        self.loads += 1;
        if self.loads % 2000 == 0 {
            self.rt = None;
        }
        let rt = self.rt.get_or_insert_with(|| {
            let mut rt = Runtime::new();
            rt.configure("fuzz.cmb", &[], &[], Verbosity::Silent);
            rt
        });
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| match rt.load_bytecode(bytes) {
            Ok(_) => None,
            Err(carmine_vm::error::Unwind::Raise(e)) => Some(carmine_vm::core::exception::message_string(rt.ctx(), e)),
            Err(_) => Some("not an exception".to_string()),
        }));
        match r {
            Ok(None) => LoadOutcome::Loaded,
            Ok(Some(msg)) => LoadOutcome::Rejected(msg),
            Err(payload) => {
                // A VM that panicked may hold broken invariants: never reuse or drop it.
                if let Some(rt) = self.rt.take() {
                    std::mem::forget(rt);
                }
                LoadOutcome::Panic(payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "panic".into()))
            }
        }
    }
}
