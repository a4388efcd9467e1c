//! Latency distributions, sampled from the run's seed.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};

use crate::profile::LatencyDist;
use crate::record::{nanos, Nanos, Seq};

/// z of the 99th percentile of the standard normal distribution.
const Z99: f64 = 2.326_347_874_040_841;

/// A latency distribution ready to sample (lognormal parameters precomputed).
#[derive(Debug, Clone)]
pub enum Latency {
    Fixed(Nanos),
    Uniform {
        min: Nanos,
        max: Nanos,
    },
    LogNormal(LogNormal<f64>),
    PerMessage(Vec<Nanos>),
    Mix {
        cumulative: Vec<f64>,
        parts: Vec<Latency>,
    },
}

impl Latency {
    /// Builds a sampler; the distribution was validated when the profile was resolved.
    pub fn new(d: &LatencyDist) -> Latency {
        match d {
            LatencyDist::Fixed(v) => Latency::Fixed(nanos(*v)),
            LatencyDist::Uniform { min, max } => Latency::Uniform {
                min: nanos(*min),
                max: nanos(*max),
            },
            LatencyDist::LogNormal { median, p99 } => {
                // ln X ~ N(mu, sigma): the median is e^mu, the p99 is e^(mu + z99 sigma).
                let mu = (nanos(*median) as f64).ln();
                let sigma = ((nanos(*p99) as f64).ln() - mu).max(0.0) / Z99;
                Latency::LogNormal(
                    LogNormal::new(mu, sigma).expect("validated: finite mu, sigma >= 0"),
                )
            }
            LatencyDist::PerMessage(v) => {
                Latency::PerMessage(v.iter().map(|d| nanos(*d)).collect())
            }
            LatencyDist::Mix(parts) => {
                let total: f64 = parts.iter().map(|(w, _)| w).sum();
                let mut acc = 0.0;
                let cumulative = parts
                    .iter()
                    .map(|(w, _)| {
                        acc += w / total;
                        acc
                    })
                    .collect();
                Latency::Mix {
                    cumulative,
                    parts: parts.iter().map(|(_, d)| Latency::new(d)).collect(),
                }
            }
        }
    }

    /// One latency for a call about message `seq` (used by `per_message`).
    pub fn sample(&self, rng: &mut ChaCha8Rng, seq: Option<Seq>) -> Nanos {
        match self {
            Latency::Fixed(v) => *v,
            Latency::Uniform { min, max } => {
                if min == max {
                    *min
                } else {
                    rng.random_range(*min..=*max)
                }
            }
            Latency::LogNormal(d) => d.sample(rng).round().clamp(0.0, u64::MAX as f64) as Nanos,
            Latency::PerMessage(v) => {
                let i = seq.map_or(0, |s| (s as usize - 1) % v.len());
                v[i]
            }
            Latency::Mix { cumulative, parts } => {
                let u: f64 = rng.random();
                let i = cumulative
                    .iter()
                    .position(|&c| u < c)
                    .unwrap_or(parts.len() - 1);
                parts[i].sample(rng, seq)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::seed;

    const MS: u64 = 1_000_000;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn lognormal_hits_its_median_and_p99() {
        let l = Latency::new(&LatencyDist::LogNormal {
            median: ms(240),
            p99: ms(900),
        });
        let mut rng = seed::stream(1, "t");
        let mut v: Vec<u64> = (0..200_000).map(|_| l.sample(&mut rng, None)).collect();
        v.sort_unstable();
        let median = v[v.len() / 2] as f64 / MS as f64;
        let p99 = v[v.len() * 99 / 100] as f64 / MS as f64;
        assert!((median - 240.0).abs() < 5.0, "median {median}");
        assert!((p99 - 900.0).abs() < 30.0, "p99 {p99}");
    }

    #[test]
    fn uniform_stays_in_bounds_and_fixed_is_fixed() {
        let l = Latency::new(&LatencyDist::Uniform {
            min: ms(31_000),
            max: ms(40_000),
        });
        let mut rng = seed::stream(1, "t");
        assert!((0..10_000)
            .map(|_| l.sample(&mut rng, None))
            .all(|x| (31_000 * MS..=40_000 * MS).contains(&x)));
        assert_eq!(
            Latency::new(&LatencyDist::Fixed(ms(7))).sample(&mut rng, None),
            7 * MS
        );
    }

    #[test]
    fn per_message_replays_by_seq_and_wraps() {
        let l = Latency::new(&LatencyDist::PerMessage(vec![ms(1), ms(2), ms(3)]));
        let mut rng = seed::stream(1, "t");
        let got: Vec<u64> = [1, 2, 3, 4, 2]
            .iter()
            .map(|&s| l.sample(&mut rng, Some(s)) / MS)
            .collect();
        assert_eq!(got, vec![1, 2, 3, 1, 2]);
    }

    #[test]
    fn mix_follows_its_weights() {
        let l = Latency::new(&LatencyDist::Mix(vec![
            (99.0, LatencyDist::Fixed(ms(1))),
            (1.0, LatencyDist::Fixed(ms(1000))),
        ]));
        let mut rng = seed::stream(3, "t");
        let slow = (0..100_000)
            .filter(|_| l.sample(&mut rng, None) == 1000 * MS)
            .count();
        assert!((800..1200).contains(&slow), "slow share {slow}");
    }
}
