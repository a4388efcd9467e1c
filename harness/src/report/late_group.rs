//! `OFFSET RESET`: a Kafka consumer group that formed after records were published and never
//! read one of them (summary.json's `late_group`): its consumers started at the log's end, and
//! the note says which setting makes them start at its beginning.

use super::summary::Summary;
use super::words::plural;

/// The note, when the run's group formed late and read nothing published before it.
pub(crate) fn note(s: &Summary) -> Option<String> {
    let g = s.late_group.as_ref()?;
    Some(format!(
        "OFFSET RESET: the consumer group formed at {:.3} s, after the first record was \
         published at {:.3} s, and never read any of the {} {} published before it: its \
         consumers started at the end of the log, as a consumer with auto.offset.reset=latest \
         does in a group with no committed offset (the default of aiokafka, so of FastStream's \
         KafkaBroker, and of the Java client). Set auto_offset_reset=\"earliest\" (aiokafka, \
         FastStream) or auto.offset.reset=earliest (librdkafka, confluent-kafka, the Java \
         client) to read the run's records from the start.",
        g.formed_s,
        g.first_publish_s,
        g.unread,
        plural(g.unread, "record", "records"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::late_group::LateGroup;
    use crate::record::{Event, EventKind, RebalanceWhy, RunRecord};
    use crate::report::summary::RunInfo;

    /// The summary of a `mode` run whose 20 records were published every 100 ms from 0 s and
    /// whose group formed at 3.2 s and read none of them.
    fn late(mode: &str) -> Summary {
        let s = 1_000_000_000;
        let mut events: Vec<Event> = (0..20u64)
            .map(|i| Event {
                at: i * s / 10,
                kind: EventKind::Published { seq: i as u32 + 1 },
            })
            .collect();
        events.push(Event {
            at: 3 * s + s / 5,
            kind: EventKind::Rebalanced {
                generation: 1,
                members: 2,
                moved: 2,
                why: RebalanceWhy::Join,
            },
        });
        let record = RunRecord {
            events,
            end: 10 * s,
            ..RunRecord::default()
        };
        let info = RunInfo {
            profile: "p".into(),
            mode: mode.into(),
            seed: 1,
            wall_s: 0.0,
        };
        Summary::new(&info, &crate::metrics::analyse(&record, 0), Vec::new())
    }

    #[test]
    fn a_live_group_that_formed_late_and_read_nothing_is_told_to_start_at_earliest() {
        let s = late("live");
        assert_eq!(
            s.late_group,
            Some(LateGroup {
                formed_s: 3.2,
                first_publish_s: 0.0,
                unread: 20
            })
        );
        let text = note(&s).unwrap();
        assert_eq!(
            text,
            "OFFSET RESET: the consumer group formed at 3.200 s, after the first record was \
             published at 0.000 s, and never read any of the 20 records published before it: \
             its consumers started at the end of the log, as a consumer with \
             auto.offset.reset=latest does in a group with no committed offset (the default of \
             aiokafka, so of FastStream's KafkaBroker, and of the Java client). Set \
             auto_offset_reset=\"earliest\" (aiokafka, FastStream) or auto.offset.reset=earliest \
             (librdkafka, confluent-kafka, the Java client) to read the run's records from the \
             start."
        );
        // Every format says it: the notes are the same sentences.
        assert!(crate::report::notes::notes(&s)
            .iter()
            .any(|n| n.text == text));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["late_group"],
            serde_json::json!({"formed_s": 3.2, "first_publish_s": 0.0, "unread": 20})
        );
    }

    #[test]
    fn a_sim_run_has_no_late_group() {
        let s = late("sim");
        assert_eq!(s.late_group, None);
        assert_eq!(note(&s), None);
        assert!(serde_json::to_value(&s)
            .unwrap()
            .get("late_group")
            .is_none());
    }
}
