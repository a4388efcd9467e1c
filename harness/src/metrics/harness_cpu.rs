//! ackbench's own headroom in a live run: the CPU time its process used (user + system, every
//! thread, the worker processes not counted) over the wall time, in cores. A run whose ackbench
//! works near a core's worth may be measuring ackbench's limit, not the consumer's: the
//! publisher, the proxies, the provider and (with a built-in target) the consumer itself share
//! that process.

use serde::{Deserialize, Serialize};

use crate::record::{HarnessCpu, Nanos};

/// From this share of one core on, the report warns that ackbench may be the bottleneck.
pub const NEAR_A_CORE: f64 = 0.8;

/// summary.json's `harness_cpu`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HarnessCpuSummary {
    /// CPU seconds ackbench used from the first reading to the last.
    pub cpu_s: f64,
    /// Wall seconds between them.
    pub wall_s: f64,
    /// `cpu_s / wall_s`: cores' worth (1.0 = one core busy all the time).
    pub share: f64,
    /// The largest share over one interval between readings.
    pub peak_share: f64,
}

/// The whole run's figures; `None` with fewer than two readings.
pub fn summarise(h: &HarnessCpu) -> Option<HarnessCpuSummary> {
    let (first, last) = (h.readings.first()?, h.readings.last()?);
    if last.0 <= first.0 {
        return None;
    }
    let wall_s = wall(h, first.0, last.0);
    let cpu_s = last.1 - first.1;
    let peak = h
        .readings
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].1 - w[0].1) / wall(h, w[0].0, w[1].0))
        .fold(0.0, f64::max);
    Some(HarnessCpuSummary {
        cpu_s: round3(cpu_s),
        wall_s: round3(wall_s),
        share: round3(cpu_s / wall_s),
        peak_share: round3(peak),
    })
}

/// The share between profile instants `from` and `to`, read at the last reading at or before
/// each; `None` when they are the same reading.
pub fn share_between(h: &HarnessCpu, from: Nanos, to: Nanos) -> Option<f64> {
    let at = |t: Nanos| {
        let i = h.readings.partition_point(|r| r.0 <= t);
        i.checked_sub(1).map(|i| h.readings[i])
    };
    let (a, b) = (at(from)?, at(to)?);
    (b.0 > a.0).then(|| round3((b.1 - a.1) / wall(h, a.0, b.0)))
}

/// Wall seconds between two profile instants.
fn wall(h: &HarnessCpu, from: Nanos, to: Nanos) -> f64 {
    (to - from) as f64 / 1e9 * h.time_scale
}

fn round3(x: f64) -> f64 {
    (x * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    /// Readings every 10 profile seconds at time scale 0.1: one wall second apart.
    fn cpu() -> HarnessCpu {
        HarnessCpu {
            readings: vec![(0, 0.0), (10 * S, 0.25), (20 * S, 1.15), (30 * S, 1.5)],
            time_scale: 0.1,
        }
    }

    #[test]
    fn the_share_is_cpu_over_wall_time() {
        // 1.5 CPU seconds over 3 wall seconds: half a core; the busiest second 0.9 s.
        assert_eq!(
            summarise(&cpu()),
            Some(HarnessCpuSummary {
                cpu_s: 1.5,
                wall_s: 3.0,
                share: 0.5,
                peak_share: 0.9
            })
        );
        // One reading says nothing.
        let one = HarnessCpu {
            readings: vec![(0, 0.0)],
            time_scale: 1.0,
        };
        assert_eq!(summarise(&one), None);
    }

    #[test]
    fn a_span_reads_the_readings_before_its_ends() {
        // 10 s to 30 s of profile time: (1.5 - 0.25) CPU s over 2 wall s = 0.625.
        assert_eq!(share_between(&cpu(), 10 * S, 30 * S), Some(0.625));
        // 15 s reads the reading at 10 s, 25 s the one at 20 s: 0.9 over one wall second.
        assert_eq!(share_between(&cpu(), 15 * S, 25 * S), Some(0.9));
        // Both ends within one interval: no span.
        assert_eq!(share_between(&cpu(), 11 * S, 12 * S), None);
    }
}
