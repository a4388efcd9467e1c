//! Wall time for live runs, in profile time: `time_scale` compresses every duration of the
//! profile (0.05 runs a 90-minute incident in 4.5 minutes), and records stay in profile time so
//! live and sim summaries compare directly.

use std::time::{Duration, Instant};

use crate::record::Nanos;

#[derive(Debug, Clone, Copy)]
pub struct LiveClock {
    start: Instant,
    /// Wall seconds per profile second (0 < scale <= 1 compresses).
    scale: f64,
}

impl LiveClock {
    pub fn new(scale: f64) -> LiveClock {
        LiveClock {
            start: Instant::now(),
            scale: if scale > 0.0 { scale } else { 1.0 },
        }
    }

    /// Profile time since the start of the run.
    pub fn now(&self) -> Nanos {
        (self.start.elapsed().as_nanos() as f64 / self.scale) as Nanos
    }

    /// The wall duration of `profile` nanoseconds of profile time.
    pub fn wall(&self, profile: Nanos) -> Duration {
        Duration::from_nanos((profile as f64 * self.scale) as u64)
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }
}
