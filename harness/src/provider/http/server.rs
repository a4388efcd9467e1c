//! The HTTP front of the provider model and the effect ledger.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::{Json, Router};
use serde_json::json;
use tokio::task::JoinHandle;

use super::{KeySource, LiveClock};
use crate::profile::{EffectAt, KillPoint};
use crate::provider::ledger::CallStart;
use crate::provider::{CallFacts, CallId, EffectLedger, ProviderModel};
use crate::record::{CallOutcome, Ledger, Seq, WorkerId};
use crate::serving::{ServeLimits, Unanswered};

/// What the live runner tells the provider about workers, and how it kills them.
pub trait LiveHooks: Send + Sync + 'static {
    /// Receive count of the delivery of worker `worker` that a call with effect key `key` (the
    /// key of message `seq`, if one was published with it) belongs to: the delivery of that key
    /// the worker holds (0 if none).
    fn attribute(&self, _worker: WorkerId, _key: &str, _seq: Option<Seq>) -> u32 {
        0
    }
    /// Worker `worker` reached `point` (`call_started`, `call_answered`) in a call for message
    /// `seq` made in its delivery number `delivery`: returns true if it is being killed (the
    /// provider then never answers it).
    fn at_point(
        &self,
        _point: &KillPoint,
        _worker: WorkerId,
        _seq: Option<Seq>,
        _delivery: u32,
    ) -> bool {
        false
    }
}

/// Hooks that know nothing and kill nobody (a standalone provider).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;
impl LiveHooks for NoHooks {}

struct Shared {
    model: Mutex<ProviderModel>,
    ledger: Mutex<EffectLedger>,
    keys: Mutex<HashMap<String, Seq>>,
    clock: LiveClock,
    key_source: KeySource,
    hooks: Arc<dyn LiveHooks>,
    workers: u32,
    /// Calls that arrived and whose request is still open: not answered, or answered and held
    /// at a kill point, until the request ends (answered, or dropped when the caller died).
    in_flight: std::sync::atomic::AtomicU64,
}

/// A running HTTP provider.
pub struct HttpProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

/// Marks a call abandoned if the request is dropped (the worker died or gave up) before the
/// provider's answer was recorded.
struct OpenCall {
    shared: Arc<Shared>,
    call: CallId,
    open: bool,
}

