//! `ackbench broker` and `ackbench provider` against clients that hold connections: idle
//! keep-alive connections are closed after the idle timeout, a head sent byte by byte after the
//! header-read timeout, connections past the limit wait; requests being answered (a 20 s long
//! poll, a provider call a slow phase holds) are never cut.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::servers_support::{json_strings, Conn, Server};

/// Raises this process's open-file limit to at least `n` (up to the hard limit), so that a test
/// can hold thousands of connections whatever `ulimit -n` says.
fn allow_open_files(n: u64) {
    // SAFETY: getrlimit/setrlimit read and write a plain struct owned here.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < n {
            lim.rlim_cur = n.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// True once the server closed `tcp` (a read sees the end, or a reset), waiting up to `wait`.
fn closed_within(tcp: &mut TcpStream, wait: Duration) -> bool {
    tcp.set_read_timeout(Some(wait)).expect("read timeout");
    let mut buf = [0u8; 512];
    loop {
        match tcp.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // an answer (e.g. a 408) before the close
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false
            }
            Err(_) => return true, // reset
        }
    }
}

/// True if the server closed `tcp` (looked at without waiting).
fn server_closed(tcp: &TcpStream) -> bool {
    tcp.set_nonblocking(true).expect("nonblocking");
    let mut buf = [0u8; 64];
    let closed = match tcp.peek(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock,
    };
    tcp.set_nonblocking(false).expect("blocking");
    closed
}

const SQS_HEAD: &str = "POST / HTTP/1.1\r\nhost: x\r\nx-amz-target: AmazonSQS.ListQueues\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: 2\r\n\r\n";

#[test]
fn two_thousand_idle_connections_are_closed_after_the_idle_timeout() {
    allow_open_files(8192);
    let broker = Server::start(&["broker", "--idle-timeout", "3s"]);
    let fds_before = broker.open_fds();
    let rss_before = broker.rss_kib();
    let t0 = Instant::now();
    // Half send one request first (idle after an answer), half send nothing (idle since the
    // accept).
    let mut conns: Vec<TcpStream> = (0..2_000)
        .map(|i| {
            let mut tcp = TcpStream::connect(&broker.addr).expect("connect");
            if i % 2 == 0 {
                tcp.write_all(format!("{SQS_HEAD}{{}}").as_bytes())
                    .expect("write a request");
            }
            tcp
        })
        .collect();
    for tcp in conns.iter_mut().step_by(2) {
        let mut buf = [0u8; 12];
        tcp.read_exact(&mut buf).expect("an answer");
        assert_eq!(&buf, b"HTTP/1.1 200");
    }
    let opened = t0.elapsed();
    // Give the server a moment to accept the last ones, then count them.
    std::thread::sleep(Duration::from_millis(300));
    let fds_open = broker.open_fds();
    let rss_open = broker.rss_kib();
    assert!(
        fds_open >= fds_before + 2_000,
        "all 2,000 served at once: {fds_before} fds before, {fds_open} with them open"
    );
    assert!(
        opened < Duration::from_secs(3),
        "opening took {opened:?}: the test cannot tell idle closes from slow opens"
    );
    // Each closes 3 s after its accept or its answer: all within 3 s + margin of the opening.
    let deadline = t0 + Duration::from_secs(10);
    for (i, tcp) in conns.iter_mut().enumerate() {
        let wait = deadline.saturating_duration_since(Instant::now());
        assert!(
            closed_within(tcp, wait),
            "connection {i} still open after 10 s"
        );
    }
    let all_closed = t0.elapsed();
    assert!(
        all_closed >= Duration::from_secs(3),
        "closed before the idle timeout: {all_closed:?}"
    );
    drop(conns);
    std::thread::sleep(Duration::from_millis(1500));
    let fds_after = broker.open_fds();
    let rss_after = broker.rss_kib();
    eprintln!(
        "2,000 idle connections: opened in {:.2} s, all closed by the server {:.2} s after the first; fds {fds_before} -> {fds_open} -> {fds_after}; RSS {rss_before} KiB -> {rss_open} KiB -> {rss_after} KiB",
        opened.as_secs_f64(),
        all_closed.as_secs_f64()
    );
    assert!(
        fds_after < fds_before + 10,
        "fds {fds_before} -> {fds_after}"
    );
    assert!(
        rss_after < rss_before + 10 * 1024,
        "RSS stays raised after the connections closed: {rss_before} KiB -> {rss_after} KiB"
    );
}

