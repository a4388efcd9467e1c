//! The run's consumer of the dead-letter queue: each entry that arrives is recorded as
//! dead-lettered at that instant, with the delivery number the message had reached (the
//! proxies count deliveries; a quorum queue's dead-lettered copy carries no delivery count).
//! It consumes with auto-ack: the queue is the run's own and deleted at the end.

use std::sync::Arc;

use futures::StreamExt;
use lapin::options::BasicConsumeOptions;
use lapin::types::FieldTable;
use lapin::Channel;

use super::ledger::Ledger;
use crate::record::{EventKind, Seq};
use crate::runner::live::state::LiveState;

/// Starts consuming `queue`; the task ends when the channel closes or is aborted.
pub async fn consume(
    ch: &Channel,
    queue: &str,
    state: Arc<LiveState>,
    ledger: Arc<Ledger>,
) -> lapin::Result<tokio::task::JoinHandle<()>> {
    let mut consumer = ch
        .basic_consume(
            queue.into(),
            "ackbench-dlq".into(),
            BasicConsumeOptions {
                no_ack: true,
                ..BasicConsumeOptions::default()
            },
            FieldTable::default(),
        )
        .await?;
    Ok(tokio::spawn(async move {
        while let Some(Ok(d)) = consumer.next().await {
            let seq: Option<Seq> = d
                .properties
                .message_id()
                .as_ref()
                .and_then(|id| id.as_str().parse().ok());
            if let Some(seq) = seq {
                if ledger.dead_lettered(seq) {
                    let delivery = ledger.deliveries(seq);
                    state.record(EventKind::DeadLettered { seq, delivery });
                }
            }
        }
    }))
}