impl Drop for OpenCall {
    fn drop(&mut self) {
        if self.open {
            lock(&self.shared.ledger).abandon(self.call, CallOutcome::Abandoned);
        }
        self.shared
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HttpProvider {
    /// Serves the provider on `addr` (use port 0 for any free port) for `workers` workers,
    /// within the default [`ServeLimits`].
    pub async fn bind(
        addr: SocketAddr,
        model: ProviderModel,
        clock: LiveClock,
        key_source: KeySource,
        workers: u32,
        hooks: Arc<dyn LiveHooks>,
    ) -> std::io::Result<HttpProvider> {
        let limits = ServeLimits::default();
        HttpProvider::bind_limited(addr, model, clock, key_source, workers, hooks, limits).await
    }

    /// [`HttpProvider::bind`] within `limits`: header-read and idle timeouts and a connection
    /// limit. A call in progress is never cut, however long its latency.
    pub async fn bind_limited(
        addr: SocketAddr,
        model: ProviderModel,
        clock: LiveClock,
        key_source: KeySource,
        workers: u32,
        hooks: Arc<dyn LiveHooks>,
        limits: ServeLimits,
    ) -> std::io::Result<HttpProvider> {
        let listener = crate::serving::listen(addr)?;
        let addr = listener.local_addr()?;
        let effect_at = model.effect_at;
        let shared = Arc::new(Shared {
            model: Mutex::new(model),
            ledger: Mutex::new(EffectLedger::new(effect_at)),
            keys: Mutex::new(HashMap::new()),
            clock,
            key_source,
            hooks,
            workers,
            in_flight: std::sync::atomic::AtomicU64::new(0),
        });
        let app = Router::new()
            .route("/w/{worker}/{*rest}", any(call))
            .route("/w/{worker}/", any(call_root))
            .fallback(not_found)
            .with_state(shared.clone());
        let task = tokio::spawn(crate::serving::serve(
            listener,
            app,
            limits,
            std::future::pending(),
        ));
        Ok(HttpProvider { addr, shared, task })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL of worker `worker` (1-based), with a trailing slash.
    pub fn base_url(&self, worker: WorkerId) -> String {
        format!("http://{}/w/{worker}/", self.addr)
    }

    /// Registers a published message's key so effects are counted against it.
    pub fn publish_key(&self, key: &str, seq: Seq) {
        lock(&self.shared.keys).insert(key.to_string(), seq);
    }

    /// An effect a store-backed target wrote in its own database (a row, not a call), counted in
    /// the same ledger, at the provider's clock.
    pub fn record_store_effect(&self, key: &str, worker: WorkerId, delivery: u32) {
        let seq = lock(&self.shared.keys).get(key).copied();
        let at = self.shared.clock.now();
        lock(&self.shared.ledger).effect(
            seq,
            at,
            worker,
            delivery,
            crate::record::EffectSource::Store,
        );
    }

    /// Effects so far and, of those, the ones beyond the first for their key (for progress: a
    /// read of two counters, not a copy of the ledger).
    pub fn running_counts(&self) -> (u64, u64) {
        lock(&self.shared.ledger).running_counts()
    }

    /// Calls whose request is still open: a consumer may ack before its work (ack-first), so a
    /// run is not drained while one of these can still have its effect.
    pub fn calls_in_flight(&self) -> u64 {
        self.shared
            .in_flight
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// A copy of the ledger so far.
    pub fn ledger(&self) -> Ledger {
        lock(&self.shared.ledger).ledger().clone()
    }

    /// Stops serving (open calls are dropped) and returns the ledger, every call still without
    /// an answer marked abandoned.
    pub async fn shutdown(&self) -> Ledger {
        self.task.abort();
        tokio::task::yield_now().await;
        let mut ledger = lock(&self.shared.ledger);
        // Calls still open never got an answer to a live caller: the worker died or it hung.
        ledger.abandon_open();
        ledger.ledger().clone()
    }
}

async fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "use a worker's base URL: /w/<worker>/<path>",
    )
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

async fn call_root(
    State(shared): State<Arc<Shared>>,
    Path(worker): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(shared, worker, String::new(), headers, body).await
}

async fn call(
    State(shared): State<Arc<Shared>>,
    Path((worker, rest)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(shared, worker, rest, headers, body).await
}

/// One provider call: plan, record, wait, answer (or never, if the worker dies or it hangs).
async fn handle(
    shared: Arc<Shared>,
    worker: String,
    rest: String,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let worker: WorkerId = match worker.parse() {
        Ok(w) if w >= 1 && w <= shared.workers => w,
        _ => {
            let msg = format!("no worker {worker}: workers are 1 to {}", shared.workers);
            return error(StatusCode::NOT_FOUND, &msg);
        }
    };
    let key = match shared.key_source.key(&headers, &rest, &body) {
        Ok(k) => k,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("no effect key: {e}")),
    };
    // The headers and the body share the connection's read buffer: let them go before the wait,
    // or every open call keeps that buffer alive while the connection reads into a new one.
    drop((headers, body));
    let now = shared.clock.now();
    let seq = lock(&shared.keys).get(&key).copied();
    let delivery = shared.hooks.attribute(worker, &key, seq);
    let (plan, effect_at) = {
        let mut model = lock(&shared.model);
        let facts = CallFacts {
            at: now,
            seq,
            key: &key,
            delivery,
        };
        (model.plan(&facts), model.effect_at)
    };
    let call = lock(&shared.ledger).start_call(CallStart {
        seq,
        key: Some(key),
        worker,
        delivery,
        at: now,
        outcome: plan.outcome,
        works: plan.works,
    });
    shared
        .in_flight
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut open = OpenCall {
        shared: shared.clone(),
        call,
        open: true,
    };
    if shared
        .hooks
        .at_point(&KillPoint::CallStarted, worker, seq, delivery)
    {
        std::future::pending::<()>().await;
    }
    match plan.latency {
        Some(l) => tokio::time::sleep(shared.clock.wall(l)).await,
        // A hang: only the client's own timeout (or its death) ends this request. One after
        // its effect, the effect with its answer, has it when the answer would have left.
        None => {
            if plan.works && effect_at == EffectAt::Response {
                tokio::time::sleep(shared.clock.wall(plan.ready)).await;
                lock(&shared.ledger).work_done(call, shared.clock.now());
            }
            std::future::pending::<()>().await
        }
    }
    lock(&shared.ledger).answer(call, shared.clock.now());
    open.open = false;
    if shared
        .hooks
        .at_point(&KillPoint::CallAnswered, worker, seq, delivery)
    {
        std::future::pending::<()>().await;
    }
    match plan.outcome {
        // Closed without an answer: the caller sees its connection closed.
        CallOutcome::Reset => Unanswered::response(),
        CallOutcome::Error(status) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            error(status, "injected provider error")
        }
        _ => (
            StatusCode::ACCEPTED,
            Json(json!({ "id": format!("em-{call}") })),
        )
            .into_response(),
    }
}
