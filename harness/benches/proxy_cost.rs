//! The cost of the protocol proxy between each worker and a real broker: the built-in
//! ack-after-work target, 32 workers, a provider answering in 1 ms, against each real broker
//! (RabbitMQ 127.0.0.1:5672, NATS JetStream 127.0.0.1:4222, Redis 127.0.0.1:6379; an external
//! SQS server too when `ACKBENCH_SQS_ENDPOINT` names one), once through the proxy
//! (`broker.observe: proxy`, the default) and once with every worker connected to the broker
//! itself (`broker.observe: none`), alternately, in the same run.
//!
//! `cargo bench -p ackbench --bench proxy_cost` (release build; needs the `live` feature, a
//! default one); `-- 4000` sets the messages per run (default 3000), `-- rounds=5` the proxy /
//! direct pairs per broker (default 3), `-- hold=12` the provider's hold (default 6 s; the
//! publisher must be done within it), `-- nats` (or `rabbitmq`, `redis-streams`, `sqs`) runs
//! one broker only. A broker that does not answer is skipped with the reason printed.
//!
//! A run publishes every message at once (in order, up to `run.publish_window` unconfirmed)
//! while the provider holds every call arriving in the first 6 s for 6 s: the queue
//! fills, and the rate is the effects at the provider after the window's start over their time.
//! The window starts when the last held call is answered (after the last publish, if later),
//! read from the provider's calls as the run recorded them: the workers draining a backlog,
//! without the hold, the publisher's pace or the workers' start-up. Not from the effects: with
//! the default `provider.effect_at: request` a held call's effect is stamped when it arrives, a
//! hold before its answer, and a window started at the 32nd effect held most of the hold (the
//! figure then followed the hold's length: hold 3 / 6 / 12 s gave 1,229 / 628 / 326 messages/s).
//! The bench panics on a window that contains any of the hold, and checks the window on a
//! made-up run before it starts. Effects are what a run without the proxy still sees; with it,
//! the same figure. Each line also gives the effects counted, the window's start (seconds into
//! the run) and the publisher's rate.
//!
//! Each pair runs proxy first in odd rounds and direct first in even ones; the line per broker
//! gives the median of each mode, their ratio and the proxy's cost (1 - proxy / direct). The
//! machine is shared: compare the two modes of one run, not runs of different days.

use std::net::TcpStream;
use std::time::Duration;

use ackbench::profile::load_str;
use ackbench::record::{Nanos, RunRecord};

const KINDS: [&str; 4] = ["rabbitmq", "nats", "redis-streams", "sqs"];
/// The provider holds every call started in the first this many seconds for as long (default;
/// `-- hold=12` sets it): the publisher fills the queue meanwhile, and the workers then drain
/// a backlog.
const HOLD_S: u64 = 6;
const WORKERS: usize = 32;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let n: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(3000);
    let rounds: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("rounds=")?.parse().ok())
        .unwrap_or(3);
    let hold: u64 = args
        .iter()
        .find_map(|a| a.strip_prefix("hold=")?.parse().ok())
        .unwrap_or(HOLD_S);
    self_check();
    let only: Vec<&str> = KINDS
        .iter()
        .copied()
        .filter(|k| args.iter().any(|a| a == k))
        .collect();
    println!(
        "proxy_cost: built-in ack-after-work, {WORKERS} workers, 1 ms provider, {n} messages per \
         run, {rounds} proxy/direct pairs per broker, provider hold {hold} s, release build"
    );
    for kind in KINDS {
        if !only.is_empty() && !only.contains(&kind) {
            continue;
        }
        if let Err(why) = reachable(kind) {
            println!("{kind:>13}: skipped: {why}");
            continue;
        }
        let mut proxy = Vec::new();
        let mut direct = Vec::new();
        for round in 0..rounds {
            let order: [&str; 2] = if round % 2 == 0 {
                ["proxy", "none"]
            } else {
                ["none", "proxy"]
            };
            for observe in order {
                match run(kind, observe, n, hold) {
                    Ok(rate) => {
                        println!(
                            "{kind:>13}: round {} observe {observe:<5} {:>8.0} messages/s \
                             ({} effects from {:.2} s; published at {:.0}/s)",
                            round + 1,
                            rate.consumed,
                            rate.effects,
                            secs(rate.from),
                            rate.published
                        );
                        if observe == "proxy" {
                            proxy.push(rate.consumed);
                        } else {
                            direct.push(rate.consumed);
                        }
                    }
                    Err(e) => println!(
                        "{kind:>13}: round {} observe {observe}: failed: {e}",
                        round + 1
                    ),
                }
            }
        }
        if let (Some(p), Some(d)) = (median(&mut proxy), median(&mut direct)) {
            println!(
                "{kind:>13}: median with the proxy {p:.0} messages/s, direct {d:.0} messages/s: \
                 ratio {:.3}, proxy cost {:.1}%",
                p / d,
                (1.0 - p / d) * 100.0
            );
        }
    }
}

