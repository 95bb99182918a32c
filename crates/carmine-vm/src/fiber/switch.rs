//! The native context switch: saves the callee-saved registers on the current stack, stores
//! the stack pointer, loads another one and restores that context's registers. Nothing else
//! (no signal mask, no floating-point control state, which Rust code never changes) — the
//! switch is a function call as far as the compiler is concerned, so caller-saved registers
//! are already dead.
//!
//! Invariants:
//! - A suspended context is its saved stack pointer: the registers sit on its stack just
//!   below the return address, so a conservative scan from the saved sp covers them.
//! - A fresh context (`prepare`) starts in `entry(transferred, arg)` on a 16-byte aligned
//!   stack; `entry` must never return (it switches away for good instead).

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    // A section of its own, named as rustc names a function's, so that the text-order
    // list (crates/carmine/text-order.txt) places it with the code that runs.
    ".pushsection .text.carmine_fiber_switch,\"ax\",@progbits",
    ".p2align 4",
    ".globl carmine_fiber_switch",
    ".type carmine_fiber_switch,@function",
    // rdi: where to store this context's sp; rsi: the sp to switch to; rdx: value handed to
    // the other side (returned from its own call to this function, or passed to its entry).
    "carmine_fiber_switch:",
    "push rbp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    "mov [rdi], rsp",
    "mov rsp, rsi",
    "mov rax, rdx",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    ".size carmine_fiber_switch, . - carmine_fiber_switch",
    ".popsection",
    // First return of a fresh context: r12 = argument, r13 = entry function.
    ".pushsection .text.carmine_fiber_start,\"ax\",@progbits",
    ".p2align 4",
    ".globl carmine_fiber_start",
    ".type carmine_fiber_start,@function",
    "carmine_fiber_start:",
    "mov rdi, rax",
    "mov rsi, r12",
    "call r13",
    "ud2",
    ".size carmine_fiber_start, . - carmine_fiber_start",
    ".popsection",
);

#[cfg(target_arch = "x86_64")]
extern "C" {
    fn carmine_fiber_switch(save_sp: *mut usize, to_sp: usize, transfer: usize) -> usize;
    fn carmine_fiber_start();
}

/// The function a fresh context starts in: `(transferred value, argument)`; never returns.
pub type Entry = extern "C" fn(usize, usize) -> !;

/// True when this architecture has a context switch.
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// Lays out a fresh context on the stack whose highest address is `hi`; returns its sp.
///
/// # Safety
/// `[hi - 128, hi)` must be writable memory of an unused stack.
#[cfg(target_arch = "x86_64")]
pub unsafe fn prepare(hi: usize, entry: Entry, arg: usize) -> usize {
    // After the six pops and `ret`, sp must be 16-byte aligned so that the `call` in
    // carmine_fiber_start gives `entry` the ABI's alignment.
    let after_ret = (hi & !15) - 16;
    let sp = after_ret - 7 * 8;
    let words = sp as *mut usize;
    // Pop order: r15, r14, r13, r12, rbx, rbp, then the return address.
    let init = [0, 0, entry as *const () as usize, arg, 0, 0, carmine_fiber_start as *const () as usize];
    for (i, w) in init.iter().enumerate() {
        *words.add(i) = *w;
    }
    sp
}

/// Saves the current context into `*save_sp` and continues the one suspended at `to_sp`,
/// handing it `transfer`. Returns the value handed back when something switches here again.
///
/// # Safety
/// `to_sp` must be a context produced by `prepare` or saved by `switch` and not resumed
/// since; `save_sp` must stay valid until this context is resumed.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub unsafe fn switch(save_sp: *mut usize, to_sp: usize, transfer: usize) -> usize {
    carmine_fiber_switch(save_sp, to_sp, transfer)
}

#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn prepare(_hi: usize, _entry: Entry, _arg: usize) -> usize {
    unreachable!("fibers are not supported on this architecture (checked by SUPPORTED)")
}

#[cfg(not(target_arch = "x86_64"))]
pub unsafe fn switch(_save_sp: *mut usize, _to_sp: usize, _transfer: usize) -> usize {
    unreachable!("fibers are not supported on this architecture (checked by SUPPORTED)")
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::fiber::stack::NativeStack;

    static mut MAIN_SP: usize = 0;
    static mut CO_SP: usize = 0;

    extern "C" fn counter(first: usize, step: usize) -> ! {
        let mut n = first;
        loop {
            // SAFETY: the test's main context is suspended in `switch` and saved in MAIN_SP.
            n = unsafe { switch(&raw mut CO_SP, MAIN_SP, n) } + step;
        }
    }

    #[test]
    fn values_go_back_and_forth_and_registers_survive() {
        let stack = NativeStack::new(64 * 1024).expect("stack");
        // SAFETY: single-threaded test; the coroutine runs only inside `switch` calls below.
        unsafe {
            CO_SP = prepare(stack.hi(), counter, 10);
            let kept = std::hint::black_box(12345u64);
            let mut got = Vec::new();
            for send in [1, 100, 200] {
                got.push(switch(&raw mut MAIN_SP, CO_SP, send));
            }
            assert_eq!(got, vec![1, 110, 210]);
            assert_eq!(kept, 12345);
        }
    }
}
