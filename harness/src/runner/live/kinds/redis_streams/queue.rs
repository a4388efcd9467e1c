//! A built-in target's queue over Redis Streams (the `redis` crate), connected to its worker's
//! proxy port, applying the consumer-side rules ([`super::rule`]) as the sim model describes:
//!
//! 1. When a claim can be due ([`super::claim_clock`]: the earliest pending entry's claim
//!    instant, a `min_idle` after the last scan, an entry handed back, or after an empty read),
//!    XPENDING `IDLE` lists the entries claimable now, lowest id first. One that has had
//!    `max_deliveries` deliveries is taken with `XCLAIM ... JUSTID` (no delivery: the claim
//!    guards against another consumer doing the same), copied to `<stream>:dead` with its id and
//!    delivery count, and acked. Any other is claimed (XCLAIM, its min-idle-time guarding the
//!    race with the other consumers): delivery count + 1. With nothing to claim, a second
//!    XPENDING says when the earliest pending entry becomes claimable.
//! 2. Else XREADGROUP `>` for one new entry, blocking until shortly before the next scan is
//!    due, then polling (so an idle consumer claims at the instant an entry qualifies). A
//!    receive with no claim due is that one XREADGROUP, as a native consumer's.
//!
//! The receipt is the entry id. A heartbeat is the owner's `XCLAIM <self> 0 <id> JUSTID`, a
//! hand-back the same with `IDLE`, each after XPENDING says the entry is still this consumer's.
//!
//! A connection that closed under the client (a `connection` cut) is made again, and the
//! command that found it closed is sent once more on the new one, as a reconnecting client
//! does: the pending entries are the consumer's, not the connection's.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ackbench_targets::{Delivery, QueueError};
use redis::aio::MultiplexedConnection;
use redis::Value;

use super::claim_clock::{ClaimClock, HandBacks};
use super::rule::{unix_ms, wall_ms, ClaimRule};
use crate::provider::http::LiveClock;
use crate::runner::live::kinds::{BoxFuture, LiveQueue};

/// What every worker's queue shares: the run's names and rules.
#[derive(Debug, Clone)]
pub struct Names {
    pub stream: String,
    pub dead: String,
    pub group: String,
    pub rule: ClaimRule,
}

/// How long before a claim is due a consumer stops blocking on XREADGROUP (whose timeout the
/// server resolves on its `hz` tick: 100 ms at the default hz 10) and polls instead.
pub const BLOCK_SLACK_MS: u64 = 110;
/// The poll interval in that last stretch.
const POLL_MS: u64 = 5;

/// The consumer name of worker `w` in the group.
pub fn consumer_name(w: u32) -> String {
    format!("worker-{w}")
}

/// One worker's Redis client.
pub struct RedisQueue {
    /// The connection, made again when it closed.
    conn: Mutex<MultiplexedConnection>,
    client: redis::Client,
    names: Names,
    consumer: String,
    clock: LiveClock,
    /// When this client next scans for an entry to claim.
    claims: Mutex<ClaimClock>,
    /// The hand-backs of the run's built-in clients.
    hand_backs: Arc<HandBacks>,
}

/// A connection of `client`. redis-rs gives a connection 1 s by default: 32 workers connecting
/// at once on a loaded machine need longer.
async fn open(client: &redis::Client) -> redis::RedisResult<MultiplexedConnection> {
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(std::time::Duration::from_secs(10)))
        .set_response_timeout(None);
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
}

fn unavailable(e: redis::RedisError) -> QueueError {
    QueueError::Unavailable(e.to_string())
}

impl RedisQueue {
    pub async fn connect(
        url: &str,
        names: Names,
        consumer: String,
        clock: LiveClock,
        hand_backs: Arc<HandBacks>,
    ) -> Result<RedisQueue, String> {
        let client = redis::Client::open(url).map_err(|e| e.to_string())?;
        let conn = open(&client)
            .await
            .map_err(|e| format!("cannot connect to {url}: {e}"))?;
        Ok(RedisQueue {
            conn: Mutex::new(conn),
            client,
            names,
            consumer,
            clock,
            claims: Mutex::new(ClaimClock::default()),
            hand_backs,
        })
    }

    fn claims(&self) -> std::sync::MutexGuard<'_, ClaimClock> {
        self.claims.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn query(&self, cmd: &redis::Cmd) -> Result<Value, QueueError> {
        let mut conn = self
            .conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match cmd.query_async(&mut conn).await {
            Err(e) if e.is_connection_dropped() || e.is_io_error() => {
                let mut conn = open(&self.client).await.map_err(unavailable)?;
                *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = conn.clone();
                cmd.query_async(&mut conn).await.map_err(unavailable)
            }
            answer => answer.map_err(unavailable),
        }
    }