/// Whether `kind`'s server answers on its port: `Err` says why not.
fn reachable(kind: &str) -> Result<(), String> {
    let addr = match kind {
        "rabbitmq" => "127.0.0.1:5672".to_string(),
        "nats" => "127.0.0.1:4222".to_string(),
        "redis-streams" => "127.0.0.1:6379".to_string(),
        _ => {
            let endpoint = std::env::var("ACKBENCH_SQS_ENDPOINT")
                .map_err(|_| "set ACKBENCH_SQS_ENDPOINT to an SQS server (moto, ElasticMQ)")?;
            let u = url::Url::parse(&endpoint).map_err(|e| format!("{endpoint}: {e}"))?;
            format!(
                "{}:{}",
                u.host_str().unwrap_or("127.0.0.1"),
                u.port_or_known_default().unwrap_or(80)
            )
        }
    };
    let parsed = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    TcpStream::connect_timeout(&parsed, Duration::from_secs(1))
        .map(|_| ())
        .map_err(|e| format!("nothing answers on {addr} ({e})"))
}

/// The profile of one run.
fn profile(kind: &str, observe: &str, n: u64, hold: u64) -> String {
    let broker = match kind {
        "sqs" => format!(
            "{{ kind: sqs, endpoint: \"{}\", visibility_timeout: 30s, observe: {observe} }}",
            std::env::var("ACKBENCH_SQS_ENDPOINT").unwrap_or_default()
        ),
        "rabbitmq" => format!("{{ kind: rabbitmq, observe: {observe} }}"),
        other => format!("{{ kind: {other}, observe: {observe} }}"),
    };
    format!(
        "name: proxy-cost\nmode: live\nseed: 1\nrun: {{ duration: 1s, drain: 5m }}\n\
         broker: {broker}\nworkload: {{ arrival: {{ every: 1us }}, count: {n} }}\n\
         consumer: {{ target: ack-after-work, workers: {WORKERS} }}\n\
         provider:\n  latency: {{ dist: fixed, value: 1ms }}\n  phases:\n    \
         - {{ from: 0s, to: {hold}s, latency: {{ dist: fixed, value: {hold}s }} }}\n"
    )
}

/// One run's figures: messages per second the workers drained once the queue was full (after
/// the last held call was answered and the last publish), over how many effects from when, and
/// the publisher's own rate.
struct Rate {
    consumed: f64,
    effects: usize,
    from: Nanos,
    published: f64,
}

/// Runs one profile live.
fn run(kind: &str, observe: &str, n: u64, hold: u64) -> Result<Rate, String> {
    let scenario = load_str("proxy-cost.yaml", &profile(kind, observe, n, hold), &[])
        .map_err(|e| e.to_string())?;
    let record = ackbench::runner::run(&scenario).map_err(|e| e.to_string())?;
    rate(&record, n)
}

