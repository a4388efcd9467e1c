//! `broker.kind: redis-streams` in live mode: the real Redis server at `broker.url`.
//!
//! Per run, ackbench creates the stream `<run_id>` with the consumer group `ackbench`
//! (`XGROUP CREATE ... MKSTREAM`); the consumer-side rules move dead entries to
//! `<run_id>:dead`. Both keys are deleted when the run ends, whatever happened. ackbench
//! publishes each message itself as entry `0-<seq>` (an explicit id, recorded before the XADD,
//! so every reply naming the entry maps to its seq) with the body in the field `body`; the
//! XADDs go out in seq order, pipelined in batches ([`publisher`]). Once a worker adds an entry
//! to the stream itself (its own retry, [`copies`]), the run's ids would fall below the
//! stream's top: its later entries are added with `*`, each known by its reply or its fields.
//!
//! Each worker reaches Redis through its own proxy port ([`proxy`]), which observes deliveries,
//! claims, acks and moves to the dead stream. The counts the run's loop needs come from the
//! server: XINFO GROUPS (`pending` + `lag`) and XLEN of the dead stream, cached for 150 ms.

#[cfg(test)]
mod ack_fault_tests;
mod ack_faults;
mod claim_clock;
mod copies;
#[cfg(test)]
mod delivery_fault_tests;
mod delivery_faults;
mod entries;
mod expiry;
pub(crate) mod limits;
#[cfg(test)]
mod limits_tests;
mod proxy;
mod publisher;
mod queue;
pub(crate) mod resp;
mod rule;
mod sample;
mod settings;
mod wire;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::Value;

use self::claim_clock::HandBacks;
use self::entries::Entries;
use self::proxy::{Observed, RespProtocol};
use self::queue::{consumer_name, Names, RedisQueue};
use self::rule::{unix_ms, wall_ms, ClaimRule};
use self::wire::WireTime;
use super::{
    BoxFuture, BrokerSampler, Confirmation, Context, Counts, Finished, LiveBroker, LiveQueue,
    OpenError, QueueFactory,
};
use crate::profile::{run_variables, BrokerKind};
use crate::provider::http::LiveClock;
use crate::record::{nanos, Seq, WorkerId};
use crate::runner::live::proxy::Proxy;
use crate::workload::message::Outgoing;

const KIND: &str = crate::profile::kinds::redis_streams::KIND.name;
/// The consumer group every worker reads in.
pub const GROUP: &str = "ackbench";
/// How long a server answer to [`LiveBroker::counts`] is reused.
const COUNTS_FOR: Duration = Duration::from_millis(150);

pub struct RedisStreams {
    conn: MultiplexedConnection,
    url: url::Url,
    names: Names,
    entries: Arc<Entries>,
    proxy: Proxy,
    workers: u32,
    clock: LiveClock,
    /// The server's counts, when read and after how many publishes.
    counts: Mutex<Option<(Instant, u64, Counts)>>,
    /// Entries the server has answered an XADD for.
    published: Arc<AtomicU64>,
    /// The run's XADDs, pipelined in seq order.
    publisher: publisher::Publisher,
    /// `broker.observe: none`: workers connect to the server itself, not through the proxy.
    direct: bool,
    /// The consumer rules as a worker process reads them: in wall time, or with the scaled
    /// clock in profile time from the run's start on the consumer's clock.
    worker_rule: ClaimRule,
}

fn unreachable(url: &str, reason: impl ToString) -> OpenError {
    OpenError::Unreachable {
        kind: KIND,
        url: url.to_string(),
        reason: reason.to_string(),
    }
}

