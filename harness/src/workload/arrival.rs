//! Arrival processes: `every`, `rate_per_s` (Poisson or uniform gaps), explicit `at` instants,
//! a `ramp` of uniform rates in steps, and none at all (`Closed`: an ingress load's users pace
//! themselves).
//!
//! A generated process is not stored: [`Arrivals`] keeps how to make it (its period, or its mean
//! gap and the `workload` stream where its gaps start) and the number of arrivals, and a
//! [`Cursor`] makes the instants one after the other, exactly as they would be drawn all at
//! once. Only `at` lists keep their instants.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::profile::{Arrival, Ramp, RateProcess};
use crate::record::{nanos, Nanos};

/// A rate process keeps its instant every `MARK_EVERY` arrivals, so that one arrival can be
/// found without walking from the first (8 bytes per 1024 messages).
const MARK_EVERY: usize = 1024;

/// One `f64` draw (`random::<f64>()`, one `u64`) takes two 32-bit words of a ChaCha stream.
pub(super) const WORDS_PER_DRAW: u128 = 2;

/// The publish instants of a plan, ascending.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Arrivals {
    len: usize,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    /// `arrival: at`, kept as listed (sorted).
    Listed(Vec<Nanos>),
    /// Arrival `i` at `i * period`.
    Every { period: Nanos },
    /// All at 0 (`Closed`).
    AtZero,
    /// A ramp: step `k` from `k * hold`, its `j`-th publish at [`Ramp::offset`]`(k, j)`;
    /// `firsts[k]` is the index of step `k`'s first arrival (one `usize` per step).
    Ramp { ramp: Ramp, firsts: Vec<usize> },
    /// Gaps of `mean_gap` (uniform), or exponential with that mean drawn from `gaps` (Poisson).
    Rate {
        mean_gap: f64,
        /// The stream at the first gap's draw (Poisson); `None` for uniform gaps.
        gaps: Option<Box<ChaCha8Rng>>,
        /// The unrounded instant of arrival `j * MARK_EVERY`, for every `j`.
        marks: Vec<f64>,
    },
}

impl Arrivals {
    /// The instants in `[0, duration)`, at most `cap` of them. Takes from `rng` exactly the draws
    /// making them all at once takes (for a Poisson process, one gap per arrival and the gap
    /// after the last that ends the window), so what follows on `rng` is unchanged.
    pub fn new(arrival: &Arrival, duration: Nanos, cap: u64, rng: &mut ChaCha8Rng) -> Arrivals {
        match arrival {
            Arrival::Every(period) => {
                let period = nanos(*period).max(1);
                // Instants 0, period, 2 * period, ... below `duration`: ceil(duration / period).
                let len = duration.div_ceil(period).min(cap);
                Arrivals {
                    len: usize::try_from(len).unwrap_or(usize::MAX),
                    kind: Kind::Every { period },
                }
            }
            Arrival::Rate {
                rate_per_s,
                process,
            } => {
                let mean_gap = 1e9 / rate_per_s;
                let gaps = (*process == RateProcess::Poisson).then(|| Box::new(rng.clone()));
                // Walk the process once, counting and marking, on the caller's stream itself.
                let mut walk = Walk::start(mean_gap, gaps.as_deref().cloned());
                let mut marks = Vec::new();
                let mut len: usize = 0;
                while (walk.t as Nanos) < duration && (len as u64) < cap {
                    if len.is_multiple_of(MARK_EVERY) {
                        marks.push(walk.t);
                    }
                    len += 1;
                    walk.step();
                }
                if let Some(after) = walk.gaps {
                    *rng = after;
                }
                Arrivals {
                    len,
                    kind: Kind::Rate {
                        mean_gap,
                        gaps,
                        marks,
                    },
                }
            }
            Arrival::At(times) => {
                let mut out: Vec<Nanos> = times
                    .iter()
                    .map(|d| nanos(*d))
                    .filter(|&t| t < duration)
                    .take(usize::try_from(cap).unwrap_or(usize::MAX))
                    .collect();
                out.sort_unstable();
                Arrivals {
                    len: out.len(),
                    kind: Kind::Listed(out),
                }
            }
            // Step by step, each cut at `duration`; no draw from `rng`.
            Arrival::Ramp(ramp) => {
                let hold = ramp.hold_nanos();
                let mut firsts = Vec::with_capacity(ramp.steps as usize);
                let mut len: u64 = 0;
                for k in 0..ramp.steps {
                    let start = hold.saturating_mul(u64::from(k));
                    if start >= duration || len >= cap {
                        break;
                    }
                    firsts.push(len as usize);
                    let n = ramp.publishes_below(k, hold.min(duration - start));
                    len = len.saturating_add(n).min(cap);
                }
                Arrivals {
                    len: usize::try_from(len).unwrap_or(usize::MAX),
                    kind: Kind::Ramp {
                        ramp: ramp.clone(),
                        firsts,
                    },
                }
            }
            // All due at once; `cap` is finite (resolve requires `count` or `keys`).
            Arrival::Closed => Arrivals {
                len: cap.min(u32::MAX as u64) as usize,
                kind: Kind::AtZero,
            },
        }
    }

