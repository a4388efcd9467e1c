//! The worker connections a live run's proxy closed because they broke, named: which worker,
//! when, and why (a frame over the broker's limits, bytes that are no frame of its protocol, a
//! panic of the proxy's reader). Each is a consumer's error the run survived: the worker saw
//! its connection closed, as from a dead broker.

use serde::{Deserialize, Serialize};

use super::seconds;
use crate::record::{RunRecord, WorkerId};

/// One broken connection, as summary.json lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokenConnection {
    pub worker: WorkerId,
    /// When it broke, seconds since the start of the run (profile time).
    pub at_s: f64,
    /// Why, in words.
    pub why: String,
}

/// The run's broken connections, in the order they broke.
pub fn named(record: &RunRecord) -> Vec<BrokenConnection> {
    record
        .broken_connections
        .iter()
        .map(|b| BrokenConnection {
            worker: b.worker,
            at_s: seconds(b.at),
            why: b.why.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_broken_connection_is_named_with_its_instant() {
        let r = RunRecord {
            broken_connections: vec![crate::record::BrokenConnection {
                at: 2_500_000_000,
                worker: 2,
                why: "a reply nested deeper than 128".into(),
            }],
            ..RunRecord::default()
        };
        // 2.5e9 ns = 2.5 s.
        assert_eq!(
            named(&r),
            [BrokenConnection {
                worker: 2,
                at_s: 2.5,
                why: "a reply nested deeper than 128".into(),
            }]
        );
    }
}
