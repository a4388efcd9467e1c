//! The proxy's byte path on a worker's link: a cut, a delay, a partition that holds and one
//! that drops, and a broker closing behind a partition, each between a test client and a fake
//! broker whose socket the test drives.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::link::{Effect, Links};
use super::{Connection, Flow, Protocol, Proxy};
use crate::record::WorkerId;

const MS: Duration = Duration::from_millis(1);

/// Passes everything on and keeps what it read, per direction, so a test sees what the proxy
/// would have reported and when.
struct Seen(Arc<Mutex<Vec<String>>>);

impl Connection for Seen {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        let text = String::from_utf8_lossy(bytes);
        self.0.lock().unwrap().push(format!("up {text}"));
        forward.extend_from_slice(bytes);
        Flow::Go
    }
    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        let text = String::from_utf8_lossy(bytes);
        self.0.lock().unwrap().push(format!("down {text}"));
        forward.extend_from_slice(bytes);
        Flow::Go
    }
    fn broker_closed(&mut self) {
        self.0.lock().unwrap().push("broker closed".into());
    }
}

struct Seeing(Arc<Mutex<Vec<String>>>);
impl Protocol for Seeing {
    fn connection(&self, _worker: WorkerId) -> Box<dyn Connection> {
        Box::new(Seen(self.0.clone()))
    }
    fn broke(&self, _worker: WorkerId, why: String) {
        self.0.lock().unwrap().push(format!("broke: {why}"));
    }
}

/// A proxy for two workers on links the test controls, in front of a fake broker that hands
/// each connection it accepts to the test.
struct Rig {
    proxy: Proxy,
    links: Arc<Links>,
    accepted: mpsc::UnboundedReceiver<TcpStream>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Rig {
    async fn new() -> Rig {
        let broker = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let upstream = broker.local_addr().unwrap();
        let (tx, accepted) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((s, _)) = broker.accept().await {
                let _ = tx.send(s);
            }
        });
        let links = Arc::new(Links::new(2));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let proxy = Proxy::start(
            upstream,
            2,
            Arc::new(Seeing(seen.clone())),
            Some(links.clone()),
        )
        .await
        .unwrap();
        Rig {
            proxy,
            links,
            accepted,
            seen,
        }
    }

    /// Worker `w` connects: its socket and the broker's side of it.
    async fn connect(&mut self, w: WorkerId) -> (TcpStream, TcpStream) {
        let c = TcpStream::connect(self.proxy.addr(w)).await.unwrap();
        let s = self.accepted.recv().await.unwrap();
        (c, s)
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads exactly `n` bytes, or fails the test after 2 s.
async fn read_n(s: &mut TcpStream, n: usize) -> String {
    let mut buf = vec![0u8; n];
    tokio::time::timeout(Duration::from_secs(2), s.read_exact(&mut buf))
        .await
        .expect("bytes within 2 s")
        .unwrap();
    String::from_utf8(buf).unwrap()
}

/// True if nothing arrives on `s` within `wait`.
async fn silent(s: &mut TcpStream, wait: Duration) -> bool {
    let mut buf = [0u8; 16];
    tokio::time::timeout(wait, s.read(&mut buf)).await.is_err()
}

/// What is left to read until the other side closed (within 2 s).
async fn to_end(s: &mut TcpStream) -> Vec<u8> {
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), s.read_to_end(&mut rest))
        .await
        .expect("closed within 2 s")
        .ok();
    rest
}

#[tokio::test]
async fn a_cut_closes_both_sides_of_each_of_the_workers_connections_and_no_other() {
    let mut rig = Rig::new().await;
    let (mut c1, mut s1) = rig.connect(1).await;
    let (mut c1b, mut s1b) = rig.connect(1).await;
    let (mut c2, mut s2) = rig.connect(2).await;
    c1.write_all(b"hi").await.unwrap();
    assert_eq!(read_n(&mut s1, 2).await, "hi");
    rig.links.cut(1);
    // Both of worker 1's connections end, at the worker's side and at the broker's.
    for s in [&mut c1, &mut s1, &mut c1b, &mut s1b] {
        assert_eq!(to_end(s).await, b"");
    }
    // Worker 2's goes on; worker 1 connects again and its new connection passes bytes.
    c2.write_all(b"on").await.unwrap();
    assert_eq!(read_n(&mut s2, 2).await, "on");
    let (mut c1, mut s1) = rig.connect(1).await;
    s1.write_all(b"back").await.unwrap();
    assert_eq!(read_n(&mut c1, 4).await, "back");
    rig.proxy.stop().await;
}

