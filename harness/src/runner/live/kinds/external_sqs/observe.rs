//! The observing HTTP proxy in front of an external SQS server: each worker's port forwards its
//! requests as they are and reads each answer before passing it on. A `ReceiveMessage` answer's
//! messages are the worker's deliveries (a `received` kill withholds the answer, as the embedded
//! endpoint does); `DeleteMessage(Batch)` answers are its acks; visibility changes are
//! hand-backs and heartbeats. A worker's `SendMessage(Batch)` to the run's queue of a body naming
//! a message of the run is its retry: the copy's deliveries are the message's next ones (a
//! delivery is named by the key its body holds), and the delete of the delivery the retry
//! replaced removes that copy (`Superseded`). The request is parsed by the embedded endpoint's
//! own parser.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use ackbench_targets::message::Order;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use http::StatusCode;

use super::answers;
use crate::broker::sqs::{parse_request, Action, NewMessage, Protocol, SqsHooks};
use crate::record::{AckOutcome, Nanos, Republish, Seq, WorkerId};
use crate::runner::live::kinds::QUEUE;
use crate::runner::live::state::{LiveState, StateHooks};

/// The largest request a worker may send (SQS's 1 MiB batches, with room for the envelope).
const MAX_REQUEST_BYTES: usize = 2 * 1024 * 1024;

/// What the run's proxies know of the deliveries they saw, shared by every worker's port.
#[derive(Default)]
pub struct Deliveries {
    /// Receipt handle -> (seq, delivery number, end of its lease in profile time).
    receipts: HashMap<String, (Seq, u32, Nanos)>,
    /// Deliveries so far of each message.
    count: HashMap<Seq, u32>,
}

/// What every worker's port shares.
pub struct Observer {
    pub state: Arc<LiveState>,
    pub upstream: String,
    pub http: reqwest::Client,
    /// The queue's visibility timeout, in profile time (a receive may ask for its own).
    pub lease: Nanos,
    /// The run's queue (its name).
    pub queue: String,
    pub deliveries: Mutex<Deliveries>,
}

/// One worker's port.
#[derive(Clone)]
pub struct Port {
    pub observer: Arc<Observer>,
    pub worker: WorkerId,
}

impl Observer {
    /// How many deliveries of `seq` the workers were handed.
    pub fn deliveries_of(&self, seq: Seq) -> u32 {
        lock(&self.deliveries).count.get(&seq).copied().unwrap_or(0)
    }
}

fn lock(m: &Mutex<Deliveries>) -> std::sync::MutexGuard<'_, Deliveries> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Forwards one request and observes its answer.
pub async fn forward(State(port): State<Port>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REQUEST_BYTES).await else {
        return status(StatusCode::PAYLOAD_TOO_LARGE);
    };
    let o = &port.observer;
    let query = parts.uri.query().unwrap_or_default().as_bytes();
    let parsed = parse_request(
        parts.uri.path(),
        &parts.headers,
        if parts.method == http::Method::GET {
            query
        } else {
            &bytes
        },
    )
    .ok();
    match parsed.as_ref().map(|r| &r.action) {
        // The worker asks for its next message: its handler of the last one ended.
        Some(Action::ReceiveMessage(_)) => {
            StateHooks(o.state.clone()).receive_requested(QUEUE, port.worker)
        }
        Some(Action::SendMessage { queue, message }) => sent(&port, queue, [message]),
        Some(Action::SendMessageBatch { queue, entries }) => sent(
            &port,
            queue,
            entries.iter().filter_map(|(_, m)| m.as_ref().ok()),
        ),
        _ => {}
    }
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut call = o
        .http
        .request(parts.method.clone(), format!("{}{path}", o.upstream));
    // The answer must come back uncompressed: the proxy reads it.
    let own = [
        http::header::HOST,
        http::header::CONTENT_LENGTH,
        http::header::ACCEPT_ENCODING,
    ];
    for (name, value) in &parts.headers {
        if !own.contains(name) {
            call = call.header(name, value);
        }
    }
    let answer = match call.body(bytes.clone()).send().await {
        Ok(a) => a,
        Err(e) => {
            return Response::builder()
                .status(StatusCode::BAD_GATEWAY)
                .body(Body::from(format!("the SQS server did not answer: {e}")))
                .unwrap_or_else(|_| status(StatusCode::BAD_GATEWAY));
        }
    };
    let code = answer.status();
    let headers = answer.headers().clone();
    let body = answer.bytes().await.unwrap_or_default();
    if let Some(r) = parsed {
        let json = r.protocol == Protocol::Json;
        if observe(&port, &r.action, json, code.is_success(), &body) {
            // This worker is being killed: it never gets the answer.
            std::future::pending::<()>().await;
        }
    }
    let mut out = Response::builder().status(code);
    for (name, value) in &headers {
        if name != http::header::TRANSFER_ENCODING && name != http::header::CONTENT_LENGTH {
            out = out.header(name, value);
        }
    }
    out.body(Body::from(body))
        .unwrap_or_else(|_| status(StatusCode::BAD_GATEWAY))
}