impl RedisStreams {
    pub async fn open(cx: Context<'_>) -> Result<RedisStreams, OpenError> {
        let s = cx.scenario;
        let BrokerKind::RedisStreams(spec) = &s.broker.kind else {
            return Err(OpenError::Failed("not a redis-streams profile".into()));
        };
        let raw_url = s.broker.url.clone().unwrap_or_default();
        let url = url::Url::parse(&raw_url).map_err(|e| unreachable(&raw_url, e))?;
        let upstream = upstream(&url).await.map_err(|e| unreachable(&raw_url, e))?;
        let client = redis::Client::open(raw_url.as_str()).map_err(|e| unreachable(&raw_url, e))?;
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(3)))
            .set_response_timeout(Some(Duration::from_secs(10)));
        let mut conn = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| unreachable(&raw_url, e))?;
        settings::check(&mut conn).await?;

        let stream = cx.queue.clone();
        let dead = format!("{stream}:dead");
        if s.broker.queue.name.is_some() {
            let found: u32 = redis::cmd("EXISTS")
                .arg(&stream)
                .arg(&dead)
                .query_async(&mut conn)
                .await
                .map_err(|e| OpenError::Failed(format!("cannot look for stream {stream}: {e}")))?;
            if found > 0 {
                return Err(OpenError::Settings(format!(
                    "broker.queue {stream}: the key {stream} (or {dead}) already exists on the \
                     Redis server at {raw_url}; a run creates its stream and deletes it at the \
                     end: name another, or delete it"
                )));
            }
        }
        redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&stream)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| OpenError::Failed(format!("cannot create stream {stream}: {e}")))?;

        let clock = cx.state.clock;
        let wall = |d: Duration| wall_ms(clock.wall(nanos(d)));
        let started = unix_ms().saturating_sub(clock.wall(clock.now()).as_millis() as u64);
        let names = Names {
            stream: stream.clone(),
            dead: dead.clone(),
            group: GROUP.to_string(),
            rule: ClaimRule {
                min_idle_ms: wall(s.broker.lease),
                claim_every_ms: wall(spec.claim_every),
                max_deliveries: s.broker.max_deliveries,
                start_ms: started,
            },
        };
        // A consumer on the scaled clock reads the rules in profile ms, the start on its clock.
        let wire = match (cx.wire_scaled, cx.clock_start_ms) {
            (true, Some(start)) => Some(WireTime::new(clock.scale(), start)),
            _ => None,
        };
        let profile_ms = |d: Duration| d.as_millis() as u64;
        let worker_rule = match &wire {
            Some(w) => ClaimRule {
                min_idle_ms: profile_ms(s.broker.lease),
                claim_every_ms: profile_ms(spec.claim_every),
                max_deliveries: s.broker.max_deliveries,
                start_ms: w.faked_time(started),
            },
            None => names.rule,
        };
        let entries = Arc::new(Entries::default());
        let observed = Observed {
            state: cx.state.clone(),
            entries: entries.clone(),
            stream: stream.clone(),
            dead,
            min_idle: nanos(s.broker.lease),
            claim_every: nanos(spec.claim_every),
            wire,
        };
        let workers = s.consumer.workers;
        let proxy = match Proxy::start(
            upstream,
            workers,
            Arc::new(RespProtocol(Arc::new(observed))),
            cx.state.links(),
        )
        .await
        {
            Ok(p) => p,
            Err(e) => {
                delete(&mut conn, &names).await;
                return Err(OpenError::Failed(format!(
                    "cannot listen for workers on 127.0.0.1: {e}"
                )));
            }
        };
        let published = Arc::new(AtomicU64::new(0));
        let publisher = publisher::Publisher::start(
            conn.clone(),
            names.stream.clone(),
            published.clone(),
            entries.clone(),
        );
        Ok(RedisStreams {
            conn,
            url,
            names,
            entries,
            proxy,
            workers,
            clock,
            counts: Mutex::new(None),
            published,
            publisher,
            direct: s.broker.observe == crate::profile::Observe::Direct,
            worker_rule,
        })
    }

    /// Worker `w`'s URL: the broker's, with its proxy port for host and port (the broker's
    /// own with `observe: none`).
    fn worker_url(&self, w: WorkerId) -> String {
        if self.direct {
            return self.url.to_string();
        }
        worker_url(&self.url, self.proxy.addr(w))
    }

    async fn query_counts(&self) -> Result<Counts, String> {
        let mut conn = self.conn.clone();
        let groups: Value = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg(&self.names.stream)
            .query_async(&mut conn)
            .await
            .map_err(|e| format!("XINFO GROUPS {}: {e}", self.names.stream))?;
        let dead: u64 = redis::cmd("XLEN")
            .arg(&self.names.dead)
            .query_async(&mut conn)
            .await
            .map_err(|e| format!("XLEN {}: {e}", self.names.dead))?;
        let group = group_info(&groups, GROUP)
            .ok_or_else(|| format!("group {GROUP} of {} is gone", self.names.stream))?;
        // `lag` is nil when the server cannot tell; then the entries ackbench saw unsettled.
        let unsettled = match group.lag {
            Some(lag) => group.pending + lag,
            None => self.entries.unsettled(),
        };
        Ok(Counts {
            unsettled,
            dead_lettered: dead,
        })
    }
}

