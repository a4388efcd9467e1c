//! SQS endpoint throughput: receive+delete pairs per second on loopback, side by side with Redis
//! Streams (XREADGROUP + XACK) on the machine's Redis at 127.0.0.1:6379.
//!
//! `cargo bench -p ackbench --bench sqs_throughput` (release build); `-- 50000` sets the number
//! of messages (default 200000), `-- single` or `-- batch10` runs one shape only, and
//! `ACKBENCH_SQS_SERVER_THREADS=1` gives the server runtime one worker thread instead of two.
//!
//! 32 concurrent pollers drain a queue pre-filled with N messages, in two shapes: one message
//! per receive and a `DeleteMessage` per message (`single`), and up to ten per receive with one
//! `DeleteMessageBatch` (`batch10`); Redis does the same with `COUNT 1` + `XACK` and `COUNT 10` +
//! one `XACK` of ten ids, 32 consumers of one group, each on its own connection. The Redis half
//! is skipped, with the reason printed, when Redis does not answer.
//!
//! A drain's rate is N over the time from the first receive to the last pair's delete (or
//! `XACK`). Pollers that asked for more just before the queue ran dry are still waiting out
//! their receive then (an SQS long poll of `WaitTimeSeconds` 1 s, a Redis `BLOCK` of 100 ms);
//! that idle tail moves no message and is not counted. A batched drain of 200,000 messages takes
//! about a second, so the tail would otherwise be half of SQS's time and a tenth of Redis's.
//!
//! The SQS client is a lean JSON 1.0 client over hyper (one HTTP/1.1 keep-alive connection per
//! poller, as each Redis consumer has its own connection), not aws-sdk-sqs: on a two-core machine
//! the server and the client share the cores, and the SDK's per-request work (SigV4 signing,
//! interceptors, retry bookkeeping, connection pool) would measure the client more than the
//! broker. Each line also gives the CPU time per pair of the broker (the server runtime's threads)
//! and of redis-server (`INFO cpu`) over the drain (not while the queue is filled), which
//! depends less on what else the machine is doing than the rate does. Every phase is bounded
//! (N messages, 120 s).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use ackbench::internals::serve::{SqsConfig, SqsServer};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

const POLLERS: usize = 32;
/// Name of the server runtime's threads, to tell their CPU time from the client's.
const SERVER_THREADS: &str = "sqs-server";
const LIMIT: Duration = Duration::from_secs(120);
const AUTH: &str = "AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00";

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .find_map(|a| a.parse().ok())
        .unwrap_or(200_000);
    // The server has a runtime of its own, as it would in `ackbench broker`.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(server_threads())
        .thread_name(SERVER_THREADS)
        .enable_all()
        .build()
        .expect("server runtime");
    let server = server_rt
        .block_on(SqsServer::bind(
            "127.0.0.1:0".parse().expect("addr"),
            SqsConfig::default(),
        ))
        .expect("bind");
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("client runtime");
    println!("sqs_throughput: {n} messages, {POLLERS} concurrent pollers, loopback, release build");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = |name: &str| {
        !args.iter().any(|a| a == "single" || a == "batch10") || args.iter().any(|a| a == name)
    };
    for batch in [1u64, 10] {
        let name = if batch == 1 { "single" } else { "batch10" };
        if !only(name) {
            continue;
        }
        let sqs = client_rt.block_on(sqs_drain(server.local_addr(), name, n, batch));
        match &sqs {
            Ok(s) => println!("{name:8} sqs   {}", s.line(n)),
            Err(e) => println!("{name:8} sqs   failed: {e}"),
        }
        match (&sqs, client_rt.block_on(redis_drain(name, n, batch))) {
            (Ok(s), Ok(r)) => println!(
                "{name:8} redis {}   redis/sqs {:.2}x",
                r.line(n),
                r.rate / s.rate
            ),
            (_, Ok(r)) => println!("{name:8} redis {}", r.line(n)),
            (_, Err(why)) => println!("{name:8} redis skipped: {why}"),
        }
    }
    server_rt.block_on(server.shutdown());
}

