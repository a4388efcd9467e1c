//! The wall-clock driver: sleeps until the earliest delay or lease end of any queue and
//! advances the brokers then, so that long pollers wake the moment a message becomes visible.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Notify;

use crate::record::Nanos;

/// When the driver will next wake, and how to wake it earlier.
#[derive(Debug)]
pub struct Timer {
    armed: AtomicU64,
    wake: Notify,
}

impl Default for Timer {
    fn default() -> Timer {
        Timer {
            armed: AtomicU64::new(u64::MAX),
            wake: Notify::new(),
        }
    }
}

impl Timer {
    /// Records that the driver sleeps until `due` (`None`: until woken).
    pub fn armed_for(&self, due: Option<Nanos>) {
        self.armed.store(due.unwrap_or(u64::MAX), Ordering::SeqCst);
    }

    /// Wakes the driver if `due` is earlier than the time it sleeps until.
    pub fn due(&self, due: Option<Nanos>) {
        let Some(due) = due else { return };
        if self.armed.fetch_min(due, Ordering::SeqCst) > due {
            self.wake.notify_one();
        }
    }

    /// Resolves when [`Timer::due`] asked for an earlier wake-up.
    pub async fn woken(&self) {
        self.wake.notified().await
    }
}
