//! The driving stage of a live run: publish on the plan's schedule, every send of it
//! ([`super::sends`]), or let the ingress load publish, report progress, and stop when the run is drained, at the drain limit, on an
//! interruption or when something failed.
//!
//! The loop sleeps until the next publish is due, something happens in the run (the run's
//! state records an event), a publish is confirmed ([`super::publisher`]: a window of them is
//! outstanding), or the next look at the broker ([`LOOK_EVERY`]), whichever comes first: it
//! does not spin, and progress reads running counters, not a copy of the ledger. While the run
//! publishes, its look at the broker's counts is a request in flight beside the sends, so no
//! send waits for one. What happens in the run wakes it at most once every [`GATHER`] (a busy
//! run records several events per message: they are looked at together, not one wake-up each);
//! a publish that is due, or a confirmation, wakes it on time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::ingress::IngressRun;
use super::kinds::{BoxFuture, Counts, LiveBroker};
use super::publisher::Publisher;
use super::sends::{Sends, Shape};
use super::state::LiveState;
use super::workers::Workers;
use crate::profile::Scenario;
use crate::provider::http::HttpProvider;
use crate::record::{MessageRecord, PublishRecord, PublisherRecord};
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
    /// How the run's own sends kept the schedule; `None` when an ingress load published.
    pub publisher: Option<PublisherRecord>,
    pub interrupted: bool,
    pub failure: Option<RunError>,
}

impl Driven {
    /// This end, with what the sends recorded (the publisher's record unless an ingress load
    /// published).
    fn with(mut self, publisher: Publisher<'_>, ingress: bool) -> Driven {
        let (sends, record) = publisher.finish();
        self.messages = sends.messages;
        self.publishes = sends.publishes;
        self.publisher = (!ingress).then_some(record);
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
            publisher: None,
            interrupted: false,
            failure: None,
        };
        let shape = s
            .workload
            .message
            .as_ref()
            .map(|spec| Shape { spec, seed: s.seed });
        let sends = Sends::new(
            plan,
            broker,
            state,
            provider,
            s.broker.fifo.is_some(),
            shape,
        );
        // With an ingress load, the plan is the load's to send.
        let from = if ingress.is_some() {
            plan.send_count()
        } else {
            0
        };
        let mut publisher = Publisher::new(sends, plan, state.clock, s.run.publish_window, from);
        let loaded = ingress.is_some();
        let mut last_progress: Option<Instant> = None;
        let mut drained_since: Option<Instant> = None;
        // While the run publishes, the broker's counts are read beside the sends, not between
        // them (a read is a round trip to the server): the look in flight, and the latest
        // answer, which only progress reads (a run still publishing is not drained).
        let mut looking: Option<BoxFuture<'_, Result<Counts, String>>> = None;
        let mut latest = Counts::default();
        loop {
            let looked = Instant::now();
            if let Err(e) = publisher.send_due().await {
                out.failure = Some(RunError::Live(e));
                return out.with(publisher, loaded);
            }
            let now = state.clock.now();
            if let Some(e) = workers.failed() {
                out.failure = Some(e);
                return out.with(publisher, loaded);
            }
            let counts = if publisher.publishing() {
                if looking.is_none() && last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY)
                {
                    looking = Some(broker.counts());
                }
                Ok(latest)
            } else {
                // Read after the last send was confirmed, as the drained check needs.
                looking = None;
                broker.counts().await
            };
            let counts = match counts {
                Ok(c) => c,
                Err(e) => {
                    out.failure = Some(RunError::Live(e));
                    return out.with(publisher, loaded);
                }
            };
            if last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY) {
                let (effects, duplicate_effects) = provider.running_counts();
                let published = publisher.sends().keys_published();
                progress(Progress {
                    now_s: crate::record::secs_f64(now),
                    published: ingress.map_or(published, |i| i.published()) as u64,
                    effects,
                    duplicate_effects,
                    dlq: counts.dead_lettered,
                });
                last_progress = Some(Instant::now());
            }
            let publishing = publisher.publishing() || ingress.is_some_and(|i| !i.load_finished());
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
                    >= publisher.sends().keys_published() as u64;
            }
            if !drained {
                drained_since = None;
            }
            let settled =
                drained && drained_since.get_or_insert_with(Instant::now).elapsed() >= SETTLE;
            if settled || started.elapsed() >= hard_end {
                return out.with(publisher, loaded);
            }
            // From the clock now, not from `now`: the sends and the counts above took time.
            let until_publish = publisher
                .next_due()
                .map(|t| state.clock.wall(t.saturating_sub(state.clock.now())))
                .unwrap_or(Duration::MAX);
            let awaiting = publisher.awaiting();
            tokio::select! {
                _ = tokio::time::sleep(until_publish.min(LOOK_EVERY)) => {}
                _ = async {
                    state.activity().await;
                    tokio::time::sleep_until((looked + GATHER).into()).await;
                } => {}
                confirmed = publisher.confirm_oldest(), if awaiting => {
                    if let Err(e) = confirmed {
                        out.failure = Some(RunError::Live(e));
                        return out.with(publisher, loaded);
                    }
                }
                counted = async { looking.as_mut().expect("a look in flight").await },
                    if looking.is_some() => {
                    looking = None;
                    match counted {
                        Ok(c) => latest = c,
                        Err(e) => {
                            out.failure = Some(RunError::Live(e));
                            return out.with(publisher, loaded);
                        }
                    }
                }
                _ = interruptions.changed() => {
                    out.interrupted = true;
                    return out.with(publisher, loaded);
                }
            }
        }
    }
}