#[test]
fn a_head_sent_byte_by_byte_is_closed_after_the_header_read_timeout() {
    let broker = Server::start(&["broker", "--header-read-timeout", "1s"]);
    let mut tcp = TcpStream::connect(&broker.addr).expect("connect");
    let t0 = Instant::now();
    let mut closed_at = None;
    // One byte every 100 ms: the whole head would take 12 s.
    for b in SQS_HEAD.bytes() {
        if tcp.write_all(&[b]).is_err() || server_closed(&tcp) {
            closed_at = Some(t0.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let closed_at = closed_at.expect("the server closed the trickling connection");
    assert!(
        closed_at >= Duration::from_millis(900) && closed_at < Duration::from_secs(3),
        "closed {closed_at:?} after the first byte; the header-read timeout is 1 s"
    );
    // A client that sends its request at once is served as before.
    let mut c = Conn::open(&broker.addr);
    c.sqs("ListQueues", "{}");
}

#[test]
fn a_body_sent_byte_by_byte_is_refused_after_the_header_read_timeout() {
    let broker = Server::start(&["broker", "--header-read-timeout", "1s"]);
    let mut tcp = TcpStream::connect(&broker.addr).expect("connect");
    let head = "POST / HTTP/1.1\r\nhost: x\r\nx-amz-target: AmazonSQS.ListQueues\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: 40\r\n\r\n{";
    tcp.write_all(head.as_bytes()).expect("write the head");
    let t0 = Instant::now();
    tcp.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("read timeout");
    let mut answer = Vec::new();
    while t0.elapsed() < Duration::from_secs(5) && !answer.ends_with(b"}") {
        let _ = tcp.write_all(b" ");
        let mut buf = [0u8; 1024];
        match tcp.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert!(text.contains("could not be read"), "{text}");
    let at = t0.elapsed();
    assert!(
        at >= Duration::from_millis(900) && at < Duration::from_secs(3),
        "answered {at:?} after the head"
    );
}

#[test]
fn connections_past_the_limit_wait_until_one_closes() {
    let broker = Server::start(&["broker", "--max-connections", "3"]);
    let mut held: Vec<Conn> = (0..3).map(|_| Conn::open(&broker.addr)).collect();
    for c in &mut held {
        c.sqs("ListQueues", "{}");
    }
    // The fourth connects (the listen backlog takes it) but is not served.
    let mut fourth = TcpStream::connect(&broker.addr).expect("connect");
    fourth
        .write_all(format!("{SQS_HEAD}{{}}").as_bytes())
        .expect("write a request");
    fourth
        .set_read_timeout(Some(Duration::from_millis(1500)))
        .expect("read timeout");
    let mut buf = [0u8; 12];
    let early = fourth.read(&mut buf);
    assert!(
        matches!(&early, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
        "a fourth connection was served past the limit of 3: {early:?}"
    );
    // One of the three goes: the fourth is served.
    drop(held.pop());
    let t0 = Instant::now();
    fourth
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("read timeout");
    fourth
        .read_exact(&mut buf)
        .expect("an answer once a slot is free");
    assert_eq!(&buf, b"HTTP/1.1 200");
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    // The two still held are served as before.
    for c in &mut held {
        c.sqs("ListQueues", "{}");
    }
}

#[test]
fn a_long_poll_outlives_the_idle_and_header_read_timeouts() {
    let broker = Server::start(&[
        "broker",
        "--idle-timeout",
        "1s",
        "--header-read-timeout",
        "1s",
    ]);
    let mut c = Conn::open(&broker.addr);
    let created = c.sqs("CreateQueue", r#"{"QueueName":"poll"}"#);
    let url = json_strings(&created.body, "QueueUrl")[0].to_string();
    let t0 = Instant::now();
    let got = c.sqs(
        "ReceiveMessage",
        &format!(r#"{{"QueueUrl":"{url}","WaitTimeSeconds":3}}"#),
    );
    let waited = t0.elapsed();
    assert!(!got.body.contains("ReceiptHandle"), "{}", got.body);
    assert!(
        waited >= Duration::from_millis(2900),
        "the long poll ended after {waited:?}, not 3 s"
    );
    // The connection is still usable right after.
    c.sqs("ListQueues", "{}");
}

#[test]
fn a_provider_call_held_by_a_slow_phase_outlives_the_timeouts() {
    let broker = Server::start(&[
        "provider",
        "profiles/healthy.yaml",
        "--set",
        "provider.latency={dist: fixed, value: 3s}",
        "--idle-timeout",
        "1s",
        "--header-read-timeout",
        "1s",
    ]);
    let mut c = Conn::open(&broker.addr);
    let t0 = Instant::now();
    let a = c.post(
        "/w/1/send",
        &[("content-type", "application/json")],
        br#"{"key":"order-1"}"#,
    );
    let took = t0.elapsed();
    assert_eq!(a.status, 202, "{}", a.body);
    assert!(
        took >= Duration::from_millis(2900),
        "answered after {took:?}"
    );
    // Idle after its answer, the connection is closed by the 1 s idle timeout.
    let mut tcp = TcpStream::connect(&broker.addr).expect("connect");
    let t1 = Instant::now();
    assert!(closed_within(&mut tcp, Duration::from_secs(5)));
    assert!(
        t1.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t1.elapsed()
    );
}
