//! Each check on hand-built settings: one case that holds, one that breaks.

use std::time::Duration;

use super::*;

fn s(x: u64) -> Duration {
    Duration::from_secs(x)
}

/// The reference incident's email consumer: ack after the work, 30 s lease, limit 3.
fn email() -> Settings {
    Settings {
        target: "ack-after-work".into(),
        kind: &crate::profile::kinds::sqs::KIND,
        lease: s(30),
        lease_key: "visibility_timeout",
        limit: 3,
        limit_key: Some("max_receives"),
        check_every: None,
        batch: None,
        partitions: None,
        workers: 4,
        http_timeout: Some(s(10)),
        retry: None,
        claim_window: None,
        dedup_window: None,
        producer_attempts: None,
        max_extension: None,
        dlq_alarm: true,
        worst_call: Some(s(40)),
    }
}

fn claim() -> Settings {
    Settings {
        target: "claim-then-send".into(),
        claim_window: Some(s(120)),
        ..email()
    }
}

#[test]
fn client_timeout_below_the_lease() {
    assert_eq!(client_timeout_below_lease(&email()).status, Status::Pass);
    let late = Settings {
        http_timeout: Some(s(30)),
        ..email()
    };
    let c = client_timeout_below_lease(&late);
    assert_eq!(c.status, Status::Fail);
    assert!(c.detail.contains("not below the 30s lease"), "{}", c.detail);
    let none = Settings {
        http_timeout: None,
        ..email()
    };
    assert_eq!(client_timeout_below_lease(&none).status, Status::Fail);
    let store = Settings {
        target: "dedupe-table".into(),
        http_timeout: None,
        ..email()
    };
    assert_eq!(
        client_timeout_below_lease(&store).status,
        Status::NotApplicable
    );
}

#[test]
fn a_dedup_window_outlives_the_retry_deadline() {
    // SQS FIFO's 5 minutes against 3 deliveries of 30 s plus 1 s + 2 s of backoff: 93 s.
    let fifo = Settings {
        dedup_window: Some(s(300)),
        retry: Some(RetrySpec {
            max_attempts: 3,
            base: s(1),
            cap: s(30),
            jitter: 0.5,
        }),
        ..email()
    };
    assert_eq!(retry_deadline(&fifo), Some(s(93)));
    assert_eq!(dedup_window_outlives_retries(&fifo).status, Status::Pass);
    // Leases of 2 minutes: 3 x 2m + 3 s > 5m.
    let long = Settings {
        lease: s(120),
        ..fifo.clone()
    };
    let c = dedup_window_outlives_retries(&long);
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.detail
            .contains("does not outlive the retry deadline of 6m3s"),
        "{}",
        c.detail
    );
    let unlimited = Settings { limit: 0, ..fifo };
    assert_eq!(
        dedup_window_outlives_retries(&unlimited).status,
        Status::Fail
    );
    assert_eq!(
        dedup_window_outlives_retries(&claim()).status,
        Status::NotApplicable
    );
}

#[test]
fn a_claim_window_outlives_the_providers_worst_latency() {
    // 40 s worst call, a 10 s client timeout: in flight at most 10 s. Without the timeout, 40 s.
    assert_eq!(
        claim_window_outlives_provider(&claim()).status,
        Status::Pass
    );
    let slow = Settings {
        claim_window: Some(s(30)),
        http_timeout: None,
        ..claim()
    };
    let c = claim_window_outlives_provider(&slow);
    assert_eq!(c.status, Status::Fail);
    assert!(c.detail.contains("(40s:"), "{}", c.detail);
    // Three tries of 10 s and 1 s + 2 s of backoff: 33 s, more than a 30 s window.
    let retries = Settings {
        claim_window: Some(s(30)),
        retry: Some(RetrySpec {
            max_attempts: 3,
            base: s(1),
            cap: s(30),
            jitter: 0.0,
        }),
        ..claim()
    };
    assert_eq!(in_flight_bound(&retries), Some(s(33)));
    assert_eq!(
        claim_window_outlives_provider(&retries).status,
        Status::Fail
    );
    let hang = Settings {
        worst_call: None,
        http_timeout: None,
        ..claim()
    };
    assert_eq!(claim_window_outlives_provider(&hang).status, Status::Fail);
    assert_eq!(
        claim_window_outlives_provider(&email()).status,
        Status::NotApplicable
    );
}