fn status(code: StatusCode) -> Response {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = code;
    r
}

/// Reports what the answer to `action` did; true if the worker is being killed.
fn observe(port: &Port, action: &Action, json: bool, ok: bool, body: &[u8]) -> bool {
    let (o, w) = (&port.observer, port.worker);
    let now = o.state.clock.now();
    // Wire seconds are wall time: in profile time they are `s / time_scale`.
    let profile_secs = |s: u32| now + (s as f64 / o.state.clock.scale() * 1e9) as Nanos;
    match action {
        Action::ReceiveMessage(rcv) if ok => {
            let lease_end = rcv.visibility_timeout_s.map_or(now + o.lease, profile_secs);
            let mut killed = false;
            for m in answers::received(json, body) {
                let Some(seq) = seq_of(&o.state, &m.body) else {
                    continue;
                };
                let delivery = {
                    let mut d = lock(&o.deliveries);
                    let n = d.count.entry(seq).or_default();
                    *n += 1;
                    let n = *n;
                    d.receipts.insert(m.receipt.clone(), (seq, n, lease_end));
                    n
                };
                killed |= o.state.observed_delivery(w, seq, delivery, lease_end);
            }
            killed
        }
        Action::DeleteMessage { receipt, .. } => {
            ack(port, receipt, ok);
            false
        }
        Action::DeleteMessageBatch { entries, .. } => {
            let done = if ok {
                answers::batch_successes(json, body)
            } else {
                Vec::new()
            };
            for (id, receipt) in entries {
                ack(port, receipt, done.contains(id));
            }
            false
        }
        Action::ChangeMessageVisibility {
            receipt, timeout_s, ..
        } if ok => {
            visibility(port, receipt, *timeout_s, profile_secs(*timeout_s));
            false
        }
        Action::ChangeMessageVisibilityBatch { entries, .. } if ok => {
            for e in entries {
                visibility(port, &e.receipt, e.timeout_s, profile_secs(e.timeout_s));
            }
            false
        }
        _ => false,
    }
}

/// An ack by `receipt`, accepted by the server or not. SQS reports success for a delete by an
/// older receipt too ("succeeds but the message might not be deleted"), and deletes by the
/// latest receipt after its lease ended if nobody received the message since: only the latest
/// receipt within its lease is taken as a confirmed delete; the latest after its lease is a
/// late delete (as the `sqs` stale-ack policy reads it), an older one a success that changed
/// nothing.
fn ack(port: &Port, receipt: &str, accepted: bool) {
    let o = &port.observer;
    let (found, latest) = {
        let d = lock(&o.deliveries);
        let found = d.receipts.get(receipt).copied();
        let latest = found.and_then(|(seq, _, _)| d.count.get(&seq).copied());
        (found, latest)
    };
    let Some((seq, delivery, lease_end)) = found else {
        return;
    };
    let in_lease = o.state.clock.now() <= lease_end;
    let outcome = match (accepted, latest == Some(delivery), in_lease) {
        (false, _, _) => AckOutcome::StaleRejected,
        // The handler sent the message again: this removes the copy its retry replaced.
        (true, _, _) if o.state.replaced(seq, delivery) => AckOutcome::Superseded,
        (true, true, true) => AckOutcome::Deleted,
        (true, true, false) => AckOutcome::LateDeleted,
        (true, false, _) => AckOutcome::StaleIgnored,
    };
    o.state.observed_ack(port.worker, seq, delivery, outcome);
}

/// The message of the run a body names: as the run's messages are shaped, or the plain order.
fn seq_of(state: &LiveState, body: &str) -> Option<Seq> {
    (state.seq_of_body(body.as_bytes()))
        .or_else(|| Order::key_of(body).and_then(|k| state.seq_of_key(&k)))
}

/// The worker sends `messages` to `queue`: each naming a message of the run, sent to the run's
/// queue, is its retry, from the delivery the worker holds.
fn sent<'m>(port: &Port, queue: &str, messages: impl IntoIterator<Item = &'m NewMessage>) {
    let state = &port.observer.state;
    if queue != port.observer.queue {
        return;
    }
    for m in messages {
        if let Some(seq) = seq_of(state, &m.body) {
            let delivery = state.retiring(port.worker, seq, Republish::Queue);
            state.observed_republish(port.worker, seq, delivery, Republish::Queue);
        }
    }
}

fn visibility(port: &Port, receipt: &str, timeout_s: u32, until: Nanos) {
    let o = &port.observer;
    let found = {
        let mut d = lock(&o.deliveries);
        d.receipts.get_mut(receipt).map(|r| {
            r.2 = until;
            (r.0, r.1)
        })
    };
    let Some((seq, delivery)) = found else {
        return;
    };
    if timeout_s == 0 {
        o.state
            .observed_release(port.worker, seq, delivery, o.state.clock.now());
    } else {
        o.state.observed_extend(port.worker, seq, delivery, until);
    }
}