/// Worker threads of the server runtime: `ACKBENCH_SQS_SERVER_THREADS`, default 2.
fn server_threads() -> usize {
    std::env::var("ACKBENCH_SQS_SERVER_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
}

/// CPU time (user + system) this process used so far, from `/proc/self/stat` (0 elsewhere).
fn cpu_seconds() -> f64 {
    stat_cpu(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default())
}

/// utime + stime of a `/proc/.../stat` line, in seconds: after the command name (which ends with
/// the last ')') they are the 12th and 13th fields, in clock ticks (100 per second on Linux).
fn stat_cpu(stat: &str) -> f64 {
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// CPU time of this process's server threads (see [`SERVER_THREADS`]).
fn server_cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim().starts_with(SERVER_THREADS))
        })
        .map(|t| stat_cpu(&std::fs::read_to_string(t.path().join("stat")).unwrap_or_default()))
        .sum()
}

/// Redis's own CPU time (`INFO cpu`: used_cpu_user + used_cpu_sys), 0 if unknown.
async fn redis_cpu_seconds() -> f64 {
    let Ok(client) = redis::Client::open("redis://127.0.0.1:6379/") else {
        return 0.0;
    };
    let Ok(Ok(mut con)) = tokio::time::timeout(
        Duration::from_secs(2),
        client.get_multiplexed_async_connection(),
    )
    .await
    else {
        return 0.0;
    };
    let info: String = redis::cmd("INFO")
        .arg("cpu")
        .query_async(&mut con)
        .await
        .unwrap_or_default();
    info.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| *k == "used_cpu_user" || *k == "used_cpu_sys")
        .filter_map(|(_, v)| v.trim().parse::<f64>().ok())
        .sum()
}

/// A lean JSON 1.0 client: one HTTP/1.1 keep-alive connection of its own (hyper), as each
/// Redis consumer has its own connection.
struct Lean {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    host: String,
}

