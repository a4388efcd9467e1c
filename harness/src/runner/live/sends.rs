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
//!
//! A send to a standard queue is recorded when it is handed to the broker, before its
//! confirmation ([`super::publisher`] keeps a window of them): its outcome is known then (the
//! broker takes every send, or the run fails with the confirmation's error). A FIFO send's
//! outcome is the broker's answer (a repeat is dropped), so it is awaited here, one send at a
//! time, as the deduplication the run reports must be the broker's own.

use std::collections::HashSet;
use std::sync::Arc;

use super::kinds::{confirmed, Confirmation, FifoSend, LiveBroker};
use super::state::LiveState;
use crate::profile::message::MessageSpec;
use crate::provider::http::HttpProvider;
use crate::record::{EventKind, MessageRecord, Nanos, PublishRecord, Seq};
use crate::workload::message::{self, Outgoing};
use crate::workload::{Attempt, Fill, Plan};

/// `workload.message` of a run, with what its placeholders need besides the message.
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    pub spec: &'a MessageSpec,
    pub seed: u64,
}

/// The sends of one run and what they became.
pub struct Sends<'a> {
    plan: &'a Plan,
    broker: &'a dyn LiveBroker,
    state: &'a Arc<LiveState>,
    provider: &'a HttpProvider,
    fifo: bool,
    shape: Option<Shape<'a>>,
    /// Broker messages, index `seq - 1`.
    pub messages: Vec<MessageRecord>,
    /// Every send and its outcome, when the plan lists its sends (`None`: one per message).
    pub publishes: Option<Vec<PublishRecord>>,
    /// Plan messages sent at least once (their first send is accepted).
    keys: HashSet<Seq>,
    /// Per send, how long after its planned instant it was made.
    pub lags: Vec<Nanos>,
}

