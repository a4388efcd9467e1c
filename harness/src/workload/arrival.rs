//! Arrival processes: `every`, `rate_per_s` (Poisson or uniform gaps), explicit `at` instants,
//! and none at all (`Closed`: an ingress load's users pace themselves).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::profile::{Arrival, RateProcess};
use crate::record::{nanos, Nanos};

/// Publish instants in `[0, duration)`, at most `cap` of them, ascending.
pub fn arrival_times(
    arrival: &Arrival,
    duration: Nanos,
    cap: u64,
    rng: &mut ChaCha8Rng,
) -> Vec<Nanos> {
    let mut out = Vec::new();
    match arrival {
        Arrival::Every(period) => {
            let period = nanos(*period).max(1);
            let mut t = 0;
            while t < duration && (out.len() as u64) < cap {
                out.push(t);
                t += period;
            }
        }
        Arrival::Rate {
            rate_per_s,
            process,
        } => {
            let mean_gap = 1e9 / rate_per_s;
            let mut t = 0.0f64;
            if *process == RateProcess::Poisson {
                t += exp_gap(rng, mean_gap);
            }
            while (t as Nanos) < duration && (out.len() as u64) < cap {
                out.push(t as Nanos);
                t += match process {
                    RateProcess::Poisson => exp_gap(rng, mean_gap),
                    RateProcess::Uniform => mean_gap,
                };
            }
        }
        Arrival::At(times) => {
            out.extend(
                times
                    .iter()
                    .map(|d| nanos(*d))
                    .filter(|&t| t < duration)
                    .take(cap as usize),
            );
            out.sort_unstable();
        }
        // All due at once; `cap` is finite (resolve requires `count` or `keys`).
        Arrival::Closed => out.resize(cap.min(u32::MAX as u64) as usize, 0),
    }
    out
}

/// An exponential gap with mean `mean` (inverse transform of a uniform draw).
fn exp_gap(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    let u: f64 = rng.random();
    -mean * (1.0 - u).ln()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::seed;

    const S: u64 = 1_000_000_000;

    #[test]
    fn every_fills_the_window_and_respects_the_cap() {
        let mut rng = seed::stream(1, "w");
        let a = Arrival::Every(Duration::from_secs(50));
        let t = arrival_times(&a, 5400 * S, u64::MAX, &mut rng);
        assert_eq!(t.len(), 108);
        assert_eq!((t[0], t[107]), (0, 5350 * S));
        assert_eq!(arrival_times(&a, 5400 * S, 10, &mut rng).len(), 10);
    }

    #[test]
    fn poisson_rate_is_about_right_and_uniform_is_exact() {
        let mut rng = seed::stream(1, "w");
        let p = Arrival::Rate {
            rate_per_s: 10.0,
            process: RateProcess::Poisson,
        };
        let n = arrival_times(&p, 1000 * S, u64::MAX, &mut rng).len();
        assert!((9_500..10_500).contains(&n), "{n}");
        let u = Arrival::Rate {
            rate_per_s: 4.0,
            process: RateProcess::Uniform,
        };
        let t = arrival_times(&u, S, u64::MAX, &mut rng);
        assert_eq!(t, vec![0, 250_000_000, 500_000_000, 750_000_000]);
    }

    #[test]
    fn explicit_instants_are_kept_inside_the_window() {
        let mut rng = seed::stream(1, "w");
        let a = Arrival::At(vec![
            Duration::from_secs(3),
            Duration::ZERO,
            Duration::from_secs(99),
        ]);
        assert_eq!(
            arrival_times(&a, 10 * S, u64::MAX, &mut rng),
            vec![0, 3 * S]
        );
    }
}