    /// An arrival process made of these instants, ascending.
    #[cfg(test)]
    pub fn listed(at: Vec<Nanos>) -> Arrivals {
        Arrivals {
            len: at.len(),
            kind: Kind::Listed(at),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// The instant of arrival `i` (0-based): at once for every kind but a rate, whose walk
    /// starts from the nearest mark before `i` (at most 1023 gaps).
    #[cfg_attr(not(feature = "live"), allow(dead_code))]
    pub fn at(&self, i: usize) -> Option<Nanos> {
        if i >= self.len {
            return None;
        }
        Some(match &self.kind {
            Kind::Listed(at) => at[i],
            Kind::Every { period } => i as Nanos * period,
            Kind::AtZero => 0,
            Kind::Ramp { ramp, firsts } => ramp_at(ramp, firsts, i),
            Kind::Rate {
                mean_gap,
                gaps,
                marks,
            } => {
                let mark = i / MARK_EVERY;
                let from = mark * MARK_EVERY;
                let mut walk = Walk {
                    t: marks[mark],
                    mean_gap: *mean_gap,
                    // Gap 0 leads to arrival 0; the gap after arrival `from` is number `from + 1`.
                    gaps: gaps.as_ref().map(|g| seek(g, from as u128 + 1)),
                };
                for _ in from..i {
                    walk.step();
                }
                walk.t as Nanos
            }
        })
    }

    /// A cursor at the first arrival.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            next: 0,
            walk: match &self.kind {
                Kind::Rate { mean_gap, gaps, .. } => {
                    Some(Walk::start(*mean_gap, gaps.as_deref().cloned()))
                }
                _ => None,
            },
        }
    }
}

/// Reads the arrivals in order, each in constant time and memory.
#[derive(Debug, Clone)]
pub(super) struct Cursor {
    /// The arrival it is at (0-based).
    next: usize,
    /// A rate process, at arrival `next`.
    walk: Option<Walk>,
}

impl Cursor {
    /// The instant of the arrival it is at; `None` past the last.
    pub fn at(&self, a: &Arrivals) -> Option<Nanos> {
        if self.next >= a.len {
            return None;
        }
        Some(match (&a.kind, &self.walk) {
            (Kind::Listed(at), _) => at[self.next],
            (Kind::Every { period }, _) => self.next as Nanos * period,
            (Kind::Rate { .. }, Some(walk)) => walk.t as Nanos,
            (Kind::Ramp { ramp, firsts }, _) => ramp_at(ramp, firsts, self.next),
            _ => 0,
        })
    }

    /// Moves to the next arrival.
    pub fn step(&mut self, a: &Arrivals) {
        if self.next >= a.len {
            return;
        }
        self.next += 1;
        // No gap is drawn past the last arrival: nothing reads it.
        if self.next < a.len {
            if let Some(walk) = &mut self.walk {
                walk.step();
            }
        }
    }
}