/// The socket address of the server behind `url`.
async fn upstream(url: &url::Url) -> Result<SocketAddr, String> {
    let host = url.host_str().ok_or("no host")?.to_string();
    let port = url.port().unwrap_or(6379);
    let bare = host.trim_matches(['[', ']']).to_string();
    let mut addrs = tokio::net::lookup_host((bare.as_str(), port))
        .await
        .map_err(|e| e.to_string())?;
    addrs.next().ok_or_else(|| format!("{host} has no address"))
}

fn worker_url(url: &url::Url, addr: SocketAddr) -> String {
    let mut u = url.clone();
    let _ = u.set_ip_host(addr.ip());
    let _ = u.set_port(Some(addr.port()));
    u.to_string()
}

/// A consumer group's `pending` and `lag` (XINFO GROUPS, as a RESP2 flat list or a RESP3 map).
struct GroupInfo {
    pending: u64,
    lag: Option<u64>,
}

fn group_info(groups: &Value, name: &str) -> Option<GroupInfo> {
    let Value::Array(groups) = groups else {
        return None;
    };
    groups.iter().find_map(|g| {
        let pairs: Vec<(String, &Value)> = match g {
            Value::Array(kv) => kv
                .chunks(2)
                .filter_map(|p| Some((value_text(&p[0])?, p.get(1)?)))
                .collect(),
            Value::Map(m) => m
                .iter()
                .filter_map(|(k, v)| Some((value_text(k)?, v)))
                .collect(),
            _ => return None,
        };
        let field = |f: &str| pairs.iter().find(|(k, _)| k == f).map(|(_, v)| *v);
        let int = |f: &str| match field(f) {
            Some(Value::Int(i)) => Some(*i as u64),
            _ => None,
        };
        (field("name").and_then(value_text).as_deref() == Some(name)).then(|| GroupInfo {
            pending: int("pending").unwrap_or(0),
            lag: int("lag"),
        })
    })
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// Deletes the run's keys: the names of those that could not be deleted.
async fn delete(conn: &mut MultiplexedConnection, names: &Names) -> Vec<String> {
    let deleted: Result<i64, _> = redis::cmd("DEL")
        .arg(&names.stream)
        .arg(&names.dead)
        .query_async(conn)
        .await;
    match deleted {
        Ok(_) => Vec::new(),
        Err(e) => vec![format!(
            "Redis keys {} and {} ({e}): delete them with DEL",
            names.stream, names.dead
        )],
    }
}

impl LiveBroker for RedisStreams {
    fn queue_name(&self) -> &str {
        &self.names.stream
    }

    fn publish(&self, seq: Seq, message: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
        let id = self.entries.next_id(seq);
        let fields = message
            .entry_fields()
            .into_iter()
            .map(|(f, v)| (f.to_string(), v.to_string()))
            .collect();
        let queued = self.publisher.add(seq, id, fields, &self.names.stream);
        Box::pin(std::future::ready(queued))
    }

    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
        Box::pin(async move {
            let published = self.published.load(Ordering::SeqCst);
            let cached = *self.counts.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((at, after, c)) = cached {
                if at.elapsed() < COUNTS_FOR && after == published {
                    return Ok(c);
                }
            }
            let c = self.query_counts().await?;
            *self.counts.lock().unwrap_or_else(PoisonError::into_inner) =
                Some((Instant::now(), published, c));
            Ok(c)
        })
    }

    fn worker_env(&self, worker: WorkerId) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = [
            (run_variables::REDIS_URL, self.worker_url(worker)),
            (run_variables::STREAM, self.names.stream.clone()),
            (run_variables::DEAD_STREAM, self.names.dead.clone()),
            (run_variables::GROUP, self.names.group.clone()),
            (run_variables::CONSUMER, consumer_name(worker)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        env.extend(self.worker_rule.env());
        env
    }

    fn queues(&self) -> Arc<dyn QueueFactory> {
        Arc::new(RedisQueues {
            urls: (1..=self.workers).map(|w| self.worker_url(w)).collect(),
            names: self.names.clone(),
            clock: self.clock,
            hand_backs: Arc::new(HandBacks::default()),
        })
    }

    fn sampler(&self) -> BoxFuture<'_, Option<Result<Box<dyn BrokerSampler>, String>>> {
        Box::pin(async move {
            Some(
                sample::Sampler::open(
                    self.url.as_str(),
                    self.names.stream.clone(),
                    self.names.dead.clone(),
                )
                .await
                .map(|s| Box::new(s) as Box<dyn BrokerSampler>),
            )
        })
    }

    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
        Box::pin(async move {
            let RedisStreams {
                mut conn,
                names,
                proxy,
                entries,
                clock,
                ..
            } = *self;
            proxy.stop().await;
            let left_behind = delete(&mut conn, &names).await;
            Finished {
                events: entries.expiries(clock.now()),
                notes: Vec::new(),
                left_behind,
                ..Finished::default()
            }
        })
    }
}

