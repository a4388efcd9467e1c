//! Properties of a fleet under `autoscale`, on every kind, whatever its settings and kills: the
//! replica count moves in a chain within its bounds, a removed replica never comes back, each
//! scale-out makes its replicas, which start after the startup, the anomaly checker finds
//! nothing, and `dedupe-table` still neither duplicates nor loses.

use std::time::Duration;

use proptest::prelude::*;

use super::proptests::{broker_of_kind, rule as kill_rule};
use super::tests::{base, run, secs};
use crate::metrics::analyse;
use crate::profile::*;
use crate::record::EventKind;

fn autoscale() -> impl Strategy<Value = AutoscaleRule> {
    (
        (1u64..5, 0u32..3, 1u32..6, prop::bool::ANY),
        (1u64..20, 5u64..40, 0u64..90, 0u64..120),
        (1u64..60, 0u64..20, 0u64..2),
    )
        .prop_map(
            |(
                (target, min, max, in_flight),
                (sync, poll, cooldown, window),
                (grace, startup, activation),
            )| {
                let max = max.max(min).max(1);
                AutoscaleRule {
                    metric: match in_flight {
                        true => QueueMetric::ReadyAndInFlight,
                        false => QueueMetric::Ready,
                    },
                    activation,
                    min,
                    max,
                    polling_interval: secs(poll),
                    cooldown: secs(cooldown),
                    sync_period: secs(sync),
                    scale_down: ScalingRules {
                        stabilization: secs(window),
                        ..ScalingRules::default_down()
                    },
                    startup: secs(startup),
                    grace: secs(grace),
                    ..AutoscaleRule::new(target)
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn a_scaled_fleet_keeps_its_bounds_and_its_removed_replicas_gone(
        kind in 0u8..6,
        messages in 1u64..30,
        workers in 1u32..4,
        lease_s in 5u64..60,
        scaling in autoscale(),
        kills in prop::collection::vec(kill_rule(), 0..2),
        seed in any::<u64>(),
    ) {
        let mut s = base();
        s.seed = seed;
        s.consumer.target = "dedupe-table".into();
        s.consumer.workers = workers;
        s.run.duration = secs(60);
        s.workload.arrival = Arrival::Every(Duration::from_secs(2));
        s.workload.count = Some(messages);
        s.broker = broker_of_kind(kind, lease_s, 0);
        let (min, max, startup) = (scaling.min, scaling.max, scaling.startup);
        s.chaos = std::iter::once(ChaosRule::new(scaling)).chain(kills).collect();
        let r = run(&s);
        // The count starts at the fleet the run starts with; each change starts where the last
        // ended, and ends within the bounds (zero only with min 0: KEDA's).
        let mut replicas = workers;
        // Slots whose replica a scale-in removed and no scale-out has made again.
        let mut gone = std::collections::BTreeSet::new();
        // Replicas the scale-outs asked for, and those they made.
        let (mut asked, mut made) = (0, 0);
        for e in &r.events {
            match e.kind {
                EventKind::Scaled { from, to, .. } => {
                    prop_assert_eq!(from, replicas);
                    prop_assert!(to <= max && (to >= min || to == 0));
                    prop_assert!(to > 0 || min == 0);
                    asked += to.saturating_sub(from);
                    replicas = to;
                }
                EventKind::ReplicaMade { .. } => made += 1,
                EventKind::ReplicaRemoved { worker, .. } => {
                    gone.insert(worker);
                }
                EventKind::WorkerAdded { worker } => {
                    gone.remove(&worker);
                }
                EventKind::WorkerRestarted { worker } => {
                    prop_assert!(!gone.contains(&worker), "worker {} came back", worker);
                }
                _ => {}
            }
        }
        prop_assert_eq!(asked, made);
        let m = analyse(&r, crate::record::nanos(secs(300)));
        // A scale-out, and only one, has a lag; its replicas that started did so after the
        // startup, all made at its instant.
        for e in m.autoscaling.iter().flat_map(|a| &a.scale_events) {
            prop_assert_eq!(e.lag.is_some(), e.to > e.from);
            if let Some(after) = e.lag.as_ref().and_then(|l| l.started_after_s) {
                prop_assert_eq!(after, startup.as_secs_f64());
            }
        }
        prop_assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
        prop_assert_eq!(m.duplicate_effects, 0);
        prop_assert_eq!(m.lost, 0);
        prop_assert_eq!(m.messages_with_effect + m.dlq_without_effect + m.unfinished, m.messages);
    }
}