/// What a run's rate is read from, as plain instants on the run's clock (ns).
struct Timeline {
    /// Every publish, at the instant it was sent.
    published: Vec<Nanos>,
    /// The provider's hold phase: a call arriving in `[hold.0, hold.1)` is answered a hold later.
    hold: (Nanos, Nanos),
    /// Every provider call: when it arrived and when it was answered (`None`: never).
    calls: Vec<(Nanos, Option<Nanos>)>,
    /// Every effect. With `provider.effect_at: request` (the default, and this profile's) an
    /// effect is stamped when its call arrives, so a held call's effect comes a hold before its
    /// answer: the effects alone cannot tell when the hold ended, the calls' answers can.
    effects: Vec<Nanos>,
}

fn rate(record: &RunRecord, n: u64) -> Result<Rate, String> {
    let effected: std::collections::HashSet<_> =
        record.ledger.effects.iter().filter_map(|e| e.seq).collect();
    if (effected.len() as u64) < n {
        return Err(format!(
            "only {} of {n} messages had their effect",
            effected.len()
        ));
    }
    let hold = match record.phases.as_slice() {
        [(from, to, _)] => (*from, *to),
        other => {
            return Err(format!(
                "expected one provider phase (the hold), got {}",
                other.len()
            ))
        }
    };
    let timeline = Timeline {
        published: record
            .events
            .iter()
            .filter_map(|e| match e.kind {
                ackbench::record::EventKind::Published { .. } => Some(e.at),
                _ => None,
            })
            .collect(),
        hold,
        calls: record
            .ledger
            .calls
            .iter()
            .map(|c| (c.started, c.ended))
            .collect(),
        effects: record.ledger.effects.iter().map(|e| e.at).collect(),
    };
    measure(&timeline, n)
}

/// The calls the provider held: those that arrived within its hold phase.
fn held(t: &Timeline) -> impl Iterator<Item = (Nanos, Option<Nanos>)> + '_ {
    t.calls
        .iter()
        .copied()
        .filter(|&(started, _)| t.hold.0 <= started && started < t.hold.1)
}

/// The drain rate: effects after the window's start over the time to the last of them. The
/// window starts once the last held call was answered (the workers are then free, and the queue
/// holds what the publisher sent meanwhile) and the last message was published, whichever is
/// later: the workers draining a backlog, without the hold, the publisher's pace or the
/// workers' start-up.
fn measure(t: &Timeline, n: u64) -> Result<Rate, String> {
    let (p0, p1) = (
        t.published.iter().copied().min().unwrap_or(0),
        t.published.iter().copied().max().unwrap_or(0),
    );
    if let Some((started, _)) = held(t).find(|&(_, ended)| ended.is_none()) {
        return Err(format!(
            "a call held by the provider (arrived at {:.3} s) was never answered",
            secs(started)
        ));
    }
    let held_end = held(t).filter_map(|(_, ended)| ended).max().unwrap_or(0);
    let from = p1.max(held_end).max(t.hold.1);
    refuse_hold_in_window(t, from);
    let after: Vec<Nanos> = t.effects.iter().copied().filter(|&at| at > from).collect();
    if (after.len() as u64) < n / 4 {
        return Err(format!(
            "only {} of {n} effects came after the queue was full (the publisher kept up with \
             the workers): raise the message count",
            after.len()
        ));
    }
    let last = after.iter().copied().max().unwrap_or(from);
    Ok(Rate {
        consumed: per_s(after.len(), from, last),
        effects: after.len(),
        from,
        published: per_s(t.published.len().saturating_sub(1), p0, p1),
    })
}

fn per_s(count: usize, a: Nanos, b: Nanos) -> f64 {
    count as f64 / (b.saturating_sub(a) as f64 / 1e9).max(1e-9)
}

