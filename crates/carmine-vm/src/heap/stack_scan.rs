//! Conservative scanning of native stacks.
//!
//! Invariant: at a collection, every object a Rust frame still uses is reachable from a
//! word on that thread's native stack or in a callee-saved register (the only registers
//! that survive the calls leading into the collector). `with_registers_spilled` stores the
//! callee-saved registers on the stack before the scan so both are covered.

/// The bounds `[lo, hi)` of the current thread's native stack, as the OS reports them.
pub fn current_thread_stack_bounds() -> (usize, usize) {
    // SAFETY: pthread_getattr_np fills attr for the calling thread; we destroy it after use.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            let here = approximate_sp();
            return (here.saturating_sub(8 << 20), here + 4096);
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
        libc::pthread_attr_destroy(&mut attr);
        let hi = addr as usize + size;
        (hi.saturating_sub(main_thread_stack_size(size)), hi)
    }
}

/// The size of the calling thread's stack given glibc's `reported` size: for the process's
/// main thread at least `RLIMIT_STACK` (when finite). glibc takes the main stack's size
/// from the gap to the mapping below it, which the kernel keeps `RLIMIT_STACK` wide; but
/// under valgrind, which grows a client's main stack by mapping pages below it, those
/// mappings stay separate in a forked child (the kernel does not merge them with the
/// stack's own after fork), and glibc then reports a few KiB — every call would be a
/// SystemStackError (a daemonized server under valgrind).
fn main_thread_stack_size(reported: usize) -> usize {
    // SAFETY: getpid, gettid and getrlimit have no preconditions; lim is written by getrlimit.
    unsafe {
        if libc::getpid() != libc::gettid() {
            return reported;
        }
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_STACK, &mut lim) != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
            return reported;
        }
        reported.max(lim.rlim_cur as usize)
    }
}

/// An address close to the current stack pointer (checked on every call into a builtin,
/// so it is one instruction where the architecture allows).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn approximate_sp() -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer register; no memory or flags are touched.
    unsafe { std::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags)) };
    sp
}

/// An address close to the current stack pointer.
#[cfg(not(target_arch = "x86_64"))]
#[inline(never)]
pub fn approximate_sp() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// Calls `f(sp)` with the callee-saved registers stored in this frame, so that a scan of
/// `[sp, stack_top)` sees them.
#[inline(never)]
pub fn with_registers_spilled(f: &mut dyn FnMut(usize)) {
    let mut regs = [0usize; 12];
    #[cfg(target_arch = "x86_64")]
    // SAFETY: stores callee-saved registers into a local array; changes no register.
    unsafe {
        std::arch::asm!(
            "mov [{0}], rbx",
            "mov [{0} + 8], rbp",
            "mov [{0} + 16], r12",
            "mov [{0} + 24], r13",
            "mov [{0} + 32], r14",
            "mov [{0} + 40], r15",
            in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: stores callee-saved registers into a local array; changes no register.
    unsafe {
        std::arch::asm!(
            "stp x19, x20, [{0}]",
            "stp x21, x22, [{0}, #16]",
            "stp x23, x24, [{0}, #32]",
            "stp x25, x26, [{0}, #48]",
            "stp x27, x28, [{0}, #64]",
            "str x29, [{0}, #80]",
            in(reg) regs.as_mut_ptr(),
            options(nostack, preserves_flags)
        );
    }
    let regs = std::hint::black_box(&mut regs);
    let sp = regs.as_ptr() as usize;
    f(sp);
    std::hint::black_box(regs);
}
