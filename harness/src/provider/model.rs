//! What the provider does with one call: its latency, whether it fails, and whether it does the
//! call's work (its effect), given the call as it arrives (phases select calls by time window,
//! key, attempt and delivery; they replace the latency and may add errors and hangs).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::latency::Latency;
use super::select::{Attempts, CallFacts, Selection};
use crate::profile::{EffectAt, ErrorAnswer, ErrorSpec, HangSpec, ProviderSpec};
use crate::record::{CallOutcome, Nanos};
use crate::seed;

/// The provider's answer to one call, decided when the call arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallPlan {
    /// How long until the answer leaves the provider; `None`: it never answers (a hang).
    pub latency: Option<Nanos>,
    /// How long until the answer is ready, whether or not it leaves: when a hung call whose
    /// effect comes with the answer (`effect_at: response`) has it.
    pub ready: Nanos,
    /// `Accepted`, `Error(status)` or `Reset` (the connection closed without an answer).
    pub outcome: CallOutcome,
    /// Whether the provider does the call's work: its effect happens (at `effect_at`) however
    /// it answers. An accepted call, or an error or hang after the effect.
    pub works: bool,
}

#[derive(Debug, Clone)]
struct PhaseModel {
    selection: Selection,
    latency: Option<Latency>,
    errors: Option<ErrorSpec>,
    hang: Option<HangSpec>,
}

/// The provider's latency and error model.
#[derive(Debug, Clone)]
pub struct ProviderModel {
    pub effect_at: EffectAt,
    base: Latency,
    phases: Vec<PhaseModel>,
    attempts: Attempts,
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
                    selection: Selection::of(p),
                    latency: p.latency.as_ref().map(Latency::new),
                    errors: p.errors.clone(),
                    hang: p.hang.clone(),
                })
                .collect(),
            attempts: Attempts::for_phases(&spec.phases),
            rng: seed::stream(seed, "provider"),
        }
    }

    /// Plans `call`. The first phase selecting it applies (its window holds the call's
    /// arrival, from <= at < to, and each of its selectors matches). Draws from the seed only
    /// what the phase has: the latency, then an error, then a hang.
    pub fn plan(&mut self, call: &CallFacts<'_>) -> CallPlan {
        let attempt = self.attempts.count(call);
        let phase = self
            .phases
            .iter()
            .find(|p| p.selection.selects(call, attempt));
        let latency = phase.and_then(|p| p.latency.as_ref()).unwrap_or(&self.base);
        let latency = latency.sample(&mut self.rng, call.seq);
        let error = phase
            .and_then(|p| p.errors.as_ref())
            .filter(|e| self.rng.random::<f64>() < e.rate);
        let hang = phase
            .and_then(|p| p.hang.as_ref())
            .filter(|h| self.rng.random::<f64>() < h.rate);
        let outcome = match error.map(|e| e.answer) {
            Some(ErrorAnswer::Status(s)) => CallOutcome::Error(s),
            Some(ErrorAnswer::Reset) => CallOutcome::Reset,
            None => CallOutcome::Accepted,
        };
        CallPlan {
            latency: hang.is_none().then_some(latency),
            ready: latency,
            outcome,
            works: error.is_none_or(|e| e.after_effect) && hang.is_none_or(|h| h.after_effect),
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
                    to: Some(Duration::from_secs(20)),
                    latency: Some(LatencyDist::Fixed(Duration::from_secs(35))),
                    ..Phase::default()
                },
                Phase {
                    from: Duration::from_secs(15),
                    to: Some(Duration::from_secs(30)),
                    errors: Some(ErrorSpec {
                        answer: ErrorAnswer::Status(503),
                        rate: 1.0,
                        after_effect: false,
                    }),
                    ..Phase::default()
                },
                Phase {
                    from: Duration::from_secs(40),
                    to: Some(Duration::from_secs(50)),
                    hang: Some(HangSpec {
                        rate: 1.0,
                        after_effect: true,
                    }),
                    ..Phase::default()
                },
            ],
        }
    }

    fn at(t: Nanos) -> CallFacts<'static> {
        CallFacts {
            at: t,
            seq: Some(1),
            key: "msg-1",
            delivery: 1,
        }
    }

    #[test]
    fn phases_apply_inside_their_window_first_match_wins() {
        let mut m = ProviderModel::new(&spec(), 1);
        assert_eq!(
            m.plan(&at(0)),
            CallPlan {
                latency: Some(240_000_000),
                ready: 240_000_000,
                outcome: CallOutcome::Accepted,
                works: true,
            }
        );
        assert_eq!(m.plan(&at(10 * S)).latency, Some(35 * S));
        assert_eq!(
            m.plan(&at(19 * S)).outcome,
            CallOutcome::Accepted,
            "first phase wins"
        );
        assert_eq!(
            m.plan(&at(20 * S)),
            CallPlan {
                latency: Some(240_000_000),
                ready: 240_000_000,
                outcome: CallOutcome::Error(503),
                works: false,
            }
        );
        assert_eq!(
            m.plan(&at(30 * S)).outcome,
            CallOutcome::Accepted,
            "`to` is exclusive"
        );
        let hung = m.plan(&at(45 * S));
        assert_eq!(hung.latency, None, "a hang never answers");
        assert_eq!(
            (hung.ready, hung.works),
            (240_000_000, true),
            "its work done (effect_at: request) when its answer would have been ready"
        );
    }

    #[test]
    fn an_error_or_hang_after_the_effect_does_the_work() {
        // msg-3's first call: a 503 after its effect; its second: a reset after its effect;
        // its third: a reset instead of the work; its fourth: a hang after its effect; its
        // fifth: accepted (no phase selects it).
        let error = |answer, after_effect| ErrorSpec {
            answer,
            rate: 1.0,
            after_effect,
        };
        let on = |attempt: u32| Phase {
            keys: Some(vec!["msg-3".into()]),
            attempts: Some(vec![attempt]),
            ..Phase::default()
        };
        let spec = ProviderSpec {
            phases: vec![
                Phase {
                    errors: Some(error(ErrorAnswer::Status(503), true)),
                    ..on(1)
                },
                Phase {
                    errors: Some(error(ErrorAnswer::Reset, true)),
                    ..on(2)
                },
                Phase {
                    errors: Some(error(ErrorAnswer::Reset, false)),
                    ..on(3)
                },
                Phase {
                    hang: Some(HangSpec {
                        rate: 1.0,
                        after_effect: true,
                    }),
                    ..on(4)
                },
            ],
            ..spec()
        };
        let mut m = ProviderModel::new(&spec, 1);
        let call = CallFacts {
            at: 0,
            seq: Some(3),
            key: "msg-3",
            delivery: 1,
        };
        let plans: Vec<(Option<Nanos>, CallOutcome, bool)> = (0..5)
            .map(|_| m.plan(&call))
            .map(|p| (p.latency, p.outcome, p.works))
            .collect();
        let l = Some(240_000_000);
        assert_eq!(
            plans,
            vec![
                (l, CallOutcome::Error(503), true),
                (l, CallOutcome::Reset, true),
                (l, CallOutcome::Reset, false),
                (None, CallOutcome::Accepted, true),
                (l, CallOutcome::Accepted, true),
            ]
        );
    }
}
