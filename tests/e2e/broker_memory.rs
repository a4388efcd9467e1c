//! A long-running `ackbench broker` stays flat: messages sent and deleted, and purged backlogs
//! of large messages, leave its resident memory where it was.
//!
//! Sized for a debug build (each 100 KiB message costs the debug broker about 11 ms of MD5,
//! validation and JSON): 100,000 messages sent and deleted (the old broker kept 336 bytes of
//! each: 33 MB), and 10 purges of 200 x 100 KiB (20 MB a round, more than the budget, so memory
//! that is freed but not given back fails it too). `SOAK_MESSAGES` and `SOAK_PURGED` change
//! the sizes (1000000 and 1000 for the full soak).

use std::time::{Duration, Instant};

use super::servers_support::{json_strings, Conn, Server};

/// Sends `n` messages to `url` and deletes each, over `conns` keep-alive connections on as many
/// threads, ten at a time: SendMessageBatch, ReceiveMessage(10), DeleteMessageBatch.
fn send_and_delete(addr: &str, url: &str, n: usize, conns: usize) {
    let per = n / conns;
    std::thread::scope(|s| {
        for _ in 0..conns {
            s.spawn(|| {
                let mut c = Conn::open(addr);
                let send: String = {
                    let entries: Vec<String> = (0..10)
                        .map(|i| format!(r#"{{"Id":"m{i}","MessageBody":"order-{i}"}}"#))
                        .collect();
                    format!(
                        r#"{{"QueueUrl":"{url}","Entries":[{}]}}"#,
                        entries.join(",")
                    )
                };
                let receive = format!(r#"{{"QueueUrl":"{url}","MaxNumberOfMessages":10}}"#);
                let mut deleted = 0;
                while deleted < per {
                    c.sqs("SendMessageBatch", &send);
                    let got = c.sqs("ReceiveMessage", &receive);
                    let handles = json_strings(&got.body, "ReceiptHandle");
                    if handles.is_empty() {
                        continue;
                    }
                    let entries: Vec<String> = handles
                        .iter()
                        .enumerate()
                        .map(|(i, h)| format!(r#"{{"Id":"d{i}","ReceiptHandle":"{h}"}}"#))
                        .collect();
                    let del = c.sqs(
                        "DeleteMessageBatch",
                        &format!(
                            r#"{{"QueueUrl":"{url}","Entries":[{}]}}"#,
                            entries.join(",")
                        ),
                    );
                    assert!(!del.body.contains("\"Failed\":[{"), "{}", del.body);
                    deleted += handles.len();
                }
            });
        }
    });
}

/// Creates queue `name`, fills it with `n` messages of `size` bytes (two per batch), then purges
/// it (a new queue each time: SQS allows one purge of a queue every 60 s).
fn fill_and_purge(c: &mut Conn, name: &str, n: usize, size: usize) {
    let created = c.sqs("CreateQueue", &format!(r#"{{"QueueName":"{name}"}}"#));
    let url = json_strings(&created.body, "QueueUrl")[0].to_string();
    let body = "x".repeat(size);
    let batch = format!(
        r#"{{"QueueUrl":"{url}","Entries":[{{"Id":"a","MessageBody":"{body}"}},{{"Id":"b","MessageBody":"{body}"}}]}}"#
    );
    for _ in 0..n / 2 {
        c.sqs("SendMessageBatch", &batch);
    }
    c.sqs("PurgeQueue", &format!(r#"{{"QueueUrl":"{url}"}}"#));
}

/// A size from the environment, or `default`.
fn size(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A broker with queue `soak`, warmed up (threads, connection buffers, allocator pools at their
/// working size). Returns it, a connection and the queue URL.
fn warm_broker() -> (Server, Conn, String) {
    let broker = Server::start(&["broker"]);
    let mut c = Conn::open(&broker.addr);
    let created = c.sqs("CreateQueue", r#"{"QueueName":"soak"}"#);
    let url = json_strings(&created.body, "QueueUrl")[0].to_string();
    send_and_delete(&broker.addr, &url, 10_000, 4);
    fill_and_purge(&mut c, "warm", 10, 100 * 1024);
    // The broker gives freed memory back within a second.
    std::thread::sleep(Duration::from_millis(1500));
    (broker, c, url)
}

/// Growth under the budget, or a failure with the figures.
fn assert_flat(what: &str, before: u64, after: u64) {
    let growth = after.saturating_sub(before);
    assert!(
        growth < 20 * 1024,
        "{what}: RSS grew by {growth} KiB ({before} KiB before, {after} KiB after)"
    );
}

#[test]
fn a_long_running_broker_frees_deleted_messages() {
    let (broker, _, url) = warm_broker();
    let before = broker.rss_kib();
    let n = size("SOAK_MESSAGES", 100_000);
    let t0 = Instant::now();
    send_and_delete(&broker.addr, &url, n, 4);
    let after = broker.rss_kib();
    eprintln!(
        "broker RSS {before} KiB before, {after} KiB after {n} messages sent and deleted in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    // A fresh connection: the warm-up's may have been idle past the idle timeout meanwhile.
    let attrs = Conn::open(&broker.addr).sqs(
        "GetQueueAttributes",
        &format!(
            r#"{{"QueueUrl":"{url}","AttributeNames":["ApproximateNumberOfMessagesNotVisible"]}}"#
        ),
    );
    assert!(
        attrs
            .body
            .contains(r#""ApproximateNumberOfMessagesNotVisible":"0""#),
        "{}",
        attrs.body
    );
    assert_flat("messages sent and deleted", before, after);
}

#[test]
fn a_long_running_broker_frees_purged_messages() {
    let (broker, mut c, url) = warm_broker();
    let before = broker.rss_kib();
    let n = size("SOAK_PURGED", 200);
    let t0 = Instant::now();
    let mut peak = before;
    for i in 0..10 {
        fill_and_purge(&mut c, &format!("purged-{i}"), n, 100 * 1024);
        peak = peak.max(broker.rss_kib());
    }
    std::thread::sleep(Duration::from_millis(1500));
    let after = broker.rss_kib();
    eprintln!(
        "broker RSS {before} KiB before, {peak} KiB at most right after a purge, {after} KiB after 10 purges of {n} x 100 KiB in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let last = url.replace("/soak", "/purged-9");
    let attrs = c.sqs(
        "GetQueueAttributes",
        &format!(r#"{{"QueueUrl":"{last}","AttributeNames":["ApproximateNumberOfMessages"]}}"#),
    );
    assert!(
        attrs.body.contains(r#""ApproximateNumberOfMessages":"0""#),
        "{}",
        attrs.body
    );
    assert_flat("10 purges", before, after);
}
