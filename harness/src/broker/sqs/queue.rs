//! One SQS queue: an embedded [`Broker`] (the lease state machine), the message bodies and
//! attributes kept beside it by seq, the queue's settings and its event log.
//!
//! A message's body and attributes are kept while the queue holds it: they go when it is
//! deleted, purged or moved to the dead-letter queue.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tokio::sync::Notify;

use super::error::{ErrorCode, SqsError};
use super::message_attributes::{self as ma, MessageAttributes};
use super::queue_attributes::{self as qa, QueueSettings};
use super::receipt::{ReceiptCodec, ReceiptError};
use super::request::{NewMessage, Receive};
use super::response::{Received, Sent};
use super::wire_time::WireTime;
use crate::broker::{Broker, BrokerConfig, Counts, MessageState, Receipt};
use crate::profile::StaleAck;
use crate::record::{AckOutcome, Event, Nanos, Seq, WorkerId};

const S: Nanos = 1_000_000_000;
/// SQS allows one `PurgeQueue` per queue every 60 s.
const PURGE_EVERY: Nanos = 60 * S;
/// A FIFO queue drops a repeated deduplication id for 5 minutes.
const DEDUPLICATION_INTERVAL: Nanos = 300 * S;

/// A message as the queue keeps it beside the broker.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    pub message_id: String,
    pub body: String,
    pub md5_of_body: String,
    pub attributes: MessageAttributes,
    pub group_id: Option<String>,
    /// A FIFO queue's: the deduplication id and the sequence number of the send.
    pub dedup_id: Option<String>,
    pub sequence_number: Option<String>,
    /// Epoch milliseconds when it was first sent (kept across a move to the DLQ).
    pub sent_ms: u64,
    pub first_receive_ms: Option<u64>,
    /// The ARN of the queue it was dead-lettered from.
    pub dead_letter_source: Option<String>,
    /// Receives in the queues it was dead-lettered from: `ApproximateReceiveCount` counts the
    /// receives of every queue, as SQS does.
    pub earlier_receives: u32,
}

impl StoredMessage {
    /// Bytes counted against `MaximumMessageSize`: body and attributes.
    pub fn size(body: &str, attributes: &MessageAttributes) -> usize {
        body.len() + attributes.iter().map(|(n, v)| v.size(n)).sum::<usize>()
    }
}

/// A FIFO message's `SequenceNumber`: its seq, as the 20-digit decimal SQS answers.
fn sequence_number(seq: Seq) -> String {
    format!("{:020}", u64::from(seq))
}

/// One queue.
#[derive(Debug)]
pub struct SqsQueue {
    pub name: String,
    pub arn: String,
    /// Incarnation number, unique per server: receipts name it.
    pub id: u32,
    pub broker: Broker,
    /// The messages the queue holds (delayed, visible, leased, or dead-lettered and not yet
    /// moved), by seq.
    pub messages: HashMap<Seq, StoredMessage>,
    pub settings: QueueSettings,
    /// Broker events not yet taken by [`super::SqsServer::take_events`].
    pub events: Vec<Event>,
    /// Long pollers of this queue wait here.
    pub waiters: Arc<Notify>,
    pub created_s: u64,
    pub modified_s: u64,
    /// When the queue was last purged: SQS allows one purge every 60 s.
    pub purged_at: Option<Nanos>,
    /// The queue's tags (`CreateQueue` `tags`, `TagQueue`, `UntagQueue`, `ListQueueTags`).
    pub tags: BTreeMap<String, String>,
    /// A FIFO queue's message groups, numbered in order of first use.
    group_numbers: HashMap<String, u32>,
    /// What a second of a duration on the wire lasts here (`SqsConfig::wire_time`).
    pub wire_time: WireTime,
}

impl SqsQueue {
    /// A queue whose broker forgets settled messages when `forget_settled` (see
    /// [`super::SqsConfig::forget_settled`]).
    pub fn new(
        name: &str,
        arn: String,
        id: u32,
        config: BrokerConfig,
        settings: QueueSettings,
        epoch_s: u64,
        forget_settled: bool,
    ) -> SqsQueue {
        let broker = if forget_settled {
            Broker::forgetting_settled(config)
        } else {
            Broker::new(config)
        };
        let broker = if settings.fifo {
            broker
                .with_deduplication(DEDUPLICATION_INTERVAL)
                .with_groups()
        } else {
            broker
        };
        SqsQueue {
            name: name.to_string(),
            arn,
            id,
            broker,
            messages: HashMap::new(),
            settings,
            events: Vec::new(),
            waiters: Arc::new(Notify::new()),
            created_s: epoch_s,
            modified_s: epoch_s,
            purged_at: None,
            tags: BTreeMap::new(),
            group_numbers: HashMap::new(),
            wire_time: WireTime::REAL,
        }
    }

