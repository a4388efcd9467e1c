//! The ingress load: goose users sending one request per planned message to the system's HTTP
//! front door.
//!
//! Goose is closed-model: a user sends a request, waits for its answer, then starts its next
//! iteration. ackbench hands out the planned messages from one shared counter, one per
//! iteration, and (with a schedule) a user sleeps until its message is due before sending. So
//! the schedule is kept as long as a user is free when a message falls due, that is while
//! `rate x response time < users`; past that, requests start late. Each request's lateness
//! (`sent_at - due`) is recorded, so a run shows how far the load fell behind its schedule
//! instead of quietly sending fewer requests (coordinated omission). Goose's own
//! `--throttle-requests` is not used: it caps whole requests per second (no fractions, no
//! schedule) and cannot say how late a request was.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use goose::config::GooseConfiguration;
use goose::prelude::*;

use crate::profile::{IngressMethod, IngressSpec};
use crate::provider::http::LiveClock;
use crate::record::{GooseTotals, IngressRequest, Nanos, Seq};
use crate::workload::Fill;

/// One request to send: a planned message.
#[derive(Debug, Clone)]
pub struct Planned {
    pub key: String,
    pub seq: Seq,
    /// The body a directly published message would have (`{body}`).
    pub body: String,
    /// When it is due, profile time (ignored without a schedule).
    pub due: Nanos,
}

/// Why the load could not run.
#[derive(Debug, thiserror::Error)]
#[error("the ingress load (goose) failed: {0}")]
pub struct LoadError(String);

/// What the load did: every request sent, in plan order, and goose's totals.
#[derive(Debug, Clone, Default)]
pub struct LoadOutcome {
    pub requests: Vec<IngressRequest>,
    pub goose: GooseTotals,
}

/// Everything a user's iteration needs, shared by all users.
struct Shared {
    spec: IngressSpec,
    planned: Vec<Planned>,
    port: u16,
    clock: LiveClock,
    /// Without a schedule, no request starts after this instant (the end of `run.duration`).
    send_until: Nanos,
    next: AtomicUsize,
    done: Mutex<Vec<Option<IngressRequest>>>,
}

const REQUEST_NAME: &str = "ingress";

/// Sends every planned request; returns when all have been answered (or have failed). Without
/// a schedule, requests stop starting at `send_until` (profile time).
pub async fn run(
    spec: &IngressSpec,
    planned: Vec<Planned>,
    port: u16,
    clock: LiveClock,
    send_until: Nanos,
) -> Result<LoadOutcome, LoadError> {
    let n = planned.len();
    if n == 0 {
        return Ok(LoadOutcome::default());
    }
    let users = (spec.users as usize).min(n).max(1);
    let shared = Arc::new(Shared {
        spec: spec.clone(),
        planned,
        port,
        clock,
        send_until,
        next: AtomicUsize::new(0),
        done: Mutex::new(vec![None; n]),
    });
    let host = {
        let first = &shared.planned[0];
        let url = shared.spec.url.render(&fill(first, port));
        let u = reqwest::Url::parse(&url).map_err(|e| LoadError(format!("{url}: {e}")))?;
        format!(
            "{}://{}:{}",
            u.scheme(),
            u.host_str().unwrap_or("127.0.0.1"),
            u.port_or_known_default().unwrap_or(80)
        )
    };
    let iteration: TransactionFunction = {
        let shared = shared.clone();
        Arc::new(move |user| {
            let shared = shared.clone();
            Box::pin(async move { send_next(&shared, user).await })
        })
    };
    let scenario = scenario!("ingress").register_transaction(Transaction::new(iteration));
    let secs = spec.timeout.as_secs_f64().max(0.001).to_string();
    let mut attack = GooseAttack::initialize_with_config(GooseConfiguration::default())
        .map_err(goose_error)?
        .register_scenario(scenario);
    attack = *attack
        .set_default(GooseDefault::Host, host.as_str())
        .map_err(goose_error)?;
    // Every user starts at once: the schedule, not a ramp, decides when requests go.
    attack = *attack
        .set_default(GooseDefault::IncreaseRate, users.to_string().as_str())
        .map_err(goose_error)?;
    attack = *attack
        .set_default(GooseDefault::Timeout, secs.as_str())
        .map_err(goose_error)?;
    for (key, value) in [
        (GooseDefault::Users, users),
        (GooseDefault::Iterations, n.div_ceil(users)),
        (GooseDefault::Quiet, 1),
    ] {
        attack = *attack.set_default(key, value).map_err(goose_error)?;
    }
    for key in [
        GooseDefault::NoTelnet,
        GooseDefault::NoPrintMetrics,
        GooseDefault::NoErrorSummary,
        GooseDefault::NoGzip,
    ] {
        attack = *attack.set_default(key, true).map_err(goose_error)?;
    }
    let metrics = attack.execute().await.map_err(goose_error)?;
    let requests = std::mem::take(&mut *shared.done.lock().unwrap_or_else(PoisonError::into_inner))
        .into_iter()
        .flatten()
        .collect();
    Ok(LoadOutcome {
        requests,
        goose: totals(&metrics),
    })
}

