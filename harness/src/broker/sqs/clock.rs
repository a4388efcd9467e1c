//! Wall-clock time for the broker: nanoseconds since the server started (the broker's
//! [`Nanos`]), and epoch milliseconds for SQS's timestamps.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::record::{nanos, Nanos};

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
    /// Epoch milliseconds at `start`.
    epoch_ms: u64,
}

impl Clock {
    pub fn start() -> Clock {
        let epoch_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Clock {
            start: Instant::now(),
            epoch_ms,
        }
    }

    /// Nanoseconds since the server started.
    pub fn now(&self) -> Nanos {
        nanos(self.start.elapsed())
    }

    /// The instant `at` (nanoseconds since start) stands for.
    pub fn instant(&self, at: Nanos) -> Instant {
        self.start + std::time::Duration::from_nanos(at)
    }

    /// Epoch milliseconds of `at`.
    pub fn epoch_ms(&self, at: Nanos) -> u64 {
        self.epoch_ms + at / 1_000_000
    }
}
