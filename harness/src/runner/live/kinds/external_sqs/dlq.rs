//! ackbench's own reader of the run's DLQ on an external SQS server: each entry is received
//! once with a long visibility timeout (so it stays in the DLQ, counted, and is not seen again)
//! and recorded as dead-lettered at the moment it was seen, with the delivery it reached.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ackbench_targets::message::Order;
use tokio::sync::watch;

use super::observe::Observer;
use crate::record::EventKind;
use crate::runner::live::state::LiveState;

/// SQS's longest visibility timeout: the entry is not handed out again during the run.
const HOLD_S: i32 = 43_200;

pub struct Reader {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Reader {
    pub fn start(
        sqs: aws_sdk_sqs::Client,
        dlq_url: String,
        state: Arc<LiveState>,
        observer: Arc<Observer>,
        seen: Arc<AtomicU64>,
    ) -> Reader {
        let (stop, mut stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            loop {
                let last = *stopped.borrow();
                // Long polls while the run goes; one last short look when it stops.
                let wait = if last { 0 } else { 1 };
                let got = tokio::select! {
                    got = sqs
                        .receive_message()
                        .queue_url(&dlq_url)
                        .max_number_of_messages(10)
                        .visibility_timeout(HOLD_S)
                        .wait_time_seconds(wait)
                        .send() => got,
                    _ = stopped.changed(), if !last => continue,
                };
                let messages = got.ok().and_then(|r| r.messages).unwrap_or_default();
                for m in &messages {
                    let Some(seq) = m
                        .body
                        .as_deref()
                        .and_then(Order::key_of)
                        .and_then(|k| state.seq_of_key(&k))
                    else {
                        continue;
                    };
                    let delivery = observer.deliveries_of(seq);
                    state.record(EventKind::DeadLettered { seq, delivery });
                    seen.fetch_add(1, Ordering::Relaxed);
                }
                if last && messages.is_empty() {
                    return;
                }
                if messages.is_empty() && !last {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        });
        Reader { stop, task }
    }

    /// Reads what is left in the DLQ, then stops.
    pub async fn finish(self) {
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}