    pub fn counts(&self) -> Counts {
        self.broker.counts()
    }

    /// Publishes a message (its size already checked), on a FIFO queue into its message group.
    /// Wakes long pollers if it is visible now.
    pub fn publish(&mut self, now: Nanos, delay_s: Option<u32>, message: StoredMessage) -> Seq {
        let delay = self
            .wire_time
            .nanos(u64::from(delay_s.unwrap_or(self.settings.delay_s)));
        let group = self.group_number(message.group_id.as_deref());
        let seq = self.broker.publish_in(now, delay, group, &mut self.events);
        self.messages.insert(seq, message);
        if delay == 0 {
            self.waiters.notify_waiters();
        }
        seq
    }

    /// The broker's number of message group `id` on a FIFO queue (0 on a standard queue).
    fn group_number(&mut self, id: Option<&str>) -> u32 {
        match id {
            Some(id) if self.settings.fifo => {
                let next = self.group_numbers.len() as u32;
                *self.group_numbers.entry(id.to_string()).or_insert(next)
            }
            _ => 0,
        }
    }

    /// `SendMessage`: checks the size against `MaximumMessageSize` (and, on a FIFO queue, the
    /// group and deduplication ids), stores and publishes. Returns the message's seq and the
    /// answer; a FIFO send whose deduplication id the queue accepted within the last 5 minutes
    /// is answered as that send was (its message id and sequence number) and publishes nothing
    /// (`None`).
    pub fn send(
        &mut self,
        now: Nanos,
        epoch_ms: u64,
        m: NewMessage,
    ) -> Result<(Option<Seq>, Sent), SqsError> {
        let size = StoredMessage::size(&m.body, &m.attributes);
        if size > self.settings.max_message_size {
            return Err(SqsError::message_too_long(self.settings.max_message_size));
        }
        let seq = Seq::try_from(self.broker.len() + 1)
            .map_err(|_| SqsError::new(ErrorCode::InternalFailure, "queue is full"))?;
        let dedup_id = self.fifo_checks(&m)?;
        let md5_of_attributes = ma::md5_of_attributes(&m.attributes);
        let md5_of_body = ma::md5_hex(m.body.as_bytes());
        if let Some(id) = &dedup_id {
            let group = self.group_number(m.group_id.as_deref());
            let delay = Nanos::from(self.settings.delay_s) * S;
            match self.broker.send(now, delay, id, group, &mut self.events) {
                Ok(published) => debug_assert_eq!(published, seq),
                Err(first) => {
                    let sent = Sent {
                        message_id: message_id(self.id, first),
                        md5_of_body,
                        md5_of_attributes,
                        sequence_number: Some(sequence_number(first)),
                    };
                    return Ok((None, sent));
                }
            }
        }
        let fifo = dedup_id.is_some();
        let stored = StoredMessage {
            message_id: message_id(self.id, seq),
            md5_of_body,
            body: m.body,
            attributes: m.attributes,
            group_id: m.group_id,
            sequence_number: fifo.then(|| sequence_number(seq)),
            dedup_id,
            sent_ms: epoch_ms,
            first_receive_ms: None,
            dead_letter_source: None,
            earlier_receives: 0,
        };
        let sent = Sent {
            message_id: stored.message_id.clone(),
            md5_of_body: stored.md5_of_body.clone(),
            md5_of_attributes,
            sequence_number: stored.sequence_number.clone(),
        };
        if fifo {
            // Published by the deduplicating send above.
            self.messages.insert(seq, stored);
            self.waiters.notify_waiters();
        } else {
            let published = self.publish(now, m.delay_s, stored);
            debug_assert_eq!(published, seq);
        }
        Ok((Some(seq), sent))
    }

