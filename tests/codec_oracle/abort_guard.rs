//! kafka-protocol sizes some allocations from counts it reads, so bytes it parses differently
//! from kraftd (a kraftd encoding bug, say) can make it ask for gigabytes. A failed allocation
//! aborts the process: no panic to catch, no failure message, no seed. This allocator writes
//! the name of the case being checked to stderr first, so the abort says what to replay.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr::null_mut;

/// No message in these tests comes near this (the largest is a few KiB); a request past it is a
/// misread count.
const LIMIT: usize = 64 << 20;

thread_local! {
    /// The label of the case this thread checks (pointer and length of a live `&str`).
    /// Const-initialised and without a destructor, so reading it from the allocator never
    /// allocates.
    static CASE: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// Runs `check` with `label` as the case an abort would name.
pub fn while_checking<T>(label: &str, check: impl FnOnce() -> T) -> T {
    struct Restore((*const u8, usize));
    impl Drop for Restore {
        fn drop(&mut self) {
            CASE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CASE.with(|c| c.replace((label.as_ptr(), label.len()))));
    check()
}

pub struct GuardedAlloc;

fn stderr(bytes: &[u8]) {
    // SAFETY: writes a live buffer to fd 2; no allocation, so safe inside the allocator.
    unsafe {
        libc::write(2, bytes.as_ptr().cast(), bytes.len());
    }
}

fn report(size: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = size;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    stderr(b"\ncodec oracle: an allocation of ");
    stderr(&digits[at..]);
    stderr(b" bytes (a count misread from the bytes?) while checking: ");
    let (ptr, len) = CASE.try_with(|c| c.get()).unwrap_or((std::ptr::null(), 0));
    if ptr.is_null() {
        stderr(b"(no case)");
    } else {
        // SAFETY: `while_checking` keeps the label alive while it is set.
        stderr(unsafe { std::slice::from_raw_parts(ptr, len) });
    }
    stderr(b"\n");
}

// SAFETY: defers to `System`, refusing (null) only requests past LIMIT.
unsafe impl GlobalAlloc for GuardedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT {
            report(layout.size());
            return null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT {
            report(layout.size());
            return null_mut();
        }
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > LIMIT {
            report(new_size);
            return null_mut();
        }
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}
