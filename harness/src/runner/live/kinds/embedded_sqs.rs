//! `broker.kind: sqs`: the embedded broker, served over the SQS API on 127.0.0.1 with the
//! profile's queue (and its DLQ queue), configured in wall time. With `broker.fifo` both are
//! FIFO queues (`.fifo` names) whose deduplication interval is `broker.dedup_window` in wall
//! time, and the run sends to it with [`LiveBroker::publish_fifo`]: the queue's answer says
//! whether a send became a message or was dropped as a repeat.
//!
//! The endpoint's own state machine records every broker event (deliveries, acks, leases,
//! dead-lettering), exactly, in wall time since it started; at the end they are put on the
//! run's profile-time clock. Workers are told apart by their credentials' access key id
//! (`worker-N`), and the endpoint's hooks tell the run's state of each hand-out, so a kill at
//! `received` happens before the answer is written.
//!
//! With `connection` faults, each worker reaches the endpoint through its own port of the
//! proxy ([`Proxy`], forwarding without reading: the endpoint sees the worker by its key), so
//! the worker's link can cut its HTTP connections (its SDK retries on a new one), delay its
//! requests or answers, or hold them during a partition (answered at its end, or its
//! connections reset there when the partition drops).

use std::net::SocketAddr;
use std::sync::Arc;

use super::{
    confirmed, BoxFuture, Confirmation, Context, Counts, FifoSend, Finished, IngressTarget,
    LiveBroker, LiveQueue, OpenError, QueueFactory, QueueLength,
};
use crate::broker::setup;
use crate::broker::sqs::{Hooks as SqsHooksHandle, QueueSpec, SqsConfig, SqsServer, WireTime};
use crate::profile::Scenario;
use crate::provider::http::LiveClock;
use crate::record::{nanos, EventKind, Seq, WorkerId};
use crate::runner::live::assemble::Timebase;
use crate::runner::live::proxy::{Proxy, Unread};
use crate::runner::live::state::StateHooks;
use crate::workload::message::Outgoing;

/// The queue's name on the endpoint (its DLQ queue is `ackbench-dlq`); a FIFO queue's is
/// `ackbench.fifo` ([`queue_name`]).
pub const QUEUE: &str = "ackbench";

/// The run's queue on the endpoint, and its DLQ queue's name: `ackbench` and `ackbench-dlq`,
/// or with `broker.fifo` `ackbench.fifo` and `ackbench-dlq.fifo` (SQS names a FIFO queue with
/// `.fifo`, and a FIFO queue's DLQ must be a FIFO queue too).
///
/// With `broker.queue` the queue takes that name (a FIFO queue's must end in `.fifo`, as SQS
/// wants) and its DLQ queue the name with `-dlq` before any `.fifo`.
pub fn queue_name(scenario: &Scenario) -> (String, String) {
    let base = scenario.broker.queue.name.as_deref().unwrap_or(QUEUE);
    let base = base.strip_suffix(".fifo").unwrap_or(base);
    match scenario.broker.fifo {
        Some(_) => (format!("{base}.fifo"), format!("{base}-dlq.fifo")),
        None => (base.to_string(), format!("{base}-dlq")),
    }
}

pub struct EmbeddedSqs {
    server: SqsServer,
    /// The run's queue ([`queue_name`]).
    queue: String,
    timebase: Timebase,
    clock: LiveClock,
    /// With `connection` faults: the workers' proxy in front of the endpoint.
    proxy: Option<Proxy>,
    workers: u32,
    /// The run's state: the endpoint's numbers of the run's messages and of their copies.
    state: Arc<crate::runner::live::state::LiveState>,
}

impl EmbeddedSqs {
    pub async fn open(cx: Context<'_>) -> Result<EmbeddedSqs, OpenError> {
        let s = cx.scenario;
        let scale = s.run.time_scale;
        let b = &s.broker;
        let broker = setup::sqs_config(b, |d| d.mul_f64(scale));
        let (queue, dlq) = queue_name(s);
        let dead_letter_queue = (b.max_deliveries > 0).then_some(dlq);
        let hooks = StateHooks(cx.state.clone());
        let config = SqsConfig {
            queues: vec![(
                queue.clone(),
                QueueSpec {
                    broker,
                    dead_letter_queue,
                    // The profile's deduplication window, on the endpoint's (wall) clock.
                    fifo: b
                        .fifo
                        .as_ref()
                        .map(|f| nanos(f.dedup_window.mul_f64(scale))),
                },
            )],
            hooks: SqsHooksHandle(Some(Arc::new(hooks))),
            // With the consumer on the scaled clock, the durations it sends are profile seconds.
            wire_time: if cx.wire_scaled {
                WireTime::scaled(scale)
            } else {
                WireTime::REAL
            },
            ..SqsConfig::default()
        };
        let loopback: SocketAddr = "127.0.0.1:0".parse().expect("a socket address");
        let server = SqsServer::bind(loopback, config).await.map_err(|e| {
            OpenError::Failed(format!("cannot serve the SQS endpoint on 127.0.0.1: {e}"))
        })?;
        // The endpoint's time base, aligned with the run's clock (started a moment earlier).
        let clock = cx.state.clock;
        let t0 = server
            .elapsed()
            .saturating_sub(clock.wall(clock.now()).as_nanos() as u64);
        let proxy = match cx.state.links() {
            Some(links) => Some(
                Proxy::start(
                    server.local_addr(),
                    s.worker_slots(),
                    Arc::new(Unread(cx.state.clone())),
                    Some(links),
                )
                .await
                .map_err(|e| {
                    OpenError::Failed(format!("cannot listen for workers on 127.0.0.1: {e}"))
                })?,
            ),
            None => None,
        };
        Ok(EmbeddedSqs {
            server,
            queue,
            timebase: Timebase { t0, scale },
            clock,
            proxy,
            workers: s.worker_slots(),
            state: cx.state.clone(),
        })
    }