    /// XPENDING extended form: (id, idle ms, deliveries) of up to `count` entries.
    async fn pending(
        &self,
        min_idle: Option<u64>,
        range: (&str, &str),
        count: usize,
        consumer: Option<&str>,
    ) -> Result<Vec<(String, u64, u64)>, QueueError> {
        let mut cmd = redis::cmd("XPENDING");
        cmd.arg(&self.names.stream).arg(&self.names.group);
        if let Some(idle) = min_idle {
            cmd.arg("IDLE").arg(idle);
        }
        cmd.arg(range.0).arg(range.1).arg(count);
        if let Some(c) = consumer {
            cmd.arg(c);
        }
        Ok(array(self.query(&cmd).await?)
            .into_iter()
            .filter_map(|row| match array(row).as_slice() {
                [id, _owner, Value::Int(idle), Value::Int(n)] => {
                    Some((text(id)?, *idle as u64, *n as u64))
                }
                _ => None,
            })
            .collect())
    }

    fn xclaim(&self, min_idle: u64, id: &str) -> redis::Cmd {
        let mut cmd = redis::cmd("XCLAIM");
        cmd.arg(&self.names.stream)
            .arg(&self.names.group)
            .arg(&self.consumer)
            .arg(min_idle)
            .arg(id);
        cmd
    }

    /// One pass of the claim rule: a claimed entry, if any.
    async fn claim(&self) -> Result<Option<Delivery<String>>, QueueError> {
        let rule = self.names.rule;
        let idle = rule.claim_idle_ms(unix_ms());
        for (id, _, deliveries) in self.pending(Some(idle), ("-", "+"), 16, None).await? {
            if rule.is_dead(deliveries) {
                self.dead_letter(idle, &id, deliveries).await?;
                continue;
            }
            let claimed = self.query(&self.xclaim(idle, &id)).await?;
            if let Some((id, body)) = first_entry(&claimed) {
                return Ok(Some(Delivery {
                    receipt: id,
                    body: body.into(),
                    receive_count: deliveries as u32 + 1,
                }));
            }
        }
        Ok(None)
    }

    /// The max_deliveries rule: take the entry (JUSTID: no delivery), add it to the dead stream
    /// and ack it. Another consumer that took it first leaves nothing to do.
    async fn dead_letter(&self, idle: u64, id: &str, deliveries: u64) -> Result<(), QueueError> {
        let mut grab = self.xclaim(idle, id);
        grab.arg("JUSTID");
        if array(self.query(&grab).await?).is_empty() {
            return Ok(());
        }
        let entry = self
            .query(redis::cmd("XRANGE").arg(&self.names.stream).arg(id).arg(id))
            .await?;
        let body = first_entry(&Value::Array(array(entry))).map(|(_, b)| b);
        let mut add = redis::cmd("XADD");
        add.arg(&self.names.dead)
            .arg("*")
            .arg("id")
            .arg(id)
            .arg("deliveries")
            .arg(deliveries)
            .arg("body")
            .arg(body.unwrap_or_default());
        self.query(&add).await?;
        self.query(
            redis::cmd("XACK")
                .arg(&self.names.stream)
                .arg(&self.names.group)
                .arg(id),
        )
        .await?;
        Ok(())
    }

    /// How long until the next pending entry becomes claimable, if any is pending.
    async fn next_claim_ms(&self) -> Result<Option<u64>, QueueError> {
        let now = unix_ms();
        let rule = self.names.rule;
        Ok(self
            .pending(None, ("-", "+"), 1000, None)
            .await?
            .into_iter()
            .map(|(_, idle, _)| rule.wait_ms(now, idle))
            .min())
    }

    /// XREADGROUP `>` for one new entry, blocking for `block` ms (`None`: not at all).
    async fn read_new(&self, block: Option<u64>) -> Result<Option<Delivery<String>>, QueueError> {
        let mut read = redis::cmd("XREADGROUP");
        read.arg("GROUP")
            .arg(&self.names.group)
            .arg(&self.consumer)
            .arg("COUNT")
            .arg(1);
        if let Some(ms) = block {
            read.arg("BLOCK").arg(ms);
        }
        read.arg("STREAMS").arg(&self.names.stream).arg(">");
        let reply = self.query(&read).await?;
        // [[stream, [[id, [field, value, ...]]]]] (or a map of stream to entries in RESP3).
        let entries = match reply {
            Value::Map(m) => m.into_iter().next().map(|(_, v)| v),
            other => array(other)
                .into_iter()
                .next()
                .and_then(|s| array(s).into_iter().nth(1)),
        };
        Ok(entries
            .as_ref()
            .and_then(first_entry)
            .map(|(id, body)| Delivery {
                receipt: id,
                body: body.into(),
                receive_count: 1,
            }))
    }

