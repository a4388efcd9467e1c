//! Seconds on the wire against the endpoint's own time. A live run whose consumer runs on a
//! scaled clock (`consumer.clock: scaled`) hears every duration in profile seconds
//! (`VisibilityTimeout`, `WaitTimeSeconds`, `DelaySeconds`, on requests and queue attributes)
//! while its endpoint runs on wall time: each is multiplied by the run's time scale on the way
//! in, and divided by it on the way out. Anywhere else a wire second is a second.

use std::time::Duration;

use crate::record::Nanos;

/// Wall seconds per second on the wire.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WireTime(f64);

impl Default for WireTime {
    fn default() -> WireTime {
        WireTime::REAL
    }
}

impl WireTime {
    /// A wire second is a second.
    pub const REAL: WireTime = WireTime(1.0);

    /// A wire second is `time_scale` seconds (0 < `time_scale` <= 1).
    pub fn scaled(time_scale: f64) -> WireTime {
        WireTime(time_scale)
    }

    /// The endpoint's nanoseconds for `secs` wire seconds.
    pub fn nanos(self, secs: u64) -> Nanos {
        (secs as f64 * 1e9 * self.0).round() as Nanos
    }

    /// The endpoint's duration for `secs` wire seconds.
    pub fn duration(self, secs: u32) -> Duration {
        Duration::from_nanos(self.nanos(u64::from(secs)))
    }

    /// Whole wire seconds for `n` of the endpoint's nanoseconds (rounded: a 30 s lease scaled
    /// by 0.05 is 1.5 s of wall time, and reads back 30).
    pub fn secs(self, n: Nanos) -> u64 {
        (n as f64 / 1e9 / self.0).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_seconds_are_seconds() {
        assert_eq!(WireTime::REAL.nanos(30), 30_000_000_000);
        assert_eq!(WireTime::REAL.secs(30_000_000_000), 30);
        assert_eq!(WireTime::REAL.duration(20), Duration::from_secs(20));
    }

    #[test]
    fn scaled_seconds_are_profile_seconds() {
        let w = WireTime::scaled(0.05);
        // 30 s x 0.05 = 1.5 s; 20 s of long poll x 0.05 = 1 s; and back.
        assert_eq!(w.nanos(30), 1_500_000_000);
        assert_eq!(w.duration(20), Duration::from_secs(1));
        assert_eq!(w.secs(1_500_000_000), 30);
        // 0.3: 10 s is 3 s of wall time.
        assert_eq!(WireTime::scaled(0.3).nanos(10), 3_000_000_000);
    }
}
