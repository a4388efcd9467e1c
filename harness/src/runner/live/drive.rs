//! The driving stage of a live run: publish on the plan's schedule, every send of it
//! ([`super::sends`]), or let the ingress load publish, report progress, and stop when the run is drained, at the drain limit, on an
//! interruption or when something failed.
//!
//! The loop sleeps until the next publish is due, something happens in the run (the run's
//! state records an event), or the next look at the broker ([`LOOK_EVERY`]), whichever comes
//! first: it does not spin, and progress reads running counters, not a copy of the ledger.
//! What happens in the run wakes it at most once every [`GATHER`] (a busy run records several
//! events per message: they are looked at together, not one wake-up each); a publish that is
//! due wakes it on time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::ingress::IngressRun;
use super::kinds::LiveBroker;
use super::sends::{Sends, Shape};
use super::state::LiveState;
use super::workers::Workers;
use crate::profile::Scenario;
use crate::provider::http::HttpProvider;
use crate::record::{MessageRecord, PublishRecord};
use crate::runner::{Progress, RunError};
use crate::workload::Plan;

/// How often the loop looks at the broker when nothing else wakes it (what only the broker
/// sees, such as a message dead-lettered at the end of its lease, is noticed this late at most).
pub const LOOK_EVERY: Duration = Duration::from_millis(50);
/// The least time between two looks that events in the run wake the loop for: the events of
/// a busy run (a delivery, a handler's end, an ack per message, thousands a second) are
/// gathered into one look, and the run's end (drained for [`SETTLE`]) is seen this much later
/// at most.
pub const GATHER: Duration = Duration::from_millis(5);
/// How often progress is reported.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);
/// How long a run must look drained before it ends: a consumer that acks before its work
/// (Celery's default) has nothing unsettled and no handler running between its ack and its
/// provider call, and a call that starts within this time keeps the run going.
pub const SETTLE: Duration = Duration::from_millis(500);

/// What the run's loop works with.
pub struct Drive<'a> {
    pub scenario: &'a Scenario,
    pub plan: &'a Plan,
    pub broker: &'a dyn LiveBroker,
    pub state: &'a Arc<LiveState>,
    pub provider: &'a HttpProvider,
    pub ingress: Option<&'a IngressRun>,
    pub workers: &'a mut Workers,
}

/// How the loop ended.
pub struct Driven {
    /// The messages published, in order (the ingress load's are known only when it finishes).
    pub messages: Vec<MessageRecord>,
    /// Every send and what the broker made of it, when the plan lists its sends.
    pub publishes: Option<Vec<PublishRecord>>,
    pub interrupted: bool,
    pub failure: Option<RunError>,
}

impl Driven {
    /// This end, with what the sends recorded.
    fn with(mut self, sends: Sends<'_>) -> Driven {
        self.messages = sends.messages;
        self.publishes = sends.publishes;
        self
    }
}

impl Drive<'_> {
    pub async fn run(
        self,
        progress: &mut dyn FnMut(Progress),
        interruptions: &mut watch::Receiver<u64>,
    ) -> Driven {
        let Drive {
            scenario: s,
            plan,
            broker,
            state,
            provider,
            ingress,
            workers,
        } = self;
        let started = Instant::now();
        let hard_end = state
            .clock
            .wall(crate::record::nanos(s.run.duration + s.run.drain));
        let mut out = Driven {
            messages: Vec::new(),
            publishes: None,
            interrupted: false,
            failure: None,
        };
        let shape = s
            .workload
            .message
            .as_ref()
            .map(|spec| Shape { spec, seed: s.seed });
        let mut sends = Sends::new(
            plan,
            broker,
            state,
            provider,
            s.broker.fifo.is_some(),
            shape,
        );
        // With an ingress load, the plan is the load's to send.
        let mut next = if ingress.is_some() {
            plan.send_count()
        } else {
            0
        };
        let mut last_progress: Option<Instant> = None;
        let mut drained_since: Option<Instant> = None;
        loop {
            let looked = Instant::now();
            let now = state.clock.now();
            while next < plan.send_count() && plan.send_at(next).is_some_and(|t| t <= now) {
                next += 1;
                if let Err(e) = sends.send(next - 1, now).await {
                    out.failure = Some(RunError::Live(e));
                    return out.with(sends);
                }
            }
            if let Some(e) = workers.failed() {
                out.failure = Some(e);
                return out.with(sends);
            }
            let counts = match broker.counts().await {
                Ok(c) => c,
                Err(e) => {
                    out.failure = Some(RunError::Live(e));
                    return out.with(sends);
                }
            };
            if last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
                let (effects, duplicate_effects) = provider.running_counts();
                progress(Progress {
                    now_s: crate::record::secs_f64(now),
                    published: ingress.map_or(sends.keys_published(), |i| i.published()) as u64,
                    effects,
                    duplicate_effects,
                    dlq: counts.dead_lettered,
                });
                last_progress = Some(Instant::now());
            }
            let publishing =
                next < plan.send_count() || ingress.is_some_and(|i| !i.load_finished());
            // A consumer that acks before its work leaves nothing unsettled and no handler
            // running while its provider call is still open: not drained until that ends.
            let mut drained = !publishing
                && counts.unsettled == 0
                && !state.busy()
                && provider.calls_in_flight() == 0;
            if s.broker.observe == crate::profile::Observe::Direct {
                // Without the proxy the run sees no handler: drained once every message has
                // had its effect or was given up on, and the broker holds nothing.
                let (effects, duplicates) = provider.running_counts();
                drained &= effects.saturating_sub(duplicates) + counts.dead_lettered
                    >= sends.keys_published() as u64;
            }
            if !drained {
                drained_since = None;
            }
            let settled =
                drained && drained_since.get_or_insert_with(Instant::now).elapsed() >= SETTLE;
            if settled || started.elapsed() >= hard_end {
                return out.with(sends);
            }
            let until_publish = plan
                .send_at(next)
                .map(|t| state.clock.wall(t.saturating_sub(now)))
                .unwrap_or(Duration::MAX);
            tokio::select! {
                _ = tokio::time::sleep(until_publish.min(LOOK_EVERY)) => {}
                _ = async {
                    state.activity().await;
                    tokio::time::sleep_until((looked + GATHER).into()).await;
                } => {}
                _ = interruptions.changed() => {
                    out.interrupted = true;
                    return out.with(sends);
                }
            }
        }
    }
}