impl LoadError {
    /// The load's task panicked or was cancelled.
    pub fn from_panic(e: tokio::task::JoinError) -> LoadError {
        LoadError(format!("the load stopped abnormally: {e}"))
    }
}

fn goose_error(e: GooseError) -> LoadError {
    LoadError(format!("{e:?}"))
}

fn fill(p: &Planned, port: u16) -> Fill<'_> {
    Fill {
        key: &p.key,
        seq: p.seq,
        body: &p.body,
        port,
        ..Fill::default()
    }
}

fn goose_method(m: IngressMethod) -> GooseMethod {
    match m {
        IngressMethod::Get => GooseMethod::Get,
        IngressMethod::Post => GooseMethod::Post,
        IngressMethod::Put => GooseMethod::Put,
        IngressMethod::Patch => GooseMethod::Patch,
        IngressMethod::Delete => GooseMethod::Delete,
    }
}

/// One iteration: take the next planned message (if any is left), wait until it is due, send.
async fn send_next(shared: &Shared, user: &mut GooseUser) -> TransactionResult {
    let i = shared.next.fetch_add(1, Ordering::Relaxed);
    let Some(p) = shared.planned.get(i) else {
        return Ok(());
    };
    let spec = &shared.spec;
    if !spec.scheduled && shared.clock.now() >= shared.send_until {
        return Ok(());
    }
    if spec.scheduled {
        let now = shared.clock.now();
        if p.due > now {
            tokio::time::sleep(shared.clock.wall(p.due - now)).await;
        }
    }
    let f = fill(p, shared.port);
    let url = spec.url.render(&f);
    let method = goose_method(spec.method);
    let mut builder = user.get_request_builder(&method, &url)?;
    let mut has_content_type = false;
    for (name, value) in &spec.headers {
        has_content_type |= name.eq_ignore_ascii_case("content-type");
        builder = builder.header(name.as_str(), value.render(&f));
    }
    if let Some(body) = &spec.body {
        if !has_content_type {
            builder = builder.header("content-type", "application/json");
        }
        builder = builder.body(body.render(&f));
    }
    let request = GooseRequest::builder()
        .method(method)
        .path(url.as_str())
        .name(REQUEST_NAME)
        .set_request_builder(builder)
        .build();
    let sent_at = shared.clock.now();
    let answered = user.request(request).await?;
    let metric = &answered.request;
    let (status, error) = match answered.response {
        Ok(r) => {
            let status = r.status().as_u16();
            // Read the answer to its end so the connection is reused.
            let _ = r.bytes().await;
            (Some(status), None)
        }
        Err(e) => (None, Some(error_text(&e))),
    };
    let entry = IngressRequest {
        key: p.key.clone(),
        due: spec.scheduled.then_some(p.due),
        sent_at,
        response_us: metric.response_time_micros(),
        status,
        error,
    };
    shared.done.lock().unwrap_or_else(PoisonError::into_inner)[i] = Some(entry);
    Ok(())
}

/// A transport failure in a few words (reqwest's text names the URL and the cause).
fn error_text(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connect"
    } else {
        "request"
    };
    let mut text = format!("{kind}: {e}");
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// Goose's aggregate of the ingress requests.
fn totals(m: &GooseMetrics) -> GooseTotals {
    let mut t = GooseTotals {
        duration_s: m.duration as f64,
        users: m.maximum_users as u64,
        ..GooseTotals::default()
    };
    for agg in m.requests.values() {
        let raw = &agg.raw_data;
        t.requests += raw.counter as u64;
        t.successes += agg.success_count as u64;
        t.failures += agg.fail_count as u64;
        t.min_us = if t.min_us == 0 {
            raw.minimum_time_us
        } else {
            t.min_us.min(raw.minimum_time_us)
        };
        t.max_us = t.max_us.max(raw.maximum_time_us);
        if raw.counter > 0 {
            t.mean_us = raw.total_time_us / raw.counter as u64;
            t.p50_us = raw.percentile_us(0.5);
            t.p90_us = raw.percentile_us(0.9);
            t.p99_us = raw.percentile_us(0.99);
        }
        for (code, n) in &agg.status_code_counts {
            *t.status_codes.entry(*code).or_default() += *n as u64;
        }
    }
    t
}

/// How long goose may still take after the run's end before the load is abandoned.
pub const GRACE: Duration = Duration::from_secs(5);