impl<'a> Sends<'a> {
    pub fn new(
        plan: &'a Plan,
        broker: &'a dyn LiveBroker,
        state: &'a Arc<LiveState>,
        provider: &'a HttpProvider,
        fifo: bool,
        shape: Option<Shape<'a>>,
    ) -> Sends<'a> {
        Sends {
            plan,
            broker,
            state,
            provider,
            fifo,
            shape,
            messages: Vec::with_capacity(plan.len()),
            publishes: plan.sends.as_ref().map(|s| Vec::with_capacity(s.len())),
            keys: HashSet::with_capacity(plan.len()),
            lags: Vec::with_capacity(plan.send_count()),
        }
    }

    /// Plan message `planned` (key `key`) as the broker carries it: the order's JSON, or the
    /// profile's `workload.message` filled with it.
    fn message(&self, planned: Seq, key: &str) -> Outgoing {
        Outgoing {
            key: key.to_string(),
            ..self.shaped(planned, key)
        }
    }

    fn shaped(&self, planned: Seq, key: &str) -> Outgoing {
        let body = self.plan.body(planned);
        let Some(shape) = self.shape else {
            return Outgoing::plain(body);
        };
        let email = if self.plan.poison(planned) {
            String::new()
        } else {
            ackbench_targets::message::Order::of(key, u64::from(planned))
                .email()
                .to_string()
        };
        let id = message::message_id(shape.seed, planned);
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        message::render(
            shape.spec,
            &Fill {
                key,
                seq: planned,
                body: &body,
                email: &email,
                id: &id,
                queue: self.broker.queue_name(),
                now_ms,
                port: 0,
            },
        )
    }

    /// Plan messages (keys) published so far: those with an accepted send.
    pub fn keys_published(&self) -> usize {
        self.keys.len()
    }

    /// Makes send number `i` of the plan (0-based, time order) at `now`: hands it to the
    /// broker and records it; the confirmation is the broker's, to await later (a FIFO send's
    /// is already in).
    pub async fn send(&mut self, i: usize, now: Nanos) -> Result<Confirmation, String> {
        let a = match &self.plan.sends {
            Some(s) => s[i],
            None => Attempt {
                at: self.plan.publish_at(i).expect("a planned message"),
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
        let body = self.message(a.planned, &key);
        self.lags.push(now.saturating_sub(a.at));
        let (accepted, confirmation) = if self.fifo {
            let send = fifo_send(&key, group);
            let accepted = self.broker.publish_fifo(seq, body, &send).await?;
            (accepted, confirmed())
        } else {
            (true, self.broker.publish(seq, body).await?)
        };
        if accepted {
            self.messages.push(MessageRecord {
                key: self.plan.message_key(a.planned),
                published_at: now,
                poison: self.plan.poison(a.planned),
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
        Ok(confirmation)
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
    use std::sync::Mutex;

    use futures::FutureExt;

    use super::*;
    use crate::broker::dedup::Deduplicator;
    use crate::chaos::KillSchedule;
    use crate::provider::http::LiveClock;
    use crate::provider::ProviderModel;
    use crate::runner::live::kinds::{BoxFuture, Counts, Finished, QueueFactory};
    use crate::runner::live::state::StateHooks;

    const M: Nanos = 60_000_000_000;

    /// A FIFO broker that deduplicates at the time the test sets, and keeps what it was sent.
    struct Fifo {
        inner: Mutex<Queue>,
    }

    /// The queue's deduplication, the time now, and every accepted send.
    type Queue = (Deduplicator, Nanos, Vec<(Seq, FifoSend)>);
    /// A publish record as (half-minutes, planned, attempt, seq, group).
    type Row = (Nanos, u32, u32, Option<Seq>, Option<u32>);

    impl LiveBroker for Fifo {
        fn queue_name(&self) -> &str {
            "fifo"
        }
        fn publish(&self, _: Seq, _: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
            Box::pin(async { Err("a FIFO send publishes with publish_fifo".to_string()) })
        }
        fn publish_fifo<'a>(
            &'a self,
            seq: Seq,
            _: Outgoing,
            send: &'a FifoSend,
        ) -> BoxFuture<'a, Result<bool, String>> {
            let mut g = self.inner.lock().expect("lock");
            let now = g.1;
            let accepted = g.0.admit(now, &send.dedup_id);
            if accepted {
                g.2.push((seq, send.clone()));
            }
            Box::pin(std::future::ready(Ok(accepted)))
        }
        fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
            Box::pin(async { Ok(Counts::default()) })
        }
        fn worker_env(&self, _: u32) -> Vec<(String, String)> {
            Vec::new()
        }
        fn queues(&self) -> Arc<dyn QueueFactory> {
            unimplemented!("no worker in this test")
        }
        fn records_its_events(&self) -> bool {
            true
        }
        fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
            Box::pin(async { Finished::default() })
        }
    }

    #[tokio::test]
    async fn every_attempt_is_sent_in_its_group_and_recorded_as_the_sim_records_it() {
        // Two orders 30 s apart in two groups, the first three attempts of each unanswered,
        // backoff 1m, 2m, 4m: sends at 0, 0.5, 1, 1.5, 3, 3.5, 7, 7.5 minutes (order 1, 2, 1,
        // 2, ...). A 5-minute window drops attempts 2 and 3 of both (4 dropped) and accepts
        // attempt 4 of both (at 7 and 7.5 minutes, past 0 + 5 and 0.5 + 5): broker messages
        // 1 (msg-1), 2 (msg-2), 3 (msg-1), 4 (msg-2); 2 duplicate publishes.
        let s = crate::profile::testutil::scenario(
            "name: t
mode: live
run: { duration: 1m, time_scale: 0.01 }
broker: { fifo: true, dedup_window: 5m }
workload:
  arrival: { every: 30s }
  count: 2
  groups: 2
  producer: { first_attempts: 3, backoff: [1m, 2m, 4m] }
consumer: { target: ack-after-work }
",
        );
        let plan = crate::workload::plan(&s);
        let clock = LiveClock::new(1.0);
        let state = LiveState::new(clock, "q.fifo", 1, KillSchedule::new(&[], 1));
        let provider = HttpProvider::bind(
            "127.0.0.1:0".parse().expect("address"),
            ProviderModel::new(&s.provider, 1),
            clock,
            s.provider.key.clone(),
            1,
            Arc::new(StateHooks(state.clone())),
        )
        .await
        .expect("provider");
        let broker = Fifo {
            inner: Mutex::new((Deduplicator::new(5 * M), 0, Vec::new())),
        };
        let mut sends = Sends::new(&plan, &broker, &state, &provider, true, None);
        for i in 0..plan.send_count() {
            let at = plan.send_at(i).expect("a send");
            broker.inner.lock().expect("lock").1 = at;
            // A FIFO send's answer is awaited by the send itself: its confirmation is in.
            let confirmation = sends.send(i, at).await.expect("sent");
            assert_eq!(confirmation.now_or_never(), Some(Ok(())));
        }
        let p = sends.publishes.clone().expect("sends recorded");
        let got: Vec<Row> = p
            .iter()
            .map(|r| (r.at * 2 / M, r.planned, r.attempt, r.seq, r.group))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 1, 1, Some(1), Some(0)),
                (1, 2, 1, Some(2), Some(1)),
                (2, 1, 2, None, Some(0)),
                (3, 2, 2, None, Some(1)),
                (6, 1, 3, None, Some(0)),
                (7, 2, 3, None, Some(1)),
                (14, 1, 4, Some(3), Some(0)),
                (15, 2, 4, Some(4), Some(1)),
            ]
        );
        assert_eq!(
            p.iter().map(|r| r.acknowledged).collect::<Vec<_>>(),
            [false, false, false, false, false, false, true, true]
        );
        let keys: Vec<String> = sends.messages.iter().map(|m| m.key.to_string()).collect();
        assert_eq!(keys, ["msg-1", "msg-2", "msg-1", "msg-2"]);
        // The run's state names each broker message's key; dropped sends left none.
        assert_eq!(state.keys.lock().expect("lock").by_seq(), keys);
        assert_eq!(sends.keys_published(), 2);
        // Each send's lag: handed over at its planned instant, none late.
        assert_eq!(sends.lags, [0; 8]);
        let sent: Vec<(Seq, String, String)> = broker
            .inner
            .lock()
            .expect("lock")
            .2
            .iter()
            .map(|(q, f)| (*q, f.group_id.clone(), f.dedup_id.clone()))
            .collect();
        assert_eq!(
            sent,
            [
                (1, "group-1", "msg-1"),
                (2, "group-2", "msg-2"),
                (3, "group-1", "msg-1"),
                (4, "group-2", "msg-2"),
            ]
            .map(|(q, g, d)| (q, g.to_string(), d.to_string()))
        );
        let record = crate::record::RunRecord {
            messages: sends.messages.clone(),
            publishes: sends.publishes.clone(),
            ..Default::default()
        };
        assert_eq!(
            crate::metrics::copies::publish_counts(&record),
            Some(crate::metrics::copies::PublishCounts {
                duplicate_publishes: 2,
                publishes_deduplicated: 4
            })
        );
        provider.shutdown().await;
    }

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
