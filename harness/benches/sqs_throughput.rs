//! SQS endpoint throughput: receive+delete pairs per second on loopback, side by side with Redis
//! Streams (XREADGROUP + XACK) on the machine's Redis at 127.0.0.1:6379.
//!
//! `cargo bench -p ackbench --bench sqs_throughput` (release build); `-- 20000` sets the number
//! of messages (default 50000). 32 concurrent pollers drain a queue pre-filled with N messages,
//! in two shapes: one message per receive and a `DeleteMessage` per message (`single`), and up
//! to ten per receive with one `DeleteMessageBatch` (`batch10`); Redis does the same with
//! `COUNT 1` + `XACK` and `COUNT 10` + one `XACK` of ten ids, 32 consumers of one group, each
//! on its own connection. The Redis half is skipped, with the reason printed, when Redis does not
//! answer.
//!
//! The SQS client is a lean JSON 1.0 client over reqwest (one pooled keep-alive connection per
//! poller), not aws-sdk-sqs: on a two-core machine the server and the client share the cores, and
//! the SDK's per-request work (SigV4 signing, interceptors, retry bookkeeping) would measure the
//! client more than the broker. Every phase is bounded (N messages, 120 s).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ackbench::broker::sqs::{SqsConfig, SqsServer};
use serde_json::{json, Value};

const POLLERS: usize = 32;
const LIMIT: Duration = Duration::from_secs(120);
const AUTH: &str = "AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00";

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .find_map(|a| a.parse().ok())
        .unwrap_or(50_000);
    // The server has a runtime of its own, as it would in `ackbench broker`.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
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
    for batch in [1u64, 10] {
        let name = if batch == 1 { "single" } else { "batch10" };
        let sqs = client_rt.block_on(sqs_drain(&server.endpoint_url(), name, n, batch));
        let redis = client_rt.block_on(redis_drain(name, n, batch));
        match (sqs, redis) {
            (Ok(s), Ok(r)) => println!(
                "{name:8} sqs {s:>9.0} pairs/s   redis {r:>9.0} pairs/s   redis/sqs {:.2}x",
                r / s
            ),
            (Ok(s), Err(why)) => println!("{name:8} sqs {s:>9.0} pairs/s   redis skipped: {why}"),
            (Err(e), _) => println!("{name:8} sqs failed: {e}"),
        }
    }
    server_rt.block_on(server.shutdown());
}

/// One JSON 1.0 call; the answer's JSON body, or the error body.
async fn call(
    http: &reqwest::Client,
    endpoint: &str,
    action: &str,
    body: Value,
) -> Result<Value, String> {
    let resp = http
        .post(endpoint)
        .header("x-amz-target", format!("AmazonSQS.{action}"))
        .header("content-type", "application/x-amz-json-1.0")
        .header("authorization", AUTH)
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let ok = resp.status().is_success();
    let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    if ok {
        Ok(v)
    } else {
        Err(v.to_string())
    }
}

/// Fills a fresh queue with `n` messages, then drains it with 32 pollers; pairs per second.
async fn sqs_drain(endpoint: &str, name: &str, n: u64, batch: u64) -> Result<f64, String> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(POLLERS)
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;
    let created = call(
        &http,
        endpoint,
        "CreateQueue",
        json!({ "QueueName": format!("bench-{name}") }),
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
        call(
            &http,
            endpoint,
            "SendMessageBatch",
            json!({ "QueueUrl": url, "Entries": entries }),
        )
        .await?;
        sent += k;
    }
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..POLLERS {
        let (http, endpoint, url, done) = (
            http.clone(),
            endpoint.to_string(),
            url.clone(),
            done.clone(),
        );
        tasks.push(tokio::spawn(async move {
            while done.load(Ordering::Relaxed) < n && start.elapsed() < LIMIT {
                let got = call(
                    &http,
                    &endpoint,
                    "ReceiveMessage",
                    json!({ "QueueUrl": url, "MaxNumberOfMessages": batch, "WaitTimeSeconds": 1 }),
                )
                .await?;
                let handles: Vec<String> = got["Messages"]
                    .as_array()
                    .map(|ms| {
                        ms.iter()
                            .filter_map(|m| m["ReceiptHandle"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                if handles.is_empty() {
                    continue;
                }
                if batch == 1 {
                    call(
                        &http,
                        &endpoint,
                        "DeleteMessage",
                        json!({ "QueueUrl": url, "ReceiptHandle": handles[0] }),
                    )
                    .await?;
                } else {
                    let entries: Vec<Value> = handles
                        .iter()
                        .enumerate()
                        .map(|(i, h)| json!({ "Id": format!("d{i}"), "ReceiptHandle": h }))
                        .collect();
                    call(
                        &http,
                        &endpoint,
                        "DeleteMessageBatch",
                        json!({ "QueueUrl": url, "Entries": entries }),
                    )
                    .await?;
                }
                done.fetch_add(handles.len() as u64, Ordering::Relaxed);
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    let secs = start.elapsed().as_secs_f64();
    let drained = done.load(Ordering::Relaxed);
    if drained < n {
        return Err(format!("drained {drained} of {n} within {LIMIT:?}"));
    }
    Ok(drained as f64 / secs)
}

/// The same drain on a Redis stream with one consumer group.
async fn redis_drain(name: &str, n: u64, batch: u64) -> Result<f64, String> {
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
    let done = Arc::new(AtomicU64::new(0));
    let mut cons = Vec::new();
    for _ in 0..POLLERS {
        cons.push(connect().await?);
    }
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (i, mut c) in cons.into_iter().enumerate() {
        let (stream, done) = (stream.clone(), done.clone());
        tasks.push(tokio::spawn(async move {
            while done.load(Ordering::Relaxed) < n && start.elapsed() < LIMIT {
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
                done.fetch_add(acked, Ordering::Relaxed);
            }
            Ok::<(), String>(())
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    let secs = start.elapsed().as_secs_f64();
    let _: () = redis::cmd("DEL")
        .arg(&stream)
        .query_async(&mut con)
        .await
        .map_err(|e| e.to_string())?;
    let drained = done.load(Ordering::Relaxed);
    if drained < n {
        return Err(format!("drained {drained} of {n} within {LIMIT:?}"));
    }
    Ok(drained as f64 / secs)
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
