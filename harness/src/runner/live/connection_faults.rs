//! The `connection` rules of a live run: each rule's instants, in profile time, acted on its
//! workers' links ([`super::proxy::link`]) on the run's clock: a cut closes every connection of
//! each worker; a window's opening puts its latency or partition on each worker's link, its
//! closing takes it off (a dropping partition's closing cuts). A rule fires once per worker it
//! acts on, at each cut and at a window's opening (`EventKind::FaultFired`), as in sim mode.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::proxy::link::{Effect, Links};
use super::state::LiveState;
use crate::profile::{ConnectionFault, ConnectionRule, Direction, HeldFrames, Scenario};
use crate::provider::http::LiveClock;
use crate::record::{nanos, EventKind, WorkerId};

/// What a rule does at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Cut,
    Begin(Effect),
    End,
}

/// The workers' links if the run has `connection` rules (every worker's link open).
pub fn links_for(s: &Scenario) -> Option<Arc<Links>> {
    s.chaos
        .iter()
        .any(|r| r.get::<ConnectionRule>().is_some())
        .then(|| Arc::new(Links::new(s.worker_slots())))
}

/// One rule's plan: its index, its workers, and its steps (instant in profile time, what
/// happens) in time order.
pub type RulePlan = (u32, Vec<WorkerId>, Vec<(Duration, Step)>);

/// Every rule's steps, by rule index: (instant in profile time, what happens), in time order.
/// `end` is the run's last instant (`run.duration + run.drain`); delays are turned to wall time
/// on `clock`.
pub fn steps(s: &Scenario, clock: LiveClock) -> Vec<RulePlan> {
    let end = s.run.duration + s.run.drain;
    crate::chaos::rules_of::<ConnectionRule>(&s.chaos)
        .map(|(rule, c)| {
            let timed = match &c.fault {
                ConnectionFault::Cut(cut) => cut
                    .instants(end)
                    .into_iter()
                    .map(|t| (t, Step::Cut))
                    .collect(),
                ConnectionFault::Latency {
                    window,
                    delay,
                    direction,
                } => {
                    let effect = Effect::Latency {
                        delay: clock.wall(nanos(*delay)),
                        to_broker: *direction != Direction::ToWorker,
                        to_worker: *direction != Direction::ToBroker,
                    };
                    vec![
                        (window.from, Step::Begin(effect)),
                        (window.until(end), Step::End),
                    ]
                }
                ConnectionFault::Partition { window, frames } => {
                    let effect = Effect::Partition {
                        drop: *frames == HeldFrames::Drop,
                    };
                    vec![
                        (window.from, Step::Begin(effect)),
                        (window.until(end), Step::End),
                    ]
                }
            };
            (rule, c.workers.clone(), timed)
        })
        .collect()
}

/// Starts one task per rule that sleeps to each of its instants and acts on its workers' links,
/// until `stop` turns true.
pub fn start(s: &Scenario, state: &Arc<LiveState>, stop: &watch::Receiver<bool>) {
    let Some(links) = state.links() else { return };
    for (rule, workers, timed) in steps(s, state.clock) {
        let (state, links, mut stop) = (state.clone(), links.clone(), stop.clone());
        tokio::spawn(async move {
            for (at, step) in timed {
                let due = state
                    .clock
                    .wall(nanos(at).saturating_sub(state.clock.now()));
                tokio::select! {
                    _ = tokio::time::sleep(due) => act(&state, &links, rule, &workers, step),
                    _ = stop.changed() => return,
                }
            }
        });
    }
}

/// Rule `rule`'s step on each of `workers`' links, each cut and opening a firing.
fn act(state: &LiveState, links: &Links, rule: u32, workers: &[WorkerId], step: Step) {
    for &w in workers {
        match step {
            Step::Cut => links.cut(w),
            Step::Begin(effect) => links.begin(w, rule, effect),
            Step::End => {
                links.end(w, rule);
                continue;
            }
        }
        state.record(EventKind::FaultFired { worker: w, rule });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::load_str;

    const S: Duration = Duration::from_secs(1);
    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn each_rule_is_its_instants_on_its_workers_with_delays_in_wall_time() {
        let text = "name: t
mode: live
run: { duration: 60s, drain: 60s, time_scale: 0.1 }
broker: { kind: rabbitmq }
workload: { arrival: { every: 1s }, count: 3 }
consumer: { target: ack-after-work, workers: 2 }
provider: { latency: { dist: fixed, value: 1s } }
chaos:
  - kill_worker: { at: 5s }
  - connection: { fault: cut, every: 40s, workers: [1] }
  - connection: { fault: latency, delay: 200ms, from: 10s, for: 30s, direction: to_worker, workers: [2] }
  - connection: { fault: partition, from: 30s, frames: drop }
";
        let s = load_str("t.yaml", text, &[]).expect("a valid profile");
        assert!(links_for(&s).is_some());
        let got = steps(&s, LiveClock::new(0.1));
        // Rule 0 is a kill: not here. Rule 1 cuts worker 1 every 40 s of the run's 120 s
        // (duration + drain): at 40 s and 80 s (120 s is the end, not before it).
        // Rule 2: 200 ms of profile time towards worker 2 is 20 ms of wall time at 0.1, from
        // 10 s to 40 s. Rule 3: both workers (the default) partitioned from 30 s to the end.
        let latency = Effect::Latency {
            delay: 20 * MS,
            to_broker: false,
            to_worker: true,
        };
        let drop = Effect::Partition { drop: true };
        assert_eq!(
            got,
            vec![
                (1, vec![1], vec![(40 * S, Step::Cut), (80 * S, Step::Cut)]),
                (
                    2,
                    vec![2],
                    vec![(10 * S, Step::Begin(latency)), (40 * S, Step::End)]
                ),
                (
                    3,
                    vec![1, 2],
                    vec![(30 * S, Step::Begin(drop)), (120 * S, Step::End)]
                ),
            ]
        );
        let without = s.chaos[..1].to_vec();
        let plain = Scenario {
            chaos: without,
            ..s
        };
        assert!(links_for(&plain).is_none());
    }
}
