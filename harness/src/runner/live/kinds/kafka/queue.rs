//! A built-in target's queue over librdkafka (rdkafka's `StreamConsumer`), one consumer-group
//! member per worker, through the worker's own proxy port, configured as a worker process is
//! told ([`super::settings`]).
//!
//! A receive hands the next record of the last poll's batch; when the batch is used up it polls:
//! it waits for one record and takes those already fetched with it, up to `max_poll_records`,
//! as `consume(num_messages)` does. Only a poll counts for `max.poll.interval.ms`: a batch
//! worked through for longer than that gets the member removed, as in the sim model. An ack is
//! a synchronous commit of the record's offset + 1 on its partition; a commit the coordinator
//! refuses because the member was removed or its generation is over (UNKNOWN_MEMBER_ID,
//! ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS) is a stale receipt. Kafka has no per-record
//! hand-back and nothing extends the poll interval: `change_visibility`, `release` and `extend`
//! do nothing. The receipt is `<partition>:<offset>`.
//!
//! A killed worker's consumer is dropped; the worker's proxy lets nothing of its close reach
//! the broker (no commit, no LeaveGroup, no heartbeat), so its member is removed after
//! `session.timeout.ms`, as a killed process's is ([`super::killed`]). A worker stopped by a
//! `deploy` closes its consumer: it leaves the group at once.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ackbench_targets::{Delivery, QueueError};
use futures::FutureExt;
use rdkafka::consumer::{CommitMode, Consumer, StreamConsumer};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

use super::records::Records;
use super::settings::ConsumerSettings;
use crate::record::WorkerId;
use crate::runner::live::kinds::{BoxFuture, LiveQueue};

/// One record of a poll's batch, not yet handed to the target.
struct Fetched {
    partition: i32,
    offset: i64,
    body: String,
}

pub struct KafkaQueue {
    consumer: Arc<StreamConsumer>,
    topic: String,
    batch: tokio::sync::Mutex<VecDeque<Fetched>>,
    max_poll_records: usize,
    records: Arc<Records>,
    /// Records of the last poll's batch not handed to the target yet.
    held: AtomicU32,
}

fn unavailable(e: impl std::fmt::Display) -> QueueError {
    QueueError::Unavailable(e.to_string())
}

/// The receipt of the record at `offset` of `partition`, and back.
pub fn receipt(partition: i32, offset: i64) -> String {
    format!("{partition}:{offset}")
}

fn parse(receipt: &str) -> Option<(i32, i64)> {
    let (p, o) = receipt.split_once(':')?;
    Some((p.parse().ok()?, o.parse().ok()?))
}

/// A commit refused because the member no longer owns its partitions.
fn fenced(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(
            RDKafkaErrorCode::UnknownMemberId
                | RDKafkaErrorCode::IllegalGeneration
                | RDKafkaErrorCode::RebalanceInProgress
                | RDKafkaErrorCode::FencedInstanceId
                | RDKafkaErrorCode::StaleMemberEpoch
        )
    )
}

impl KafkaQueue {
    /// Worker `worker`'s member of `group`, subscribed to `topic` through `bootstrap`, its
    /// `client.id` `client` ([`super::killed`]).
    pub fn connect(
        bootstrap: &str,
        topic: &str,
        group: &str,
        settings: &ConsumerSettings,
        (worker, client): (WorkerId, &str),
        records: Arc<Records>,
    ) -> Result<KafkaQueue, String> {
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", bootstrap)
            .set("group.id", group)
            .set("auto.offset.reset", "earliest")
            .set("client.id", client);
        for (name, value) in settings.librdkafka(worker) {
            config.set(name, value);
        }
        let consumer: StreamConsumer = config
            .create()
            .map_err(|e| format!("cannot create worker {worker}'s Kafka consumer: {e}"))?;
        consumer
            .subscribe(&[topic])
            .map_err(|e| format!("cannot subscribe to {topic}: {e}"))?;
        Ok(KafkaQueue {
            consumer: Arc::new(consumer),
            topic: topic.to_string(),
            batch: tokio::sync::Mutex::new(VecDeque::new()),
            max_poll_records: settings.spec.max_poll_records.max(1) as usize,
            records,
            held: AtomicU32::new(0),
        })
    }

    /// One poll: waits for a record, then takes those already fetched, up to the batch size.
    async fn poll(&self, batch: &mut VecDeque<Fetched>) -> Result<(), QueueError> {
        let fetched = |m: &rdkafka::message::BorrowedMessage<'_>| Fetched {
            partition: m.partition(),
            offset: m.offset(),
            body: String::from_utf8_lossy(m.payload().unwrap_or_default()).into_owned(),
        };
        let first = self.consumer.recv().await.map_err(unavailable)?;
        batch.push_back(fetched(&first));
        drop(first);
        while batch.len() < self.max_poll_records {
            match self.consumer.recv().now_or_never() {
                Some(Ok(m)) => batch.push_back(fetched(&m)),
                _ => break,
            }
        }
        Ok(())
    }

    async fn next(&self) -> Result<Delivery<String>, QueueError> {
        let mut batch = self.batch.lock().await;
        if batch.is_empty() {
            self.poll(&mut batch).await?;
        }
        let f = batch
            .pop_front()
            .ok_or_else(|| unavailable("a poll returned no record"))?;
        self.held.store(batch.len() as u32, Ordering::SeqCst);
        Ok(Delivery {
            receipt: receipt(f.partition, f.offset),
            body: ackbench_targets::message::Body::Text(f.body),
            receive_count: self.records.deliveries(f.partition, f.offset).max(1),
        })
    }

    async fn commit(&self, receipt: &str) -> Result<(), QueueError> {
        let (partition, offset) =
            parse(receipt).ok_or_else(|| unavailable(format!("not a receipt: {receipt}")))?;
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition_offset(&self.topic, partition, Offset::Offset(offset + 1))
            .map_err(unavailable)?;
        let consumer = self.consumer.clone();
        let done = tokio::task::spawn_blocking(move || consumer.commit(&tpl, CommitMode::Sync))
            .await
            .map_err(unavailable)?;
        match done {
            Ok(()) => Ok(()),
            Err(e) if fenced(&e) => Err(QueueError::StaleReceipt),
            Err(e) => Err(unavailable(e)),
        }
    }
}

/// librdkafka's close (what dropping the consumer's last reference does) waits for the broker's
/// answers, for ever once the run has deleted its topic and group: it is done on a detached
/// thread of its own, which waits until every other holder (a commit on the blocking pool) has
/// let go, so that the close never runs on a runtime thread (a runtime's shutdown waits for its
/// blocking threads) and never holds up the end of the run.
impl Drop for KafkaQueue {
    fn drop(&mut self) {
        let consumer = self.consumer.clone();
        let _ = std::thread::Builder::new()
            .name("kafka-close".into())
            .spawn(move || {
                while Arc::strong_count(&consumer) > 1 {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                drop(consumer)
            });
    }
}

impl LiveQueue for KafkaQueue {
    fn receive(&self) -> BoxFuture<'_, Result<Delivery<String>, QueueError>> {
        Box::pin(self.next())
    }

    fn ack<'a>(&'a self, receipt: &'a str) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.commit(receipt))
    }

    fn held_from_poll(&self) -> u32 {
        self.held.load(Ordering::SeqCst)
    }

    fn change_visibility<'a>(
        &'a self,
        _receipt: &'a str,
        _timeout: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_names_its_partition_and_offset() {
        assert_eq!(parse(&receipt(3, 41)), Some((3, 41)));
        assert_eq!(parse("3"), None);
        assert_eq!(parse("x:1"), None);
    }
}