    /// Claims first, when a claim can be due; else reads a new entry, waiting at most until
    /// the next scan is due. A blocking read ends at once when an entry arrives, but its timeout
    /// only on the server's `hz` tick (up to 100 ms late at Redis's default hz 10): it never
    /// blocks into the last [`BLOCK_SLACK_MS`] before a scan, which is polled instead.
    async fn receive_one(&self) -> Result<Delivery<String>, QueueError> {
        // At most one profile second (an entry handed back early is noticed within it).
        let cap = wall_ms(self.clock.wall(1_000_000_000)).clamp(1, 1000);
        loop {
            let now = unix_ms();
            if self.claims().due(now, &self.hand_backs) {
                if let Some(d) = self.claim().await? {
                    // More may be claimable: scan again at the next receive.
                    self.claims().scan_next();
                    return Ok(d);
                }
                let wait = self.next_claim_ms().await?;
                self.claims()
                    .scanned(now, wait, &self.names.rule, &self.hand_backs);
            }
            let wait = self.claims().wait_ms(unix_ms(), &self.hand_backs);
            let block = if wait <= BLOCK_SLACK_MS {
                if let Some(d) = self.read_new(None).await? {
                    return Ok(d);
                }
                tokio::time::sleep(Duration::from_millis(wait.clamp(1, POLL_MS))).await;
                continue;
            } else {
                (wait - BLOCK_SLACK_MS).min(cap)
            };
            if let Some(d) = self.read_new(Some(block)).await? {
                return Ok(d);
            }
            // An empty read: scan before the next.
            self.claims().scan_next();
        }
    }

    async fn ack_one(&self, id: &str) -> Result<(), QueueError> {
        let acked = self
            .query(
                redis::cmd("XACK")
                    .arg(&self.names.stream)
                    .arg(&self.names.group)
                    .arg(id),
            )
            .await?;
        match acked {
            Value::Int(1) => Ok(()),
            _ => Err(QueueError::StaleReceipt),
        }
    }

    /// The owner's XCLAIM to itself, JUSTID (`idle`: with that idle time), if the entry is
    /// still in this consumer's pending entries list.
    async fn reclaim(&self, id: &str, idle: Option<u64>) -> Result<(), QueueError> {
        let mine = self
            .pending(None, (id, id), 1, Some(&self.consumer))
            .await?;
        if mine.is_empty() {
            return Err(QueueError::StaleReceipt);
        }
        let mut cmd = self.xclaim(0, id);
        if let Some(idle) = idle {
            cmd.arg("IDLE").arg(idle);
        }
        cmd.arg("JUSTID");
        match array(self.query(&cmd).await?).is_empty() {
            true => Err(QueueError::StaleReceipt),
            false => Ok(()),
        }
    }

    /// Hand back: claimable after `delay` (profile time; at most `min_idle`). The run's other
    /// built-in clients are told when ([`HandBacks`]): at the earliest a millisecond after the
    /// XCLAIM was answered, so that no scan that may have missed it counts as having seen it.
    async fn hand_back(&self, id: &str, delay: Duration) -> Result<(), QueueError> {
        let min_idle = self.names.rule.min_idle_ms;
        let delay = wall_ms(self.clock.wall(crate::record::nanos(delay))).min(min_idle);
        let asked = unix_ms();
        self.reclaim(id, Some(min_idle - delay)).await?;
        let due = self.names.rule.wait_ms(asked, min_idle - delay);
        self.hand_backs.note((asked + due).max(unix_ms() + 1));
        self.claims().scan_next();
        Ok(())
    }
}

fn array(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) | Value::Set(a) => a,
        _ => Vec::new(),
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// The first entry of a stream reply and its `body` field (a deleted entry is skipped).
fn first_entry(entries: &Value) -> Option<(String, String)> {
    let Value::Array(entries) = entries else {
        return None;
    };
    entries.iter().find_map(|e| match e {
        Value::Array(pair) => match pair.as_slice() {
            [id, fields] => {
                let fields = match fields {
                    Value::Array(f) => f.clone(),
                    Value::Map(m) => m.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect(),
                    _ => return None,
                };
                let body = fields
                    .chunks(2)
                    .find(|kv| text(&kv[0]).as_deref() == Some("body"))
                    .and_then(|kv| kv.get(1).and_then(text))
                    .unwrap_or_default();
                Some((text(id)?, body))
            }
            _ => None,
        },
        _ => None,
    })
}

impl LiveQueue for RedisQueue {
    fn receive(&self) -> BoxFuture<'_, Result<Delivery<String>, QueueError>> {
        Box::pin(self.receive_one())
    }

    fn ack<'a>(&'a self, receipt: &'a str) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.ack_one(receipt))
    }

    /// Zero hands the entry back at once; anything else is a heartbeat.
    fn change_visibility<'a>(
        &'a self,
        receipt: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        if timeout.is_zero() {
            Box::pin(self.hand_back(receipt, timeout))
        } else {
            Box::pin(self.reclaim(receipt, None))
        }
    }

    fn release<'a>(
        &'a self,
        receipt: &'a str,
        delay: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.hand_back(receipt, delay))
    }

    fn extend<'a>(
        &'a self,
        receipt: &'a str,
        _lease: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.reclaim(receipt, None))
    }
}
