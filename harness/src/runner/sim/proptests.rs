//! Property: with `dedupe-table`, no schedule of kills produces a duplicate or a loss.

use std::time::Duration;

use proptest::prelude::*;

use super::tests::{base, run, secs};
use crate::metrics::analyse;
use crate::profile::*;

fn rule() -> impl Strategy<Value = ChaosRule> {
    let trigger = prop_oneof![
        Just(KillTrigger::Point(KillPoint::Received)),
        Just(KillTrigger::Point(KillPoint::Checkpoint(
            "committed".into()
        ))),
        (0u64..120).prop_map(|s| KillTrigger::At(secs(s))),
        (1u64..30).prop_map(|s| KillTrigger::Every(secs(s))),
    ];
    (
        trigger,
        prop::option::of(1u32..4),
        0.0f64..=1.0,
        prop::option::of(1u32..4),
        0u64..5_000,
    )
        .prop_map(|(trigger, delivery, probability, worker, delay_ms)| {
            ChaosRule::KillWorker(KillRule {
                trigger,
                delivery,
                probability,
                keys: None,
                worker,
                from: None,
                to: Some(secs(200)),
                times: None,
                delay: Duration::from_millis(delay_ms),
                optional: false,
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn dedupe_table_never_duplicates_or_loses(
        messages in 1u64..25,
        workers in 1u32..4,
        lease_s in 1u64..40,
        max_receives in 0u32..5,
        restart_ms in 0u64..3_000,
        chaos in prop::collection::vec(rule(), 0..4),
        seed in any::<u64>(),
    ) {
        let mut s = base();
        s.seed = seed;
        s.consumer.target = "dedupe-table".into();
        s.consumer.workers = workers;
        s.consumer.restart_after = Duration::from_millis(restart_ms);
        s.run.duration = secs(60);
        s.workload.arrival = Arrival::Every(Duration::from_secs(2));
        s.workload.count = Some(messages);
        s.broker.visibility_timeout = secs(lease_s);
        s.broker.max_receives = max_receives;
        s.chaos = chaos;
        let m = analyse(&run(&s), crate::record::nanos(secs(300)));
        prop_assert_eq!(m.duplicate_effects, 0);
        prop_assert_eq!(m.lost, 0);
        // Every message had its effect, or is visibly not done (DLQ without effect, unfinished).
        prop_assert_eq!(m.messages_with_effect + m.dlq_without_effect + m.unfinished, m.messages);
    }
}
