//! The flags of `ackbench broker` and `ackbench provider`: bad values are exit 2 with a message
//! naming the flag; `--listen` takes a host name that resolves to loopback.

use super::common::refused;
use super::servers_support::{Conn, Server};

#[test]
fn an_invalid_queue_name_is_refused_with_exit_2() {
    let base = ["broker", "profiles/healthy.yaml", "--listen", "127.0.0.1:0"];
    let e = refused(&base, &["--queue", "bad name"]);
    assert!(
        e.contains("--queue \"bad name\": a queue name is 1 to 80 characters"),
        "{e}"
    );
    let e = refused(&base, &["--queue", "orders.fifo"]);
    assert!(
        e.contains("--queue orders.fifo: FIFO queues are not supported"),
        "{e}"
    );
    let e = refused(&base, &["--queue", &"q".repeat(81)]);
    assert!(e.contains("a queue name is 1 to 80 characters"), "{e}");
    // healthy.yaml allows 3 deliveries: the queue gets a `-dlq`, which must fit in 80 too.
    let e = refused(&base, &["--queue", &"q".repeat(78)]);
    assert!(e.contains("its dead-letter queue"), "{e}");
    assert!(e.contains("at most 76"), "{e}");
    // Without a profile no queue is created, but a bad name is still refused.
    let e = refused(&["broker", "--listen", "127.0.0.1:0"], &["--queue", "a/b"]);
    assert!(e.contains("--queue \"a/b\""), "{e}");
}

#[test]
fn bad_connection_limits_are_refused_with_exit_2() {
    let provider: &[&str] = &["provider", "profiles/healthy.yaml"];
    for (base, flag, value, says) in [
        (
            &["broker"][..],
            "--idle-timeout",
            "0s",
            "--idle-timeout must be above 0",
        ),
        (
            &["broker"][..],
            "--header-read-timeout",
            "soon",
            "--header-read-timeout soon:",
        ),
        (
            &["broker"][..],
            "--max-connections",
            "0",
            "--max-connections must be from 1 to",
        ),
        (
            provider,
            "--header-read-timeout",
            "0ms",
            "--header-read-timeout must be above 0",
        ),
        (provider, "--idle-timeout", "later", "--idle-timeout later:"),
    ] {
        let e = refused(base, &["--listen", "127.0.0.1:0", flag, value]);
        assert!(e.contains(says), "{flag} {value}: {e}");
    }
    for base in [&["broker"][..], provider] {
        let e = refused(base, &["--listen", "localhost"]);
        assert!(e.contains("expected HOST:PORT"), "{e}");
        let e = refused(base, &["--listen", "no-such-host.invalid:9324"]);
        assert!(e.contains("cannot resolve `no-such-host.invalid`"), "{e}");
    }
}

#[test]
fn listen_takes_localhost_and_binds_loopback() {
    let broker = Server::start_on(&["broker"], "localhost:0");
    assert!(broker.addr.starts_with("127.0.0.1:"), "{}", broker.addr);
    Conn::open(&broker.addr).sqs("ListQueues", "{}");
    let provider = Server::start_on(&["provider", "profiles/healthy.yaml"], "localhost:0");
    assert!(provider.addr.starts_with("127.0.0.1:"), "{}", provider.addr);
}
