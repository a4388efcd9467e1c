//! The run's own producer in a live run: each send of the plan ([`Plan::sends`]: one per
//! message, or every attempt of a retrying producer, `workload.producer`) made at its instant,
//! and what the broker made of it, recorded as a sim run records it.
//!
//! A send to a FIFO queue (`broker.fifo`) carries the message's group as its `MessageGroupId`
//! (`group-<n + 1>` for the plan's group `n`, [`Plan::group`]) and the message's key as its
//! `MessageDeduplicationId`: the sim's broker deduplicates by key, and so does the endpoint with
//! that id. A send the broker accepts is broker message `seq`, the next it numbers; one it drops
//! as a repeat within its deduplication window is a publish record with no message. Effects
//! count by key, so the key names its first accepted message to the provider.

use std::collections::HashSet;
use std::sync::Arc;

use super::kinds::{FifoSend, LiveBroker};
use super::state::LiveState;
use crate::provider::http::HttpProvider;
use crate::record::{EventKind, MessageRecord, Nanos, PublishRecord, Seq};
use crate::workload::{Attempt, Plan};

/// The sends of one run and what they became.
pub struct Sends<'a> {
    plan: &'a Plan,
    broker: &'a dyn LiveBroker,
    state: &'a Arc<LiveState>,
    provider: &'a HttpProvider,
    fifo: bool,
    /// Broker messages, index `seq - 1`.
    pub messages: Vec<MessageRecord>,
    /// Every send and its outcome, when the plan lists its sends (`None`: one per message).
    pub publishes: Option<Vec<PublishRecord>>,
    /// Plan messages sent at least once (their first send is accepted).
    keys: HashSet<Seq>,
}

impl<'a> Sends<'a> {
    pub fn new(
        plan: &'a Plan,
        broker: &'a dyn LiveBroker,
        state: &'a Arc<LiveState>,
        provider: &'a HttpProvider,
        fifo: bool,
    ) -> Sends<'a> {
        Sends {
            plan,
            broker,
            state,
            provider,
            fifo,
            messages: Vec::with_capacity(plan.len()),
            publishes: plan.sends.as_ref().map(|s| Vec::with_capacity(s.len())),
            keys: HashSet::with_capacity(plan.len()),
        }
    }

    /// Plan messages (keys) published so far: those with an accepted send.
    pub fn keys_published(&self) -> usize {
        self.keys.len()
    }

    /// Makes send number `i` of the plan (0-based, time order) at `now`.
    pub async fn send(&mut self, i: usize, now: Nanos) -> Result<(), String> {
        let a = match &self.plan.sends {
            Some(s) => s[i],
            None => Attempt {
                at: self.plan.at[i],
                planned: i as u32 + 1,
                attempt: 1,
                acknowledged: true,
            },
        };
        let seq = self.messages.len() as Seq + 1;
        let key = self.plan.key(a.planned);
        let group = self.plan.group(a.planned);
        // Told before the broker has it: a worker may receive it before the send returns. A
        // key's first send is always accepted (keys are unique, so is its deduplication id).
        self.state.publishing(&key);
        if self.keys.insert(a.planned) {
            self.provider.publish_key(&key, seq);
        }
        if !self.broker.records_its_events() {
            self.state.record(EventKind::Published { seq });
        }
        let body = self.plan.body(a.planned);
        let accepted = if self.fifo {
            let send = fifo_send(&key, group);
            self.broker.publish_fifo(seq, body, &send).await?
        } else {
            self.broker.publish(seq, body).await?;
            true
        };
        if accepted {
            self.messages.push(MessageRecord {
                key: self.plan.message_key(a.planned),
                published_at: now,
                poison: self.plan.poison[(a.planned - 1) as usize],
            });
        } else {
            self.state.not_published();
        }
        if let Some(p) = &mut self.publishes {
            p.push(PublishRecord {
                at: now,
                planned: a.planned,
                attempt: a.attempt,
                seq: accepted.then_some(seq),
                acknowledged: a.acknowledged,
                group: self.plan.groups.map(|_| group),
            });
        }
        Ok(())
    }
}

/// The group and deduplication ids of a send of message `key` in the plan's group `group`.
pub fn fifo_send(key: &str, group: u32) -> FifoSend {
    FifoSend {
        group_id: format!("group-{}", u64::from(group) + 1),
        dedup_id: key.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_the_group_as_reports_do_and_deduplicate_by_key() {
        // Plan group 0 is group-1 in reports; the key is the deduplication id as written.
        assert_eq!(
            fifo_send("msg-3", 0),
            FifoSend {
                group_id: "group-1".into(),
                dedup_id: "msg-3".into()
            }
        );
        assert_eq!(fifo_send("order 7", u32::MAX).group_id, "group-4294967296");
    }
}
