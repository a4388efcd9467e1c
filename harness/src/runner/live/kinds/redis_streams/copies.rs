//! A consumer's own retries in the RESP proxy: an XADD to the run's stream whose fields name a
//! message of the run is that message's next life (a handler publishing the message again), a
//! copy with an entry id of its own.
//!
//! The copy's id comes in the XADD's reply; another worker blocked in XREADGROUP may read the
//! entry first, on its own connection, so an entry the run does not know is read by its fields
//! too. Either way [`Entries::found`] counts its deliveries on from its message's. The ack
//! of the delivery the retry replaced removes that copy (`Superseded`): it settles nothing.

use super::entries::Entries;
use super::proxy::RespConnection;
use super::resp::Value;
use crate::record::{Republish, Seq};
use crate::runner::live::state::LiveState;

impl RespConnection {
    /// An XADD of the worker's to the run's stream (its arguments): when a field names a
    /// message of the run, it is that message's retry, from the delivery the worker holds.
    pub(super) fn copy_sent(&self, args: &[String]) -> Option<Seq> {
        let state = &self.run.state;
        let seq = args
            .iter()
            .skip(3)
            .find_map(|a| state.seq_of_body(a.as_bytes()))?;
        let delivery = state.retiring(self.worker, seq, Republish::Queue);
        self.run.entries.copy_sent(seq);
        state.observed_republish(self.worker, seq, delivery, Republish::Queue);
        Some(seq)
    }

    /// The entries of `list` (`[[id, [field, value, ...]], ...]`) the run does not know that
    /// are its messages (copies, or its own added with `*`), found by their fields.
    pub(super) fn copies_in(&self, list: &Value) {
        copies_in(&self.run.entries, &self.run.state, list);
    }
}

fn copies_in(entries: &Entries, state: &LiveState, list: &Value) {
    for e in list.array() {
        let [id, Value::Array(fields)] = e.array() else {
            continue;
        };
        let Some(id) = id.text() else { continue };
        if entries.knows(&id) {
            continue;
        }
        let seq = (fields.iter().skip(1).step_by(2))
            .find_map(|v| v.bytes().and_then(|b| state.seq_of_body(b)));
        if let Some(seq) = seq {
            entries.found(&id, seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::ack_fault_tests::{bulk, cmd, observed, READ};
    use super::super::proxy::RespProtocol;
    use crate::chaos::kill_worker::KillSchedule;
    use crate::provider::http::LiveClock;
    use crate::runner::live::proxy::{observed_lines, Connection, Protocol};
    use crate::runner::live::state::LiveState;
    use crate::workload::key_reader::KeyReader;

    const BODY: &str = r#"{"key":"msg-1","email":"a@example.com"}"#;

    /// XREADGROUP's reply with entry `id` of stream `s`, its `body` field holding `BODY`.
    fn read_reply(id: &str) -> String {
        let entry = format!("*2\r\n{}*2\r\n{}{}", bulk(id), bulk("body"), bulk(BODY));
        format!("*1\r\n*2\r\n{}*1\r\n{entry}", bulk("s"))
    }

    fn exchange(c: &mut dyn Connection, command: &[&str], reply: &str) {
        let (mut fwd, mut back) = (Vec::new(), Vec::new());
        c.from_worker(&cmd(command), &mut fwd);
        c.from_server(reply.as_bytes(), &mut back);
        assert_eq!(back, reply.as_bytes());
    }

    #[tokio::test]
    async fn a_handlers_xadd_of_its_message_is_its_retry_whoever_reads_the_copy_first() {
        let state = LiveState::new(LiveClock::new(1.0), "s", 2, KillSchedule::new(&[], 1));
        state.publishing("msg-1");
        state.follow_copies(KeyReader::of(None));
        let run = observed(&state, None);
        let proto = RespProtocol(run.clone());
        let (mut w1, mut w2) = (proto.connection(1), proto.connection(2));
        // Worker 1 reads entry 0-1 (message 1), its call fails: it adds the message again,
        // then acks the entry. Worker 2, blocked in XREADGROUP, reads the copy 7-0 before
        // worker 1's XADD reply is read: the copy is known by its fields.
        exchange(&mut *w1, &READ, &read_reply("0-1"));
        let mut fwd = Vec::new();
        w1.from_worker(&cmd(&["XADD", "s", "*", "body", BODY]), &mut fwd);
        exchange(&mut *w2, &READ, &read_reply("7-0"));
        let mut back = Vec::new();
        w1.from_server(bulk("7-0").as_bytes(), &mut back);
        exchange(&mut *w1, &["XACK", "s", "g", "0-1"], ":1\r\n");
        exchange(&mut *w2, &["XACK", "s", "g", "7-0"], ":1\r\n");
        // The copy's delivery is message 1's second; the first ack removes the copy the retry
        // replaced; the second deletes the message. Nothing is left unsettled.
        assert_eq!(
            observed_lines(&state.take_events()),
            [
                "deliver 1.1 to 1",
                "retry 1.1 by 1 to Queue",
                "deliver 1.2 to 2",
                "ack 1.1 by 1: Superseded",
                "ack 1.2 by 2: Deleted",
            ]
        );
        run.entries.with("0-2", 0, |e| {
            e.place = super::super::entries::EntryPlace::Acked
        });
        assert_eq!(run.entries.unsettled(), 0);
    }
}