fn secs(at: Nanos) -> f64 {
    at as f64 / 1e9
}

/// Why a window starting at `from` contains (part of) the provider's hold, if it does: it
/// starts before the hold phase ends, or before a held call was answered. Such a window puts
/// the hold's wait in the rate's denominator, and the figure then follows the hold's length
/// (hold 3 / 6 / 12 s gave 1,229 / 628 / 326 messages/s when the window started at the 32nd
/// effect, stamped when the held calls arrived), not the workers' pace.
fn hold_in_window(t: &Timeline, from: Nanos) -> Option<String> {
    if from < t.hold.1 {
        return Some(format!(
            "the window starts at {:.3} s, inside the provider's hold ({:.3}-{:.3} s)",
            secs(from),
            secs(t.hold.0),
            secs(t.hold.1)
        ));
    }
    held(t)
        .find(|&(_, ended)| ended.is_none_or(|e| e > from))
        .map(|(started, ended)| {
            let answered = ended.map_or("never answered".to_string(), |e| {
                format!("answered at {:.3} s", secs(e))
            });
            format!(
                "the window starts at {:.3} s, before a call the provider held (arrived at \
                 {:.3} s) was {answered}",
                secs(from),
                secs(started)
            )
        })
}

/// Panics on a window that contains the provider's hold ([`hold_in_window`]): a figure measured
/// over it is wrong, and the bench prints none rather than a wrong one.
fn refuse_hold_in_window(t: &Timeline, from: Nanos) {
    if let Some(why) = hold_in_window(t, from) {
        panic!(
            "proxy_cost: the measuring window contains the provider's hold: {why}; the rate would \
             count the hold's wait and follow its length, not the workers' drain"
        );
    }
}

/// The window on a made-up run shaped like the bench's: 32 calls arriving in the first 31 ms,
/// held for 6 s; 3,000 messages published in the first 0.5 s; the workers then drain the rest
/// at one call a millisecond (1,000 messages/s). Checked with effects stamped at the request
/// (the default) and at the response, and the old window (from the 32nd effect) refused.
fn self_check() {
    const MS: Nanos = 1_000_000;
    let hold = (0, 6_000 * MS);
    let mut calls: Vec<(Nanos, Option<Nanos>)> =
        (0..32).map(|i| (i * MS, Some(hold.1 + i * MS))).collect();
    let drain_from = hold.1 + 31 * MS;
    calls.extend((1..=2968).map(|k| (drain_from + k * MS, Some(drain_from + (k + 1) * MS))));
    let published: Vec<Nanos> = (0..3000).map(|i| i * MS / 6).collect();
    for effect_at in ["request", "response"] {
        let effects: Vec<Nanos> = calls
            .iter()
            .map(|&(started, ended)| match effect_at {
                "request" => started,
                _ => ended.unwrap_or(started),
            })
            .collect();
        let t = Timeline {
            published: published.clone(),
            hold,
            calls: calls.clone(),
            effects,
        };
        let rate = measure(&t, 3000).expect("self-check: the made-up run measures");
        assert_eq!(
            rate.from, drain_from,
            "self-check ({effect_at}): window start"
        );
        assert!(
            (rate.consumed - 1000.0).abs() < 10.0,
            "self-check ({effect_at}): {} messages/s, expected 1000",
            rate.consumed
        );
        assert!(hold_in_window(&t, rate.from).is_none());
    }
    // The old window: from the 32nd effect (or the last publish, if later). With effects stamped
    // at the request that is 0.5 s, inside the hold: refused.
    let t = Timeline {
        published,
        hold,
        effects: calls.iter().map(|&(started, _)| started).collect(),
        calls,
    };
    let old_from = t.effects[31].max(t.published[t.published.len() - 1]);
    assert!(
        hold_in_window(&t, old_from).is_some(),
        "self-check: a window from the 32nd effect ({:.3} s) must be refused",
        secs(old_from)
    );
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}