    /// The deduplication id of a send to a FIFO queue (`None` on a standard queue), or the error
    /// SQS answers: a FIFO send needs `MessageGroupId`, and `MessageDeduplicationId` unless the
    /// queue has `ContentBasedDeduplication` (then it is the SHA-256 of the body), and takes no
    /// `DelaySeconds` of its own; a standard queue takes no `MessageDeduplicationId`.
    fn fifo_checks(&self, m: &NewMessage) -> Result<Option<String>, SqsError> {
        if !self.settings.fifo {
            if m.dedup_id.is_some() {
                return Err(SqsError::invalid(
                    "MessageDeduplicationId",
                    "The request include parameter that is not valid for this queue type",
                ));
            }
            return Ok(None);
        }
        if m.group_id.is_none() {
            return Err(SqsError::missing("MessageGroupId"));
        }
        if let Some(d) = m.delay_s.filter(|&d| d > 0) {
            return Err(SqsError::invalid(
                "DelaySeconds",
                format!(
                    "Value {d} for parameter DelaySeconds is invalid. Reason: The request include \
                     parameter that is not valid for this queue type."
                ),
            ));
        }
        match &m.dedup_id {
            Some(id) => Ok(Some(id.clone())),
            None if self.settings.content_based_deduplication => {
                use sha2::Digest;
                let hash = sha2::Sha256::digest(m.body.as_bytes());
                Ok(Some(hash.iter().map(|b| format!("{b:02x}")).collect()))
            }
            None => Err(SqsError::invalid(
                "MessageDeduplicationId",
                "The queue should either have ContentBasedDeduplication enabled or \
                 MessageDeduplicationId provided explicitly",
            )),
        }
    }

    /// Hands out up to `r.max_messages` visible messages to `worker`.
    pub fn receive(
        &mut self,
        now: Nanos,
        epoch_ms: u64,
        worker: WorkerId,
        r: &Receive,
        codec: &ReceiptCodec,
    ) -> Vec<Received> {
        let timeout = r
            .visibility_timeout_s
            .map_or(self.broker.config().visibility_timeout, |s| {
                self.wire_time.nanos(u64::from(s))
            });
        let mut out = Vec::new();
        while out.len() < r.max_messages as usize {
            let Some(h) = self
                .broker
                .receive_for(now, worker, timeout, &mut self.events)
            else {
                break;
            };
            let Some(m) = self.messages.get_mut(&h.receipt.seq) else {
                continue;
            };
            let first = *m.first_receive_ms.get_or_insert(epoch_ms);
            let all = r.system_attributes.iter().any(|a| a == "All");
            let wants = |name: &str| all || r.system_attributes.iter().any(|a| a == name);
            let mut attributes = BTreeMap::new();
            let mut put = |name: &str, value: String| {
                if wants(name) {
                    attributes.insert(name.to_string(), value);
                }
            };
            put(
                "ApproximateReceiveCount",
                (m.earlier_receives + h.receive_count).to_string(),
            );
            put("SentTimestamp", m.sent_ms.to_string());
            put("ApproximateFirstReceiveTimestamp", first.to_string());
            put("SenderId", "000000000000".to_string());
            if let Some(g) = &m.group_id {
                put("MessageGroupId", g.clone());
            }
            if let Some(d) = &m.dedup_id {
                put("MessageDeduplicationId", d.clone());
            }
            if let Some(n) = &m.sequence_number {
                put("SequenceNumber", n.clone());
            }
            if let Some(src) = &m.dead_letter_source {
                put("DeadLetterQueueSourceArn", src.clone());
            }
            let message_attributes = ma::select(&m.attributes, &r.message_attributes);
            out.push(Received {
                message_id: m.message_id.clone(),
                receipt_handle: codec.encode(self.id, h.receipt),
                md5_of_body: m.md5_of_body.clone(),
                body: m.body.clone(),
                attributes,
                md5_of_message_attributes: ma::md5_of_attributes(&message_attributes),
                message_attributes,
                seq: h.receipt.seq,
                receive_count: h.receive_count,
            });
        }
        out
    }

    /// The receipt a handle proves, if it is one of this queue's.
    pub(super) fn receipt(&self, codec: &ReceiptCodec, handle: &str) -> Result<Receipt, SqsError> {
        let (queue, receipt) = codec.decode(handle).map_err(|e| match e {
            ReceiptError::Malformed => SqsError::invalid_receipt("it is malformed"),
            ReceiptError::Forged => SqsError::invalid_receipt("it was not issued by this broker"),
        })?;
        if queue != self.id || receipt.seq == 0 || receipt.seq as usize > self.broker.len() {
            return Err(SqsError::invalid_receipt("it belongs to another queue"));
        }
        Ok(receipt)
    }