/// The instant of arrival `i` of a ramp whose steps start at arrivals `firsts`.
fn ramp_at(ramp: &Ramp, firsts: &[usize], i: usize) -> Nanos {
    // The last step starting at or before `i`.
    let k = firsts.partition_point(|&f| f <= i).saturating_sub(1);
    let start = ramp.hold_nanos().saturating_mul(k as u64);
    start + ramp.offset(k as u32, (i - firsts[k]) as u64)
}

/// A rate process walked gap by gap, as it is drawn all at once.
#[derive(Debug, Clone)]
struct Walk {
    /// The current arrival's instant, unrounded.
    t: f64,
    mean_gap: f64,
    gaps: Option<ChaCha8Rng>,
}

impl Walk {
    /// At the first arrival: 0 for uniform gaps, after a first gap for a Poisson process.
    fn start(mean_gap: f64, gaps: Option<ChaCha8Rng>) -> Walk {
        let mut walk = Walk {
            t: 0.0,
            mean_gap,
            gaps,
        };
        if let Some(rng) = &mut walk.gaps {
            walk.t += exp_gap(rng, mean_gap);
        }
        walk
    }

    fn step(&mut self) {
        self.t += match &mut self.gaps {
            Some(rng) => exp_gap(rng, self.mean_gap),
            None => self.mean_gap,
        };
    }
}

/// `start` moved on by `draws` `f64` draws.
pub(super) fn seek(start: &ChaCha8Rng, draws: u128) -> ChaCha8Rng {
    let mut rng = start.clone();
    rng.set_word_pos(start.get_word_pos() + draws * WORDS_PER_DRAW);
    rng
}

/// An exponential gap with mean `mean` (inverse transform of a uniform draw).
fn exp_gap(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    let u: f64 = rng.random();
    -mean * (1.0 - u).ln()
}