/// Each worker's queue, connected to its own proxy port.
struct RedisQueues {
    urls: Vec<String>,
    names: Names,
    clock: LiveClock,
    /// Shared by the workers' clients: when the entries they hand back become claimable.
    hand_backs: Arc<HandBacks>,
}

impl QueueFactory for RedisQueues {
    fn connect(&self, worker: WorkerId) -> BoxFuture<'_, Result<Box<dyn LiveQueue>, String>> {
        Box::pin(async move {
            let url = self
                .urls
                .get((worker as usize).wrapping_sub(1))
                .ok_or_else(|| format!("no worker {worker}"))?;
            let q = RedisQueue::connect(
                url,
                self.names.clone(),
                consumer_name(worker),
                self.clock,
                self.hand_backs.clone(),
            )
            .await?;
            Ok(Box::new(q) as Box<dyn LiveQueue>)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_url_keeps_the_credentials_and_database() {
        let u = url::Url::parse("redis://:secret@10.0.0.5:6380/2").unwrap();
        let addr: SocketAddr = "127.0.0.1:41000".parse().unwrap();
        assert_eq!(worker_url(&u, addr), "redis://:secret@127.0.0.1:41000/2");
    }

    #[test]
    fn xinfo_groups_gives_pending_and_lag() {
        let b = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        let groups = Value::Array(vec![Value::Array(vec![
            b("name"),
            b("ackbench"),
            b("pending"),
            Value::Int(2),
            b("lag"),
            Value::Int(5),
        ])]);
        let g = group_info(&groups, "ackbench").unwrap();
        assert_eq!((g.pending, g.lag), (2, Some(5)));
        assert!(group_info(&groups, "other").is_none());
    }
}