    /// `DeleteMessage`, with the broker's `stale_ack` policy for a receipt that is no longer
    /// current: `reject` answers `ReceiptHandleIsInvalid`; `ignore` answers success and leaves the
    /// message; `delete` answers success and deletes it; `sqs` (what SQS does) answers success
    /// and deletes it when the handle is the latest and nobody received the message since its
    /// lease ended, and leaves it otherwise.
    pub fn delete(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        codec: &ReceiptCodec,
        handle: &str,
    ) -> Result<(), SqsError> {
        let receipt = self.receipt(codec, handle)?;
        match self.broker.ack(now, receipt, worker, &mut self.events) {
            Ok(AckOutcome::Deleted | AckOutcome::StaleDeleted | AckOutcome::LateDeleted) => {
                self.forget(receipt.seq);
                if self.settings.fifo && self.broker.has_visible() {
                    // The message's group is free again: its next message can be received.
                    self.waiters.notify_waiters();
                }
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(_) => Err(SqsError::invalid_receipt("the receipt handle has expired")),
        }
    }

    /// `ChangeMessageVisibility`: a new lease end `timeout_s` from now (0 ends it at once). A
    /// receipt that is not current is refused, as SQS does for a message not in flight, except
    /// under `stale_ack: sqs` the latest handle of a message nobody received since its lease
    /// ended: accepted, as SQS does (the message is hidden again for `timeout_s`).
    pub fn change_visibility(
        &mut self,
        now: Nanos,
        worker: WorkerId,
        codec: &ReceiptCodec,
        handle: &str,
        timeout_s: u32,
    ) -> Result<(), SqsError> {
        let receipt = self.receipt(codec, handle)?;
        self.broker
            .change_visibility(
                now,
                receipt,
                worker,
                self.wire_time.nanos(u64::from(timeout_s)),
                &mut self.events,
            )
            .map_err(|_| {
                SqsError::invalid(
                    "ReceiptHandle",
                    "Message does not exist or is not available for visibility timeout change.",
                )
            })?;
        if timeout_s == 0 {
            self.waiters.notify_waiters();
        }
        Ok(())
    }

    /// Ends due delays and leases; wakes long pollers when messages became visible.
    pub fn advance(&mut self, now: Nanos) {
        if self.broker.next_due().is_some_and(|t| t <= now) {
            let before = (self.broker.counts().visible, self.broker.has_visible());
            self.broker.advance(now, &mut self.events);
            // On a FIFO queue a dead-lettered head frees its group: receivable, none more visible.
            if self.broker.counts().visible > before.0 || (!before.1 && self.broker.has_visible()) {
                self.waiters.notify_waiters();
            }
        }
    }

    /// Messages the broker dead-lettered since the last call, ready to publish into the DLQ.
    pub fn take_dead_letters(&mut self) -> Vec<StoredMessage> {
        // Receive counts before the broker forgets what it takes.
        let counts: Vec<(Seq, u32)> = self
            .broker
            .dlq()
            .iter()
            .map(|&seq| (seq, self.broker.receive_count(seq).unwrap_or(0)))
            .collect();
        self.broker.take_dlq();
        let letters = counts
            .into_iter()
            .filter_map(|(seq, receives)| self.messages.remove(&seq).map(|m| (m, receives)))
            .map(|(mut m, receives)| {
                m.dead_letter_source = Some(self.arn.clone());
                m.earlier_receives += receives;
                m
            })
            .collect();
        self.give_back_room();
        letters
    }

    /// Drops what the queue kept of a message it no longer holds.
    fn forget(&mut self, seq: Seq) {
        self.messages.remove(&seq);
        self.give_back_room();
    }

    /// Shrinks the message map once it holds under a quarter of its room, so that a backlog
    /// that drained does not keep its peak size.
    fn give_back_room(&mut self) {
        let (len, room) = (self.messages.len(), self.messages.capacity());
        if room > 1024 && len < room / 4 {
            self.messages.shrink_to(len * 2);
        }
    }

    /// `GetQueueAttributes` for `names` (`All` or names; unknown names checked by the caller).
    pub fn attributes(&self, names: &[String]) -> BTreeMap<String, String> {
        let all = names.iter().any(|n| n == "All");
        let c = self.broker.counts();
        let mut out = BTreeMap::new();
        for &name in qa::NAMES {
            if !all && !names.iter().any(|n| n == name) {
                continue;
            }
            let value = match name {
                "ApproximateNumberOfMessages" => Some(c.visible.to_string()),
                "ApproximateNumberOfMessagesNotVisible" => Some(c.leased.to_string()),
                "ApproximateNumberOfMessagesDelayed" => Some(c.delayed.to_string()),
                "CreatedTimestamp" => Some(self.created_s.to_string()),
                "LastModifiedTimestamp" => Some(self.modified_s.to_string()),
                "DelaySeconds" => Some(self.settings.delay_s.to_string()),
                "MaximumMessageSize" => Some(self.settings.max_message_size.to_string()),
                "MessageRetentionPeriod" => Some(self.settings.retention_s.to_string()),
                "ReceiveMessageWaitTimeSeconds" => Some(self.settings.receive_wait_s.to_string()),
                "VisibilityTimeout" => Some(
                    self.wire_time
                        .secs(self.broker.config().visibility_timeout)
                        .to_string(),
                ),
                "QueueArn" => Some(self.arn.clone()),
                "RedrivePolicy" => self.settings.redrive.as_ref().map(|p| p.to_json()),
                "RedriveAllowPolicy" => self.settings.redrive_allow_policy.clone(),
                "Policy" => self.settings.policy.clone(),
                "SqsManagedSseEnabled" => Some("false".to_string()),
                "FifoQueue" if self.settings.fifo => Some("true".to_string()),
                "ContentBasedDeduplication" if self.settings.fifo => {
                    Some(self.settings.content_based_deduplication.to_string())
                }
                "DeduplicationScope" if self.settings.fifo => Some("queue".to_string()),
                "FifoThroughputLimit" if self.settings.fifo => Some("perQueue".to_string()),
                _ => None,
            };
            if let Some(v) = value {
                out.insert(name.to_string(), v);
            }
        }
        out
    }

    /// Applies attributes (all or none). Returns the broker config and settings they give.
    pub fn with_attributes(
        config: BrokerConfig,
        settings: &QueueSettings,
        attributes: &BTreeMap<String, String>,
        wire_time: WireTime,
    ) -> Result<(BrokerConfig, QueueSettings), SqsError> {
        let (mut config, mut settings) = (config, settings.clone());
        for (k, v) in attributes {
            qa::set(&mut settings, &mut config, k, v, wire_time)?;
        }
        if settings.content_based_deduplication && !settings.fifo {
            return Err(SqsError::new(
                ErrorCode::InvalidAttributeName,
                "Unknown Attribute ContentBasedDeduplication.",
            ));
        }
        Ok((config, settings))
    }

    /// `PurgeQueue`: deletes every message the queue holds; in-flight receipts become stale.
    /// Bodies go with them; dead letters not yet moved stay. A second purge within 60 s of the
    /// last one is refused with `PurgeQueueInProgress`, as SQS does.
    pub fn purge(&mut self, now: Nanos) -> Result<(), SqsError> {
        if let Some(at) = self
            .purged_at
            .filter(|&at| now < at.saturating_add(PURGE_EVERY))
        {
            let left_s = (at + PURGE_EVERY - now).div_ceil(S);
            return Err(SqsError::new(
                ErrorCode::PurgeQueueInProgress,
                format!(
                    "Only one PurgeQueue operation on {} is allowed every 60 seconds (the next in {left_s} s).",
                    self.name
                ),
            ));
        }
        self.purged_at = Some(now);
        self.broker.purge();
        let broker = &self.broker;
        self.messages
            .retain(|&seq, _| broker.state(seq) == Some(MessageState::DeadLettered));
        self.messages.shrink_to_fit();
        Ok(())
    }
}

/// A message id in UUID form that names the queue incarnation and the seq.
pub fn message_id(queue: u32, seq: Seq) -> String {
    format!("{queue:08x}-0000-4000-8000-{seq:012x}")
}

/// The broker configuration of queues created over the API when nothing else is said: SQS's
/// 30 s visibility timeout, no delivery limit, and SQS's stale-ack behaviour (`stale_ack: sqs`:
/// the latest receipt handle still deletes after its lease ended while nobody received the
/// message since; an older one succeeds and leaves the message).
pub fn default_broker_config() -> BrokerConfig {
    BrokerConfig {
        visibility_timeout: 30 * S,
        max_receives: 0,
        stale_ack: StaleAck::Sqs,
    }
}
