//! What the provider does with one call: its latency and whether it fails, given the instant the
//! call arrives (timed phases replace the latency and may add errors).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::latency::Latency;
use crate::profile::{EffectAt, ErrorSpec, ProviderSpec};
use crate::record::{nanos, CallOutcome, Nanos, Seq};
use crate::seed;

/// The provider's answer to one call, decided when the call arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPlan {
    /// How long until the answer leaves the provider; `None`: it never answers (a hang).
    pub latency: Option<Nanos>,
    /// `Accepted` or `Error(status)`.
    pub outcome: CallOutcome,
}

#[derive(Debug, Clone)]
struct PhaseModel {
    from: Nanos,
    to: Nanos,
    latency: Option<Latency>,
    errors: Option<ErrorSpec>,
    hang: Option<f64>,
}

/// The provider's latency and error model.
#[derive(Debug, Clone)]
pub struct ProviderModel {
    pub effect_at: EffectAt,
    base: Latency,
    phases: Vec<PhaseModel>,
    rng: ChaCha8Rng,
}

impl ProviderModel {
    pub fn new(spec: &ProviderSpec, seed: u64) -> ProviderModel {
        ProviderModel {
            effect_at: spec.effect_at,
            base: Latency::new(&spec.latency),
            phases: spec
                .phases
                .iter()
                .map(|p| PhaseModel {
                    from: nanos(p.from),
                    to: nanos(p.to),
                    latency: p.latency.as_ref().map(Latency::new),
                    errors: p.errors.clone(),
                    hang: p.hang,
                })
                .collect(),
            rng: seed::stream(seed, "provider"),
        }
    }

    /// Plans a call about message `seq` arriving at `now`. The first phase covering `now`
    /// (from <= now < to) applies.
    pub fn plan(&mut self, now: Nanos, seq: Option<Seq>) -> CallPlan {
        let phase = self.phases.iter().find(|p| p.from <= now && now < p.to);
        let latency = phase.and_then(|p| p.latency.as_ref()).unwrap_or(&self.base);
        let latency = latency.sample(&mut self.rng, seq);
        let outcome = match phase.and_then(|p| p.errors.as_ref()) {
            Some(e) if self.rng.random::<f64>() < e.rate => CallOutcome::Error(e.status),
            _ => CallOutcome::Accepted,
        };
        let hangs = phase
            .and_then(|p| p.hang)
            .is_some_and(|h| self.rng.random::<f64>() < h);
        CallPlan {
            latency: (!hangs).then_some(latency),
            outcome,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::profile::{LatencyDist, Phase};

    const S: u64 = 1_000_000_000;

    fn spec() -> ProviderSpec {
        ProviderSpec {
            key: Default::default(),
            effect_at: EffectAt::Request,
            latency: LatencyDist::Fixed(Duration::from_millis(240)),
            phases: vec![
                Phase {
                    from: Duration::from_secs(10),
                    to: Duration::from_secs(20),
                    latency: Some(LatencyDist::Fixed(Duration::from_secs(35))),
                    errors: None,
                    hang: None,
                },
                Phase {
                    from: Duration::from_secs(15),
                    to: Duration::from_secs(30),
                    latency: None,
                    errors: Some(ErrorSpec {
                        status: 503,
                        rate: 1.0,
                    }),
                    hang: None,
                },
                Phase {
                    from: Duration::from_secs(40),
                    to: Duration::from_secs(50),
                    latency: None,
                    errors: None,
                    hang: Some(1.0),
                },
            ],
        }
    }

    #[test]
    fn phases_apply_inside_their_window_first_match_wins() {
        let mut m = ProviderModel::new(&spec(), 1);
        assert_eq!(
            m.plan(0, None),
            CallPlan {
                latency: Some(240_000_000),
                outcome: CallOutcome::Accepted
            }
        );
        assert_eq!(m.plan(10 * S, None).latency, Some(35 * S));
        assert_eq!(
            m.plan(19 * S, None).outcome,
            CallOutcome::Accepted,
            "first phase wins"
        );
        assert_eq!(
            m.plan(20 * S, None),
            CallPlan {
                latency: Some(240_000_000),
                outcome: CallOutcome::Error(503)
            }
        );
        assert_eq!(
            m.plan(30 * S, None).outcome,
            CallOutcome::Accepted,
            "`to` is exclusive"
        );
        assert_eq!(m.plan(45 * S, None).latency, None, "a hang never answers");
    }
}
