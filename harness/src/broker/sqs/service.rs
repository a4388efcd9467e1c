//! Executes parsed requests against the queues: the broker state behind one lock, read at
//! wall-clock time, with long polling for `ReceiveMessage`.

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Instant;

use tokio::sync::watch;

use super::clock::Clock;
use super::error::{ErrorCode, SqsError};
use super::hooks::Delete;
use super::queue::StoredMessage;
use super::queue_attributes as qa;
use super::receipt::ReceiptCodec;
use super::registry::Registry;
use super::request::{Action, Receive, Request};
use super::response::{BatchFailure, Received, Response};
use super::timer::Timer;
use crate::record::{Nanos, Seq, WorkerId};

/// The shared state of one server.
#[derive(Debug)]
pub struct Service {
    state: Mutex<Registry>,
    pub clock: Clock,
    codec: ReceiptCodec,
    pub timer: Timer,
    shutdown: watch::Receiver<bool>,
    hooks: super::Hooks,
    /// This service itself, for a delete a fault applies later.
    me: Weak<Service>,
}

impl Service {
    pub fn new(
        registry: Registry,
        clock: Clock,
        shutdown: watch::Receiver<bool>,
        hooks: super::Hooks,
    ) -> Arc<Service> {
        Arc::new_cyclic(|me| Service {
            state: Mutex::new(registry),
            clock,
            codec: ReceiptCodec::random(),
            timer: Timer::default(),
            shutdown,
            hooks,
            me: me.clone(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding the lock cannot leave a broker half-updated in a way that
        // matters more than stopping the server would: keep serving.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the state at the current instant: every broker is first advanced to now, and
    /// afterwards new dead letters are moved and the driver re-armed if a due time came earlier.
    pub fn with_state<R>(&self, f: impl FnOnce(&mut Registry, Nanos) -> R) -> R {
        let mut st = self.lock();
        let now = self.clock.now();
        st.advance_all(now);
        let r = f(&mut st, now);
        st.move_dead_letters(now);
        st.forget_events();
        self.timer.due(st.next_due());
        r
    }

    /// Advances every broker to now and returns the next due time (the driver's step).
    pub fn tick(&self) -> Option<Nanos> {
        let mut st = self.lock();
        st.advance_all(self.clock.now());
        st.forget_events();
        let due = st.next_due();
        self.timer.armed_for(due);
        due
    }

    fn epoch_s(&self, now: Nanos) -> u64 {
        self.clock.epoch_ms(now) / 1000
    }

    /// Executes one request.
    pub async fn execute(&self, req: Request) -> Result<Response, SqsError> {
        let key = req.access_key;
        match req.action {
            Action::ReceiveMessage(r) => self.receive(key.as_deref(), r).await,
            action => self.with_state(|st, now| {
                let worker = st.workers.id(key.as_deref());
                self.apply(st, now, worker, action)
            }),
        }
    }

    /// Every operation but `ReceiveMessage`.
    fn apply(
        &self,
        st: &mut Registry,
        now: Nanos,
        worker: WorkerId,
        action: Action,
    ) -> Result<Response, SqsError> {
        let epoch_ms = self.clock.epoch_ms(now);
        Ok(match action {
            Action::CreateQueue {
                name,
                attributes,
                tags,
            } => Response::QueueUrl(st.create(&name, &attributes, &tags, self.epoch_s(now))?),
            Action::TagQueue { queue, tags } => {
                let q = st.get(&queue)?;
                super::tags::add(&queue, &mut q.tags, &tags)?;
                Response::Empty
            }
            Action::UntagQueue { queue, keys } => {
                super::tags::remove(&mut st.get(&queue)?.tags, &keys);
                Response::Empty
            }
            Action::ListQueueTags { queue } => {
                Response::ListQueueTags(st.get(&queue)?.tags.clone())
            }
            Action::ListDeadLetterSourceQueues {
                queue,
                max_results,
                next_token,
            } => {
                let (queue_urls, next_token) =
                    st.dead_letter_sources(&queue, max_results, next_token.as_deref())?;
                Response::ListDeadLetterSourceQueues {
                    queue_urls,
                    next_token,
                }
            }
            Action::GetQueueUrl { name } => {
                st.get(&name)?;
                Response::QueueUrl(st.url(&name))
            }
            Action::ListQueues {
                prefix,
                max_results,
                next_token,
            } => {
                let (queue_urls, next_token) =
                    st.list(prefix.as_deref(), max_results, next_token.as_deref());
                Response::ListQueues {
                    queue_urls,
                    next_token,
                }
            }
            Action::DeleteQueue { queue } => {
                st.delete(&queue)?;
                crate::serving::trim::released();
                Response::Empty
            }
            Action::PurgeQueue { queue } => {
                st.get(&queue)?.purge(now)?;
                crate::serving::trim::released();
                Response::Empty
            }
            Action::GetQueueAttributes { queue, names } => {
                let q = st.get(&queue)?;
                if let Some(bad) = names.iter().find(|n| !qa::is_known(n)) {
                    return Err(SqsError::new(
                        ErrorCode::InvalidAttributeName,
                        format!("Unknown Attribute {bad}."),
                    ));
                }
                Response::GetQueueAttributes(q.attributes(&names))
            }
            Action::SetQueueAttributes { queue, attributes } => {
                st.set_attributes(&queue, &attributes, self.epoch_s(now))?;
                Response::Empty
            }
            Action::SendMessage { queue, message } => {
                let q = st.get(&queue)?;
                let (seq, sent) = q.send(now, epoch_ms, message)?;
                self.tell_sent(&queue, q, seq, worker);
                Response::SendMessage(sent)
            }
            Action::SendMessageBatch { queue, entries } => {
                let q = st.get(&queue)?;
                let total: usize = entries
                    .iter()
                    .filter_map(|(_, e)| e.as_ref().ok())
                    .map(|m| StoredMessage::size(&m.body, &m.attributes))
                    .sum();
                if total > q.settings.max_message_size {
                    return Err(SqsError::new(
                        ErrorCode::BatchRequestTooLong,
                        format!("Batch requests cannot be longer than {} bytes. You have sent {total} bytes.", q.settings.max_message_size),
                    ));
                }
                let (mut successful, mut failed) = (Vec::new(), Vec::new());
                for (id, entry) in entries {
                    match entry.and_then(|m| q.send(now, epoch_ms, m)) {
                        Ok((seq, sent)) => {
                            self.tell_sent(&queue, q, seq, worker);
                            successful.push((id, sent));
                        }
                        Err(error) => failed.push(BatchFailure { id, error }),
                    }
                }
                Response::SendMessageBatch { successful, failed }
            }
            Action::DeleteMessage { queue, receipt } => {
                self.delete(st, now, worker, &queue, &receipt)?;
                Response::Empty
            }
            Action::DeleteMessageBatch { queue, entries } => {
                st.get(&queue)?;
                let (mut successful, mut failed) = (Vec::new(), Vec::new());
                for (id, receipt) in entries {
                    match self.delete(st, now, worker, &queue, &receipt) {
                        Ok(()) => successful.push(id),
                        Err(error) => failed.push(BatchFailure { id, error }),
                    }
                }
                Response::Batch { successful, failed }
            }
            Action::ChangeMessageVisibility {
                queue,
                receipt,
                timeout_s,
            } => {
                st.get(&queue)?
                    .change_visibility(now, worker, &self.codec, &receipt, timeout_s)?;
                Response::Empty
            }
            Action::ChangeMessageVisibilityBatch { queue, entries } => {
                let q = st.get(&queue)?;
                let (mut successful, mut failed) = (Vec::new(), Vec::new());
                for e in entries {
                    match q.change_visibility(now, worker, &self.codec, &e.receipt, e.timeout_s) {
                        Ok(()) => successful.push(e.id),
                        Err(error) => failed.push(BatchFailure { id: e.id, error }),
                    }
                }
                Response::Batch { successful, failed }
            }
            Action::ReceiveMessage(r) => {
                let q = st.get(&r.queue)?;
                Response::ReceiveMessage(q.receive(now, epoch_ms, worker, &r, &self.codec))
            }
        })
    }

    /// `DeleteMessage` of `handle`, unless a fault drops it or holds it back: then the worker
    /// is answered success at once and the queue never hears of it, or hears of it later (and
    /// judges it then, by its `stale_ack` policy).
    fn delete(
        &self,
        st: &mut Registry,
        now: Nanos,
        worker: WorkerId,
        queue: &str,
        handle: &str,
    ) -> Result<(), SqsError> {
        let q = st.get(queue)?;
        let r = q.receipt(&self.codec, handle)?;
        match self.hooks.delete(queue, worker, r.seq, r.nonce) {
            Delete::Now => q.delete(now, worker, &self.codec, handle),
            Delete::Dropped => Ok(()),
            Delete::Later(wall) => {
                let (me, queue, handle) = (self.me.clone(), queue.to_string(), handle.to_string());
                tokio::spawn(async move {
                    tokio::time::sleep(wall).await;
                    let Some(me) = me.upgrade() else { return };
                    me.with_state(|st, now| {
                        if let Ok(q) = st.get(&queue) {
                            // Judged now; nobody waits for the answer.
                            let _judged = q.delete(now, worker, &me.codec, &handle);
                        }
                    });
                });
                Ok(())
            }
        }
    }

    /// `ReceiveMessage` with long polling: waits up to `WaitTimeSeconds` (or the queue's
    /// `ReceiveMessageWaitTimeSeconds`) and answers as soon as a message is sent, a lease
    /// expires, or a delay ends; answers empty at once when the server shuts down.
    async fn receive(&self, access_key: Option<&str>, r: Receive) -> Result<Response, SqsError> {
        // First look: most receives of a busy queue answer at once.
        let first = self.with_state(|st, now| {
            let worker = st.workers.id(access_key);
            self.hooks.receive_requested(&r.queue, worker);
            let q = st.get(&r.queue)?;
            let got = q.receive(now, self.clock.epoch_ms(now), worker, &r, &self.codec);
            let wait = q
                .wire_time
                .duration(r.wait_s.unwrap_or(q.settings.receive_wait_s));
            Ok::<_, SqsError>((got, wait, q.waiters.clone(), q.id, worker))
        })?;
        let (got, wait, waiters, id, worker) = first;
        let got = self.deliver(&r.queue, worker, got).await;
        if !got.is_empty() || wait.is_zero() {
            return Ok(Response::ReceiveMessage(got));
        }
        let deadline = Instant::now() + wait;
        let mut shutdown = self.shutdown.clone();
        loop {
            // Listen before looking, so that a send between the look and the wait is not missed.
            let notified = waiters.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let got = self.with_state(|st, now| {
                let q = st.get(&r.queue)?;
                if q.id != id {
                    return Err(SqsError::queue_does_not_exist());
                }
                Ok(q.receive(now, self.clock.epoch_ms(now), worker, &r, &self.codec))
            })?;
            let got = self.deliver(&r.queue, worker, got).await;
            if !got.is_empty() || Instant::now() >= deadline || *shutdown.borrow() {
                return Ok(Response::ReceiveMessage(got));
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(deadline.into()) => {}
                changed = shutdown.changed() => {
                    if changed.is_err() {
                        // The server is gone: answer what we have (nothing).
                        return Ok(Response::ReceiveMessage(Vec::new()));
                    }
                }
            }
        }
    }

    /// Tells the hooks about the message `seq` that `q` just stored for `worker` (0: a client
    /// that is no worker).
    /// A send a FIFO queue dropped as a repeat (`None`) stored nothing.
    fn tell_sent(
        &self,
        queue: &str,
        q: &super::queue::SqsQueue,
        seq: Option<Seq>,
        worker: WorkerId,
    ) {
        if let Some((seq, m)) = seq.and_then(|seq| Some((seq, q.messages.get(&seq)?))) {
            self.hooks.sent(queue, worker, seq, &m.body);
        }
    }

    /// Tells the hooks what `worker` was handed, less what a fault drops from the answer (leased
    /// all the same); never answers a worker being killed (its process dies with the request
    /// open, so it cannot ack what it never saw).
    async fn deliver(&self, queue: &str, worker: WorkerId, got: Vec<Received>) -> Vec<Received> {
        let got: Vec<Received> = got
            .into_iter()
            .filter(|m| {
                !self
                    .hooks
                    .delivery_dropped(queue, worker, m.seq, m.receive_count)
            })
            .collect();
        let handed: Vec<(Seq, u32)> = got.iter().map(|m| (m.seq, m.receive_count)).collect();
        if !handed.is_empty() && self.hooks.delivered(queue, worker, &handed) {
            std::future::pending::<()>().await;
        }
        got
    }

    /// The driver: advances the brokers whenever a delay or lease ends, until shutdown.
    pub async fn drive(self: Arc<Service>) {
        let mut shutdown = self.shutdown.clone();
        loop {
            if *shutdown.borrow() {
                return;
            }
            let due = self.tick();
            let sleep = async {
                match due {
                    Some(t) => tokio::time::sleep_until(self.clock.instant(t).into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = sleep => {}
                _ = self.timer.woken() => {}
                changed = shutdown.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
            }
        }
    }

    /// Locks the state for a direct look or change (the server's programmatic API).
    pub fn state(&self) -> MutexGuard<'_, Registry> {
        self.lock()
    }
}