/// Publish instants in `[0, duration)`, at most `cap` of them, ascending, all at once: what
/// [`Arrivals`] makes one by one.
#[cfg(test)]
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
        Arrival::Ramp(ramp) => {
            // Every publish of every step, in order, until the cap or `duration`.
            let hold = ramp.hold_nanos();
            'steps: for k in 0..ramp.steps {
                let start = hold * u64::from(k);
                for j in 0.. {
                    let t = start + ramp.offset(k, j);
                    if t >= start + hold {
                        break;
                    }
                    if t >= duration || out.len() as u64 >= cap {
                        break 'steps;
                    }
                    out.push(t);
                }
            }
        }
        Arrival::Closed => out.resize(cap.min(u32::MAX as u64) as usize, 0),
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::seed;

    const S: u64 = 1_000_000_000;

    /// Every instant of `a`, through a cursor.
    fn walked(a: &Arrivals) -> Vec<Nanos> {
        let mut c = a.cursor();
        let mut out = Vec::new();
        while let Some(t) = c.at(a) {
            out.push(t);
            c.step(a);
        }
        out
    }

    #[test]
    fn every_fills_the_window_and_respects_the_cap() {
        let mut rng = seed::stream(1, "w");
        let a = Arrival::Every(Duration::from_secs(50));
        let t = arrival_times(&a, 5400 * S, u64::MAX, &mut rng);
        assert_eq!(t.len(), 108);
        assert_eq!((t[0], t[107]), (0, 5350 * S));
        assert_eq!(arrival_times(&a, 5400 * S, 10, &mut rng).len(), 10);
        // Lazily: 5400 s / 50 s = 108 instants, 0 to 107 * 50 = 5350 s; 10 with the cap.
        let lazy = Arrivals::new(&a, 5400 * S, u64::MAX, &mut rng);
        assert_eq!(lazy.len(), 108);
        assert_eq!(
            (lazy.at(0), lazy.at(107), lazy.at(108)),
            (Some(0), Some(5350 * S), None)
        );
        assert_eq!(walked(&lazy), t);
        assert_eq!(Arrivals::new(&a, 5400 * S, 10, &mut rng).len(), 10);
        // A window that is not a multiple of the period: 5401 s has 109 instants (the last at
        // 5400 s); 5350 s exactly has 107 (5350 s itself is outside).
        assert_eq!(Arrivals::new(&a, 5401 * S, u64::MAX, &mut rng).len(), 109);
        assert_eq!(Arrivals::new(&a, 5350 * S, u64::MAX, &mut rng).len(), 107);
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
        let lazy = Arrivals::new(&u, S, u64::MAX, &mut rng);
        assert_eq!(walked(&lazy), t);
    }

    #[test]
    fn a_poisson_process_takes_one_draw_per_arrival_and_one_more() {
        // 2,000 arrivals capped by `count`: the first gap, one gap after each arrival (the last
        // one's ends nothing but is drawn), so 2,001 draws of two words each: 4,002 words.
        let p = Arrival::Rate {
            rate_per_s: 10.0,
            process: RateProcess::Poisson,
        };
        let mut rng = seed::stream(3, "workload");
        let lazy = Arrivals::new(&p, u64::MAX, 2_000, &mut rng);
        assert_eq!(lazy.len(), 2_000);
        assert_eq!(rng.get_word_pos(), 4_002);
        let mut eager_rng = seed::stream(3, "workload");
        let eager = arrival_times(&p, u64::MAX, 2_000, &mut eager_rng);
        assert_eq!(eager_rng, rng);
        assert_eq!(walked(&lazy), eager);
        // Kept: the instants of arrivals 0 and 1024 (ceil(2000 / 1024) = 2 marks, 16 bytes).
        let Kind::Rate { marks, .. } = &lazy.kind else {
            panic!("a rate");
        };
        assert_eq!(marks.len(), 2);
        assert_eq!(
            (marks[0] as Nanos, marks[1] as Nanos),
            (eager[0], eager[1024])
        );
        // Arrival 1500 from mark 1 (arrival 1024) and 476 gaps; past the last, none.
        assert_eq!(lazy.at(1_500), Some(eager[1_500]));
        assert_eq!(lazy.at(2_000), None);
    }

    #[test]
    fn a_ramp_holds_each_rate_for_its_step() {
        let mut rng = seed::stream(1, "w");
        let before = rng.clone();
        // 2/s then 4/s, 1 s each: 0, 0.5 s, then 1 s, 1.25 s, 1.5 s, 1.75 s.
        let a = Arrival::Ramp(Ramp {
            from_per_s: 2.0,
            step_per_s: 2.0,
            steps: 2,
            hold: Duration::from_secs(1),
        });
        let want = vec![0, S / 2, S, S + S / 4, S + S / 2, S + 3 * S / 4];
        assert_eq!(arrival_times(&a, 10 * S, u64::MAX, &mut rng), want);
        let lazy = Arrivals::new(&a, 10 * S, u64::MAX, &mut rng);
        assert_eq!(lazy.len(), 6);
        assert_eq!(walked(&lazy), want);
        assert_eq!(
            (lazy.at(1), lazy.at(2), lazy.at(5)),
            (Some(S / 2), Some(S), want.get(5).copied())
        );
        assert_eq!(lazy.at(6), None);
        // Nothing drawn: the workload stream is where it was.
        assert_eq!(rng, before);
        // A cap of 3: 0, 0.5 s, 1 s; a window of 1.3 s: the first four.
        assert_eq!(walked(&Arrivals::new(&a, 10 * S, 3, &mut rng)), want[..3]);
        assert_eq!(
            walked(&Arrivals::new(&a, S + 3 * S / 10, u64::MAX, &mut rng)),
            want[..4]
        );
        assert_eq!(
            arrival_times(&a, S + 3 * S / 10, u64::MAX, &mut rng),
            want[..4]
        );
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
        assert_eq!(
            walked(&Arrivals::new(&a, 10 * S, u64::MAX, &mut rng)),
            vec![0, 3 * S]
        );
    }
}