#[tokio::test]
async fn latency_delays_each_chunk_by_at_least_the_delay_in_its_direction_only() {
    let mut rig = Rig::new().await;
    let (mut c, mut s) = rig.connect(1).await;
    let slow = Effect::Latency {
        delay: 200 * MS,
        to_broker: false,
        to_worker: true,
    };
    rig.links.begin(1, 0, slow);
    // Towards the broker: no delay. Towards the worker: 200 ms at least.
    c.write_all(b"req").await.unwrap();
    assert_eq!(read_n(&mut s, 3).await, "req");
    let sent = Instant::now();
    s.write_all(b"answer").await.unwrap();
    assert_eq!(read_n(&mut c, 6).await, "answer");
    assert!(sent.elapsed() >= 200 * MS, "{:?}", sent.elapsed());
    // Two chunks 100 ms apart each wait their own 200 ms (not 400 ms for the second): they
    // arrive about 100 ms apart, the second 300 ms or more after the first was sent.
    let first = Instant::now();
    s.write_all(b"a").await.unwrap();
    tokio::time::sleep(100 * MS).await;
    s.write_all(b"b").await.unwrap();
    assert_eq!(read_n(&mut c, 1).await, "a");
    assert!(first.elapsed() >= 200 * MS);
    assert_eq!(read_n(&mut c, 1).await, "b");
    let both = first.elapsed();
    assert!(both >= 300 * MS && both < 400 * MS, "{both:?}");
    // The window over, an answer comes back within the delay.
    rig.links.end(1, 0);
    let sent = Instant::now();
    s.write_all(b"fast").await.unwrap();
    assert_eq!(read_n(&mut c, 4).await, "fast");
    assert!(sent.elapsed() < 200 * MS, "{:?}", sent.elapsed());
    rig.proxy.stop().await;
}

#[tokio::test]
async fn a_holding_partition_passes_nothing_and_forwards_what_it_held_at_its_end() {
    let mut rig = Rig::new().await;
    let (mut c, mut s) = rig.connect(1).await;
    rig.links.begin(1, 3, Effect::Partition { drop: false });
    c.write_all(b"ack").await.unwrap();
    s.write_all(b"msg").await.unwrap();
    // Nothing passes either way for 300 ms, and the proxy read none of it.
    assert!(silent(&mut s, 300 * MS).await);
    assert!(silent(&mut c, 10 * MS).await);
    assert!(rig.seen().is_empty(), "{:?}", rig.seen());
    // The end: each side gets what the other sent, and the proxy reads it then.
    rig.links.end(1, 3);
    assert_eq!(read_n(&mut s, 3).await, "ack");
    assert_eq!(read_n(&mut c, 3).await, "msg");
    let mut seen = rig.seen();
    seen.sort();
    assert_eq!(seen, ["down msg", "up ack"]);
    // The connection goes on.
    c.write_all(b"more").await.unwrap();
    assert_eq!(read_n(&mut s, 4).await, "more");
    rig.proxy.stop().await;
}

#[tokio::test]
async fn a_dropping_partition_closes_the_connection_at_its_end_with_what_it_held() {
    let mut rig = Rig::new().await;
    let (mut c, mut s) = rig.connect(1).await;
    rig.links.begin(1, 0, Effect::Partition { drop: true });
    c.write_all(b"ack").await.unwrap();
    s.write_all(b"msg").await.unwrap();
    assert!(silent(&mut s, 200 * MS).await);
    rig.links.end(1, 0);
    // Both sides closed, neither got a byte the other sent during the partition, and the proxy
    // read none of them.
    assert_eq!(to_end(&mut s).await, b"");
    assert_eq!(to_end(&mut c).await, b"");
    assert!(rig.seen().is_empty(), "{:?}", rig.seen());
    rig.proxy.stop().await;
}

#[tokio::test]
async fn a_broker_closing_behind_a_partition_acts_at_once_and_is_seen_at_the_windows_end() {
    let mut rig = Rig::new().await;
    let (mut c, s) = rig.connect(1).await;
    rig.links.begin(1, 0, Effect::Partition { drop: false });
    c.write_all(b"ack").await.unwrap();
    // The broker closes its side (a heartbeat timeout): the proxy is told at once, and the
    // worker sees neither the end nor anything else until the window closes.
    drop(s);
    let told = Instant::now();
    while rig.seen().is_empty() {
        assert!(told.elapsed() < Duration::from_secs(2), "not told");
        tokio::time::sleep(5 * MS).await;
    }
    assert_eq!(rig.seen(), ["broker closed"]);
    assert!(silent(&mut c, 200 * MS).await);
    // The end: the worker's held ack is read (it reaches a closed connection), then the
    // worker's side closes.
    rig.links.end(1, 0);
    assert_eq!(to_end(&mut c).await, b"");
    assert_eq!(rig.seen(), ["broker closed", "up ack"]);
    rig.proxy.stop().await;
}
