//! Giving back the pages of libcarmine's code that booting touched once.
//!
//! Opening a VM runs every builtin class's init function and reads their tables: a few MB
//! of machine code and read-only data that a server worker then maps for its whole life,
//! although a request runs a small, hot part of it. `release` drops the process's mappings
//! of those pages (`MADV_DONTNEED`); the kernel maps them again, from the page cache, at
//! the first use of each, so afterwards the resident code is what the process really runs.
//!
//! Invariants:
//! - Only the non-writable `PT_LOAD` segments of the object that holds libcarmine's own
//!   code (libcarmine.so, or the module or program it is linked into) are advised, minus
//!   its `PT_GNU_RELRO` range: a page the process never wrote equals its file's contents,
//!   so dropping it changes nothing but residency. Pages written by the dynamic linker
//!   (relocations) lie in the writable or RELRO ranges and are never dropped.
//! - Nothing here is state: it is a system call on the process's own mappings, safe while
//!   other threads run (they fault the pages back in).

/// Drops the resident pages of the code and read-only data of the object that contains
/// this function. Returns the bytes advised (0 where the platform has no such call).
pub fn release() -> usize {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        let mut found = Segments { target: release as fn() -> usize as usize, bytes: 0 };
        // SAFETY: the callback only reads the program headers dl_iterate_phdr hands it,
        // for the duration of the call, and `found` outlives the call.
        unsafe { libc::dl_iterate_phdr(Some(visit), &mut found as *mut Segments as *mut libc::c_void) };
        found.bytes
    }
    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    0
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
struct Segments {
    /// An address inside the object whose segments are wanted.
    target: usize,
    bytes: usize,
}

/// One loaded object: when it contains `target`, advises its read-only segments and stops
/// the iteration (returns 1).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut libc::c_void) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid info for the call, and `data` is the
    // `Segments` release passed.
    let (info, found) = unsafe { (&*info, &mut *(data as *mut Segments)) };
    if info.dlpi_phdr.is_null() {
        return 0;
    }
    // SAFETY: dlpi_phdr points to dlpi_phnum program headers of a loaded object.
    let phdrs = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize) };
    let base = info.dlpi_addr as usize;
    let range = |p: &libc::Elf64_Phdr| (base + p.p_vaddr as usize, base + (p.p_vaddr + p.p_memsz) as usize);
    let loads = || phdrs.iter().filter(|p| p.p_type == libc::PT_LOAD);
    if !loads().any(|p| (range(p).0..range(p).1).contains(&found.target)) {
        return 0;
    }
    let relro = phdrs.iter().find(|p| p.p_type == libc::PT_GNU_RELRO).map(range);
    let page = page_size();
    for p in loads().filter(|p| p.p_flags & libc::PF_W == 0) {
        let (start, end) = range(p);
        let (mut start, mut end) = (start.next_multiple_of(page), end / page * page);
        if let Some((rs, re)) = relro {
            // The RELRO range follows the read-only segments; cut where they overlap.
            if rs < end && re > start {
                if rs > start {
                    end = rs / page * page;
                } else {
                    start = re.next_multiple_of(page);
                }
            }
        }
        if start < end {
            // SAFETY: [start, end) lies inside a non-writable segment of a loaded object,
            // outside its RELRO range: file-backed pages the process never wrote, which
            // read the same after being dropped.
            if unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) } == 0 {
                found.bytes += end - start;
            }
        }
    }
    1
}

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

#[cfg(all(test, target_os = "linux", target_pointer_width = "64"))]
mod tests {
    #[test]
    fn release_drops_read_only_pages_and_code_still_runs() {
        // The test program holds this code: its text segment is advised.
        assert!(super::release() > 0);
        // Code and read-only data fault back in: a VM still boots and runs.
        let vm = crate::carmine_open();
        assert!(!vm.is_null());
        let src = b"[1, 2, 3].sum";
        let mut out = 0;
        // SAFETY: a fresh VM, a valid source buffer and result pointer.
        let st = unsafe { crate::carmine_eval(vm, src.as_ptr().cast(), src.len(), c"t.rb".as_ptr(), &mut out) };
        assert_eq!(st, crate::CARMINE_OK);
        assert_eq!(out, cvm::Value::fixnum(6).raw());
        // SAFETY: the VM is not in use.
        unsafe { crate::carmine_close(vm) };
    }
}