#[test]
fn the_limit_leaves_a_spare_delivery() {
    // docs/domain.md: a 2-minute window, a 30 s lease and a limit of 3 leave no room for one more try.
    let c = &all(&claim())[3];
    assert_eq!(c.name, "limit_leaves_a_spare");
    assert_eq!(c.status, Status::Fail);
    assert!(
        c.detail
            .starts_with("no room for one more try: a limit of 3 leaves no spare delivery"),
        "{}",
        c.detail
    );
    let four = Settings {
        limit: 4,
        ..claim()
    };
    assert_eq!(all(&four)[3].status, Status::Pass);
    // ack-after-work recovers on delivery 2: a limit of 3 leaves one spare, 2 leaves none.
    assert_eq!(all(&email())[3].status, Status::Pass);
    assert_eq!(
        all(&Settings {
            limit: 2,
            ..email()
        })[3]
            .status,
        Status::Fail
    );
    assert_eq!(
        all(&Settings {
            limit: 0,
            ..email()
        })[3]
            .status,
        Status::NotApplicable
    );
}

#[test]
fn a_dlq_budget_watches_the_dlq() {
    assert_eq!(dlq_is_watched(&email()).status, Status::Pass);
    let unwatched = Settings {
        dlq_alarm: false,
        ..email()
    };
    let c = dlq_is_watched(&unwatched);
    assert_eq!(c.status, Status::Fail);
    assert!(c.detail.contains("silent loss"));
    let no_dlq = Settings {
        limit: 0,
        dlq_alarm: false,
        ..email()
    };
    assert_eq!(dlq_is_watched(&no_dlq).status, Status::NotApplicable);
}

#[test]
fn a_retrying_producer_against_a_fifo_window() {
    // The domain's producer: attempts at 0, 1, 3 and 7 minutes (backoff 1m, 2m, 4m). Against
    // 5 minutes from the first accepted send, attempts 2 (1m) and 3 (3m) are dropped and
    // attempt 4 (7m >= 5m) is accepted as a second message: the check names it.
    let m = |x: u64| s(60 * x);
    let producer = Settings {
        producer_attempts: Some(vec![m(0), m(1), m(3), m(7)]),
        dedup_window: Some(m(5)),
        ..email()
    };
    let c = dedup_window_outlives_retries(&producer);
    assert_eq!(c.status, Status::Fail);
    assert_eq!(
        c.detail,
        "attempt 4 of the producer (at 7m: backoff 1m + 2m + 4m) falls outside the 5m \
         deduplication window: the broker accepts it as a second message"
    );
    // 10 minutes: 7m < 10m, every retry dropped.
    let wide = Settings {
        dedup_window: Some(m(10)),
        ..producer.clone()
    };
    let c = dedup_window_outlives_retries(&wide);
    assert_eq!(c.status, Status::Pass);
    assert!(
        c.detail.contains("the last, attempt 4, at 7m"),
        "{}",
        c.detail
    );
    // An attempt exactly at the window's end is past it (the interval is [0, 5m)).
    let edge = Settings {
        producer_attempts: Some(vec![m(0), m(5)]),
        ..producer.clone()
    };
    assert!(dedup_window_outlives_retries(&edge)
        .detail
        .starts_with("attempt 2 of the producer (at 5m"));
    // A standard queue drops nothing: every retry is a message.
    let standard = Settings {
        dedup_window: None,
        ..producer
    };
    assert_eq!(
        dedup_window_outlives_retries(&standard).status,
        Status::Fail
    );
}