    /// Where worker `w` reaches the endpoint: its proxy port, or the endpoint itself.
    fn endpoint_of(&self, w: WorkerId) -> String {
        match &self.proxy {
            Some(p) => format!("http://{}", p.addr(w)),
            None => self.server.endpoint_url(),
        }
    }
}

impl LiveBroker for EmbeddedSqs {
    /// The endpoint's broker has the message when this returns: the hand-over is its answer.
    fn publish(&self, seq: Seq, message: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
        let attributes = attributes(&message);
        let sent = self
            .server
            .send_with_attributes(&self.queue, message.body, attributes)
            .map(|_| confirmed())
            .map_err(|e| format!("cannot publish message {seq}: {e}"));
        Box::pin(std::future::ready(sent))
    }

    fn publish_fifo<'a>(
        &'a self,
        seq: Seq,
        message: Outgoing,
        send: &'a FifoSend,
    ) -> BoxFuture<'a, Result<bool, String>> {
        let sent = match self.server.send_fifo_message(
            &self.queue,
            message.body,
            &send.group_id,
            &send.dedup_id,
        ) {
            // After a copy a worker sent (a retry), the queue's numbers run ahead of the run's
            // (the run's state maps them back).
            Ok(Some(got))
                if self.state.in_run_terms(EventKind::Published { seq: got })
                    == Some(EventKind::Published { seq }) =>
            {
                Ok(true)
            }
            Ok(Some(got)) => Err(format!(
                "the queue numbered message {seq} {got}: something else sends to it"
            )),
            Ok(None) => Ok(false),
            Err(e) => Err(format!("cannot publish message {seq}: {e}")),
        };
        Box::pin(std::future::ready(sent))
    }

    fn queue_name(&self) -> &str {
        &self.queue
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
        let c = self.server.counts(&self.queue).unwrap_or_default();
        Box::pin(std::future::ready(Ok(Counts {
            unsettled: c.in_queue(),
            dead_lettered: c.dead_lettered,
        })))
    }

    fn queue_length(&self) -> BoxFuture<'_, Option<Result<QueueLength, String>>> {
        let c = self.server.counts(&self.queue).unwrap_or_default();
        Box::pin(std::future::ready(Some(Ok(QueueLength {
            ready: c.visible,
            in_flight: c.leased,
        }))))
    }

    fn worker_env(&self, worker: WorkerId) -> Vec<(String, String)> {
        super::sqs_queue::client_env(
            &self.endpoint_of(worker),
            &format!("worker-{worker}"),
            &self.server.queue_url(&self.queue),
        )
    }

    fn queues(&self) -> Arc<dyn QueueFactory> {
        Arc::new(SqsQueues {
            endpoints: (1..=self.workers).map(|w| self.endpoint_of(w)).collect(),
            fallback: self.server.endpoint_url(),
            queue_url: self.server.queue_url(&self.queue),
            clock: self.clock,
        })
    }

    fn records_its_events(&self) -> bool {
        true
    }

    fn ingress(&self) -> Option<IngressTarget> {
        Some(IngressTarget {
            endpoint: self.server.endpoint_url(),
            queue_url: self.server.queue_url(&self.queue),
        })
    }

    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
        Box::pin(async move {
            let events = self
                .server
                .take_events(&self.queue)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|e| {
                    let kind = self.state.in_run_terms(e.kind)?;
                    Some(self.timebase.event(crate::record::Event { kind, ..e }))
                })
                .collect();
            if let Some(p) = self.proxy {
                p.stop().await;
            }
            self.server.shutdown().await;
            Finished {
                events,
                ..Finished::default()
            }
        })
    }
}

/// Each worker's SQS client, named `worker-N` to the endpoint by its access key id.
struct SqsQueues {
    /// Worker `w`'s endpoint at index `w - 1`; `fallback` for any other.
    endpoints: Vec<String>,
    fallback: String,
    queue_url: String,
    clock: LiveClock,
}

impl QueueFactory for SqsQueues {
    fn connect(&self, worker: WorkerId) -> BoxFuture<'_, Result<Box<dyn LiveQueue>, String>> {
        let endpoint = self
            .endpoints
            .get((worker as usize).wrapping_sub(1))
            .unwrap_or(&self.fallback);
        let q = super::sqs_queue::SqsQueue::new(
            endpoint,
            &format!("worker-{worker}"),
            &self.queue_url,
            self.clock,
        );
        Box::pin(std::future::ready(Ok(Box::new(q) as Box<dyn LiveQueue>)))
    }
}

/// The String message attributes of `message` (`workload.message.attributes`).
fn attributes(message: &Outgoing) -> crate::broker::sqs::message_attributes::MessageAttributes {
    use crate::broker::sqs::message_attributes::{AttributeData, AttributeValue};
    message
        .attributes
        .iter()
        .map(|(k, v)| {
            let value = AttributeValue {
                data_type: "String".to_string(),
                value: AttributeData::String(v.clone()),
            };
            (k.clone(), value)
        })
        .collect()
}
