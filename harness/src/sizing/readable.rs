//! Readable durations: a lease, a heartbeat or an alert threshold is recommended as a value a
//! person would write in a config (`45s`, `2m`, `15m`), never `50.012s`.

use std::time::Duration;

/// The readable values, in seconds, ascending: whole seconds up to 6 s, then steps of at most
/// 1.5x up to SQS's 12 h maximum.
pub const LADDER_S: &[u64] = &[
    1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 45, 50, 60, 90, 120, 180, 240, 300, 360, 480,
    600, 720, 900, 1200, 1500, 1800, 2400, 2700, 3600, 5400, 7200, 10800, 14400, 18000, 21600,
    28800, 36000, 43200,
];

/// The smallest readable value at or above `d` (at least 1 s); `None` above 12 h.
pub fn round_up(d: Duration) -> Option<Duration> {
    LADDER_S
        .iter()
        .map(|&s| Duration::from_secs(s))
        .find(|&step| step >= d)
}

/// The readable values from `from` to `to`, both included.
pub fn between(from: Duration, to: Duration) -> Vec<Duration> {
    LADDER_S
        .iter()
        .map(|&s| Duration::from_secs(s))
        .filter(|&step| step >= from && step <= to)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    #[test]
    fn rounds_up_to_the_next_readable_value() {
        assert_eq!(round_up(s(0.001)), Some(s(1.0)));
        assert_eq!(round_up(s(1.0)), Some(s(1.0)));
        assert_eq!(round_up(s(50.01)), Some(s(60.0)));
        assert_eq!(round_up(s(50.0)), Some(s(50.0)));
        assert_eq!(round_up(s(61.0)), Some(s(90.0)));
        assert_eq!(round_up(s(43_200.0)), Some(s(43_200.0)));
        assert_eq!(round_up(s(43_200.5)), None);
    }

    #[test]
    fn the_ladder_climbs_by_at_most_half_a_step() {
        assert!(LADDER_S.windows(2).all(|w| w[0] < w[1]));
        assert!(LADDER_S
            .windows(2)
            .all(|w| w[1] as f64 <= 1.5 * w[0] as f64 || w[1] <= 6));
        assert_eq!(between(s(20.0), s(60.0)).len(), 7);
    }
}