impl Lean {
    async fn connect(addr: std::net::SocketAddr) -> Result<Lean, String> {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| e.to_string())?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        Ok(Lean {
            sender,
            host: addr.to_string(),
        })
    }

    /// One call: `body` serialized, the answer decoded as `T`, or the error body.
    async fn call<B: Serialize, T: DeserializeOwned>(
        &mut self,
        action: &str,
        body: &B,
    ) -> Result<T, String> {
        let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let req = hyper::Request::post("/")
            .header("host", &self.host)
            .header("x-amz-target", format!("AmazonSQS.{action}"))
            .header("content-type", "application/x-amz-json-1.0")
            .header("authorization", AUTH)
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        self.sender.ready().await.map_err(|e| e.to_string())?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| e.to_string())?;
        let ok = resp.status().is_success();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        if !ok {
            return Err(String::from_utf8_lossy(&bytes).into_owned());
        }
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct ReceiveReq<'a> {
    queue_url: &'a str,
    max_number_of_messages: u64,
    wait_time_seconds: u32,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ReceiveResp {
    #[serde(default)]
    messages: Vec<Msg>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Msg {
    receipt_handle: String,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DeleteReq<'a> {
    queue_url: &'a str,
    receipt_handle: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DeleteBatchReq<'a> {
    queue_url: &'a str,
    entries: Vec<DeleteEntry<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct DeleteEntry<'a> {
    id: &'static str,
    receipt_handle: &'a str,
}

const IDS: [&str; 10] = ["d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9"];

/// How far a drain is: pairs done, and when the last of its `n` pairs completed.
///
/// The drain ends with the last pair, not when the last poller returns: a poller that asked for
/// more just before the queue ran dry waits out its receive (an SQS long poll its full
/// `WaitTimeSeconds`, 1 s here; a Redis `BLOCK` its 100 ms) with nothing left to move, and
/// counting that idle wait would charge SQS ten times the idle time of Redis.
struct Progress {
    n: u64,
    start: Instant,
    done: AtomicU64,
    finished: OnceLock<Duration>,
}

impl Progress {
    fn start(n: u64) -> Arc<Progress> {
        Arc::new(Progress {
            n,
            start: Instant::now(),
            done: AtomicU64::new(0),
            finished: OnceLock::new(),
        })
    }

    /// Whether pollers should keep asking: pairs are left and the time limit is not reached.
    fn more(&self) -> bool {
        self.done.load(Ordering::Relaxed) < self.n && self.start.elapsed() < LIMIT
    }

    /// `k` more pairs done; the one that completes the drain stops its clock.
    fn add(&self, k: u64) {
        if self.done.fetch_add(k, Ordering::Relaxed) + k >= self.n {
            let _ = self.finished.set(self.start.elapsed());
        }
    }

    /// Pairs per second from the first receive to the last pair, or why the drain fell short.
    fn rate(&self) -> Result<f64, String> {
        let done = self.done.load(Ordering::Relaxed);
        match self.finished.get() {
            Some(t) if done >= self.n => Ok(done as f64 / t.as_secs_f64()),
            _ => Err(format!("drained {done} of {} within {LIMIT:?}", self.n)),
        }
    }
}

/// What one drain measured: pairs per second, and the CPU seconds its server and its client
/// used from the first receive until the pollers stopped (not while the queue was filled).
struct Drained {
    rate: f64,
    server_cpu: f64,
    client_cpu: f64,
}

impl Drained {
    fn line(&self, n: u64) -> String {
        let per = |secs: f64| secs * 1e6 / n as f64;
        format!(
            "{:>9.0} pairs/s   server {:>5.1} us CPU/pair   client+server {:>5.1} us CPU/pair",
            self.rate,
            per(self.server_cpu),
            per(self.server_cpu + self.client_cpu)
        )
    }
}

/// Fills a fresh queue with `n` messages, then drains it with 32 pollers; pairs per second.
async fn sqs_drain(
    addr: std::net::SocketAddr,
    name: &str,
    n: u64,
    batch: u64,
) -> Result<Drained, String> {
    let mut setup = Lean::connect(addr).await?;
    let created: Value = setup
        .call(
            "CreateQueue",
            &json!({ "QueueName": format!("bench-{name}") }),
        )
        .await?;
    let url = created["QueueUrl"]
        .as_str()
        .ok_or("no QueueUrl")?
        .to_string();
    let mut sent = 0;
    while sent < n {
        let k = (n - sent).min(10);
        let entries: Vec<Value> = (0..k)
            .map(|i| {
                let seq = sent + i + 1;
                json!({ "Id": format!("m{i}"), "MessageBody": format!(r#"{{"key":"msg-{seq}","seq":{seq},"email":"msg-{seq}@example.test"}}"#) })
            })
            .collect();
        let _: IgnoredAny = setup
            .call(
                "SendMessageBatch",
                &json!({ "QueueUrl": url, "Entries": entries }),
            )
            .await?;
        sent += k;
    }
    let mut pollers = Vec::new();
    for _ in 0..POLLERS {
        pollers.push(Lean::connect(addr).await?);
    }
    let cpu0 = (cpu_seconds(), server_cpu_seconds());
    let progress = Progress::start(n);
    let mut tasks = Vec::new();
    for mut lean in pollers {
        let (url, progress) = (url.clone(), progress.clone());
        tasks.push(tokio::spawn(async move {
            while progress.more() {
                let receive = ReceiveReq {
                    queue_url: &url,
                    max_number_of_messages: batch,
                    wait_time_seconds: 1,
                };
                let got: ReceiveResp = lean.call("ReceiveMessage", &receive).await?;
                let handles = got.messages;
                if handles.is_empty() {
                    continue;
                }
                if batch == 1 {
                    let delete = DeleteReq {
                        queue_url: &url,
                        receipt_handle: &handles[0].receipt_handle,
                    };
                    let _: IgnoredAny = lean.call("DeleteMessage", &delete).await?;
                } else {
                    let delete = DeleteBatchReq {
                        queue_url: &url,
                        entries: handles
                            .iter()
                            .zip(IDS)
                            .map(|(m, id)| DeleteEntry {
                                id,
                                receipt_handle: &m.receipt_handle,
                            })
                            .collect(),
                    };
                    let _: IgnoredAny = lean.call("DeleteMessageBatch", &delete).await?;
                }
                progress.add(handles.len() as u64);
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    let (all, server_cpu) = (cpu_seconds() - cpu0.0, server_cpu_seconds() - cpu0.1);
    Ok(Drained {
        rate: progress.rate()?,
        server_cpu,
        client_cpu: all - server_cpu,
    })
}

/// The same drain on a Redis stream with one consumer group.
async fn redis_drain(name: &str, n: u64, batch: u64) -> Result<Drained, String> {
    let client = redis::Client::open("redis://127.0.0.1:6379/").map_err(|e| e.to_string())?;
    let connect = || async {
        tokio::time::timeout(
            Duration::from_secs(2),
            client.get_multiplexed_async_connection(),
        )
        .await
        .map_err(|_| "Redis at 127.0.0.1:6379 did not answer within 2 s".to_string())?
        .map_err(|e| format!("Redis at 127.0.0.1:6379 is not reachable: {e}"))
    };
    let mut con = connect().await?;
    let stream = format!("ackbench:bench:{name}");
    let _: () = redis::cmd("DEL")
        .arg(&stream)
        .query_async(&mut con)
        .await
        .map_err(|e| e.to_string())?;
    let _: () = redis::cmd("XGROUP")
        .arg("CREATE")
        .arg(&stream)
        .arg("g")
        .arg("0")
        .arg("MKSTREAM")
        .query_async(&mut con)
        .await
        .map_err(|e| e.to_string())?;
    let mut sent = 0;
    while sent < n {
        let k = (n - sent).min(1000);
        let mut pipe = redis::pipe();
        for i in 0..k {
            let seq = sent + i + 1;
            pipe.cmd("XADD")
                .arg(&stream)
                .arg("*")
                .arg("body")
                .arg(format!(
                    r#"{{"key":"msg-{seq}","seq":{seq},"email":"msg-{seq}@example.test"}}"#
                ))
                .ignore();
        }
        let _: () = pipe
            .query_async(&mut con)
            .await
            .map_err(|e| e.to_string())?;
        sent += k;
    }
    let mut cons = Vec::new();
    for _ in 0..POLLERS {
        cons.push(connect().await?);
    }
    let cpu0 = (cpu_seconds(), redis_cpu_seconds().await);
    let progress = Progress::start(n);
    let mut tasks = Vec::new();
    for (i, mut c) in cons.into_iter().enumerate() {
        let (stream, progress) = (stream.clone(), progress.clone());
        tasks.push(tokio::spawn(async move {
            while progress.more() {
                let reply: redis::Value = redis::cmd("XREADGROUP")
                    .arg("GROUP")
                    .arg("g")
                    .arg(format!("c{i}"))
                    .arg("COUNT")
                    .arg(batch)
                    .arg("BLOCK")
                    .arg(100)
                    .arg("STREAMS")
                    .arg(&stream)
                    .arg(">")
                    .query_async(&mut c)
                    .await
                    .map_err(|e| e.to_string())?;
                let ids = entry_ids(&reply);
                if ids.is_empty() {
                    continue;
                }
                let acked: u64 = redis::cmd("XACK")
                    .arg(&stream)
                    .arg("g")
                    .arg(&ids)
                    .query_async(&mut c)
                    .await
                    .map_err(|e| e.to_string())?;
                progress.add(acked);
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    let (client_cpu, server_cpu) = (cpu_seconds() - cpu0.0, redis_cpu_seconds().await - cpu0.1);
    let _: () = redis::cmd("DEL")
        .arg(&stream)
        .query_async(&mut con)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Drained {
        rate: progress.rate()?,
        server_cpu,
        client_cpu,
    })
}

/// The entry ids of an XREADGROUP reply (RESP2): `[[stream, [[id, fields], ...]], ...]`.
fn entry_ids(v: &redis::Value) -> Vec<String> {
    use redis::Value as V;
    let V::Array(streams) = v else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for s in streams {
        let V::Array(pair) = s else { continue };
        let Some(V::Array(entries)) = pair.get(1) else {
            continue;
        };
        for e in entries {
            if let V::Array(parts) = e {
                if let Some(V::BulkString(id)) = parts.first() {
                    ids.push(String::from_utf8_lossy(id).into_owned());
                }
            }
        }
    }
    ids
}
