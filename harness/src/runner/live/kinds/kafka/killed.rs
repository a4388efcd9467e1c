//! A killed built-in target's consumer sends nothing more, as a process killed by SIGKILL.
//!
//! A built-in target runs as a task of ackbench's process; a kill ends the task and drops its
//! consumer, and librdkafka's close (what the drop does) would commit, send LeaveGroup and have
//! the group rebalance at once. A killed process does none of that: its member stops
//! heartbeating and the coordinator removes it `session.timeout.ms` after its last heartbeat,
//! as the sim model has it. So each consumer names its worker and incarnation in its
//! `client.id` (`ackbench-worker-<w>.<incarnation>`, in every request header), and the worker's
//! proxy closes, forwarding nothing, every connection on which a consumer of a killed
//! incarnation speaks: its LeaveGroup, heartbeats, commits and fetches never reach the broker.
//! A consumer stopped by a `deploy` within its grace closes as a program that shuts down does:
//! its LeaveGroup goes through.

use crate::record::WorkerId;
use crate::runner::live::state::LiveState;

/// The `client.id` of worker `w`'s consumer in its incarnation `incarnation`.
pub fn client_id(w: WorkerId, incarnation: u32) -> String {
    format!("ackbench-worker-{w}.{incarnation}")
}

/// The worker and incarnation a `client.id` names, if it is one of [`client_id`]'s.
fn parse(client_id: &str) -> Option<(WorkerId, u32)> {
    let (w, i) = client_id
        .strip_prefix("ackbench-worker-")?
        .split_once('.')?;
    Some((w.parse().ok()?, i.parse().ok()?))
}

/// True when `client_id` names a consumer of an incarnation that was killed.
pub fn silenced(state: &LiveState, client_id: &str) -> bool {
    parse(client_id).is_some_and(|(w, incarnation)| state.was_killed(w, incarnation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_id_names_its_worker_and_incarnation() {
        assert_eq!(parse(&client_id(2, 3)), Some((2, 3)));
        assert_eq!(parse("ackbench-worker-2"), None);
        assert_eq!(parse("rdkafka"), None);
        assert_eq!(parse("ackbench-worker-x.1"), None);
    }
}
