//! The `BROKEN CONNECTIONS` note: each worker connection a live run's proxy closed because it
//! broke, which worker's, when and why (summary.json's `broken_connections`).

use super::note::Note;
use super::notes::first_named;
use super::summary::Summary;
use super::words::plural;

/// The note, when a connection broke: the first few named, as crashes are.
pub(super) fn broken_connections(s: &Summary, notes: &mut Vec<Note>) {
    if s.broken_connections.is_empty() {
        return;
    }
    let named = first_named(
        s.broken_connections
            .iter()
            .map(|b| (b.worker, b.at_s, b.why.as_str())),
    );
    let n = s.broken_connections.len() as u64;
    notes.push(Note::from(format!(
        "BROKEN CONNECTIONS: the proxy closed {n} worker {} that broke: {named}. Each worker saw \
         its connection closed, as from a dead broker; the run went on.",
        plural(n, "connection", "connections"),
    )));
}

#[cfg(test)]
mod tests {
    use crate::record::{BrokenConnection, RunRecord};
    use crate::report::notes::notes;
    use crate::report::summary::{summarise, RunInfo};

    #[test]
    fn each_broken_connection_is_named_in_a_note_and_in_the_summary() {
        let info = RunInfo {
            profile: "p".into(),
            mode: "live".into(),
            seed: 1,
            wall_s: 1.0,
        };
        let mut r = RunRecord::default();
        let s = summarise(&info, &r, &Default::default());
        assert!(!notes(&s).iter().any(|n| n.text.contains("BROKEN")));
        r.broken_connections.push(BrokenConnection {
            at: 1_250_000_000,
            worker: 2,
            why: "a reply nested deeper than 128".into(),
        });
        let s = summarise(&info, &r, &Default::default());
        assert_eq!(s.broken_connections.len(), 1);
        let all = notes(&s);
        let note = all.iter().find(|n| n.text.contains("BROKEN")).unwrap();
        // 1_250_000_000 ns = 1.250 s.
        assert_eq!(
            note.text,
            "BROKEN CONNECTIONS: the proxy closed 1 worker connection that broke: worker 2 at \
             1.250 s (a reply nested deeper than 128). Each worker saw its connection closed, as \
             from a dead broker; the run went on."
        );
    }
}
