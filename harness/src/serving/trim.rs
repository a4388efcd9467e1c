//! Giving freed memory back to the system.
//!
//! glibc's malloc keeps memory a program freed for its next allocations: after a purge of a
//! queue of large messages, or after thousands of connections closed, a server's resident size
//! would stay at its peak although the memory is free. [`released`] marks that much may have
//! been freed; [`keep_trimming`] (run by the standalone servers) then asks malloc, at most once
//! a second, to return free pages (`malloc_trim`). The sim path never calls it. On other C
//! libraries this does nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static RELEASED: AtomicBool = AtomicBool::new(false);

/// Much memory may have been freed (a queue purged or deleted, a connection closed).
pub fn released() {
    RELEASED.store(true, Ordering::Relaxed);
}

/// Returns free memory to the system now.
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only reorganises malloc's own free lists; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Trims after each [`released`], at most once per `every`, for as long as it is polled.
pub async fn keep_trimming(every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if RELEASED.swap(false, Ordering::Relaxed) {
            trim();
        }
    }
}
