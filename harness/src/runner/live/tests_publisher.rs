//! The publisher's window against a broker whose confirmations the test holds: order kept,
//! each send recorded when handed over, a full window's wait counted as the send's lag, the
//! earliest failure failing the run, and FIFO sends still one at a time.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use tokio::sync::oneshot;

use super::kinds::{BoxFuture, Confirmation, Counts, FifoSend, Finished, LiveBroker, QueueFactory};
use super::publisher::Publisher;
use super::sends::Sends;
use super::state::{LiveState, StateHooks};
use crate::chaos::KillSchedule;
use crate::provider::http::{HttpProvider, LiveClock};
use crate::provider::ProviderModel;
use crate::record::{Nanos, Seq};
use crate::workload::message::Outgoing;
use crate::workload::Plan;

const MS: Nanos = 1_000_000;

/// A broker that keeps the order of hand-overs and answers each confirmation when the test
/// says, or at once with `fails`' errors; a FIFO send counts how many are in flight at once.
#[derive(Default)]
struct Held {
    handed: Mutex<Vec<Seq>>,
    answers: Mutex<VecDeque<oneshot::Sender<Result<(), String>>>>,
    /// Answer every confirmation at once, failing these seqs.
    at_once: Option<Vec<Seq>>,
    fifo_in_flight: AtomicUsize,
    fifo_most: AtomicUsize,
}

impl Held {
    fn handed(&self) -> usize {
        self.handed.lock().expect("lock").len()
    }

    /// Confirms the oldest unanswered publish.
    fn confirm_oldest(&self) {
        let answer = self.answers.lock().expect("lock").pop_front();
        let _ = answer.expect("a publish to confirm").send(Ok(()));
    }
}

impl LiveBroker for Held {
    fn publish(&self, seq: Seq, _: Outgoing) -> BoxFuture<'_, Result<Confirmation, String>> {
        self.handed.lock().expect("lock").push(seq);
        let confirmation: Confirmation = match &self.at_once {
            Some(fails) if fails.contains(&seq) => {
                Box::pin(std::future::ready(Err(format!("refused {seq}"))))
            }
            Some(_) => super::kinds::confirmed(),
            None => {
                let (tx, rx) = oneshot::channel();
                self.answers.lock().expect("lock").push_back(tx);
                Box::pin(async move { rx.await.unwrap_or(Err("dropped".into())) })
            }
        };
        Box::pin(std::future::ready(Ok(confirmation)))
    }
    fn publish_fifo<'a>(
        &'a self,
        seq: Seq,
        _: Outgoing,
        _: &'a FifoSend,
    ) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async move {
            let now = self.fifo_in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.fifo_most.fetch_max(now, Ordering::SeqCst);
            // The broker takes its time to answer: another send would start meanwhile if
            // the publisher did not await this one.
            for _ in 0..5 {
                tokio::task::yield_now().await;
            }
            self.handed.lock().expect("lock").push(seq);
            self.fifo_in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(true)
        })
    }
    fn queue_name(&self) -> &str {
        "held"
    }
    fn counts(&self) -> BoxFuture<'_, Result<Counts, String>> {
        Box::pin(async { Ok(Counts::default()) })
    }
    fn worker_env(&self, _: u32) -> Vec<(String, String)> {
        Vec::new()
    }
    fn queues(&self) -> Arc<dyn QueueFactory> {
        unimplemented!("no worker in this test")
    }
    fn finish(self: Box<Self>) -> BoxFuture<'static, Finished> {
        Box::pin(async { Finished::default() })
    }
}

/// A live run's state and provider, for `plan`'s sends.
async fn run_parts() -> (Arc<LiveState>, HttpProvider) {
    let s = crate::profile::testutil::scenario(PROFILE);
    let clock = LiveClock::new(1.0);
    let state = LiveState::new(clock, "held", 1, KillSchedule::new(&[], 1));
    let provider = HttpProvider::bind(
        "127.0.0.1:0".parse().expect("address"),
        ProviderModel::new(&s.provider, 1),
        clock,
        s.provider.key.clone(),
        1,
        Arc::new(StateHooks(state.clone())),
    )
    .await
    .expect("provider");
    (state, provider)
}

/// Five messages planned 1 µs apart: all due as soon as the publisher starts.
const PROFILE: &str = "name: t
mode: live
run: { duration: 1m }
workload: { arrival: { every: 1us }, count: 5 }
consumer: { target: ack-after-work }
";

fn plan(profile: &str) -> Plan {
    crate::workload::plan(&crate::profile::testutil::scenario(profile))
}

/// Waits until `broker` was handed `n` messages.
async fn handed(broker: &Held, n: usize) {
    while broker.handed() < n {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test]
async fn a_full_window_waits_for_the_oldest_confirmation_and_the_wait_is_lag() {
    // Window 2, five sends due at once, no confirmation until the test gives one: sends 1
    // and 2 are handed over, then send 3 waits. 30 ms later nothing more was handed over;
    // confirming 1 lets 3 go, confirming 2 lets 4 go, 3 lets 5 go: sends 3, 4 and 5 each waited
    // (3 pushed back), each at least 30 ms late; 4 and 5 stay unconfirmed until the end.
    let plan = plan(PROFILE);
    let broker = Held::default();
    let (state, provider) = run_parts().await;
    let sends = Sends::new(&plan, &broker, &state, &provider, false, None);
    let mut publisher = Publisher::new(sends, &plan, LiveClock::new(1.0), 2, 0);
    let gives = async {
        handed(&broker, 2).await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(
            broker.handed(),
            2,
            "the third send waits for a confirmation"
        );
        for n in 3..=5 {
            broker.confirm_oldest();
            handed(&broker, n).await;
        }
        broker.confirm_oldest();
        broker.confirm_oldest();
    };
    let (sent, ()) = tokio::join!(publisher.send_due(), gives);
    sent.expect("every send made");
    assert!(publisher.awaiting() && publisher.next_due().is_none());
    while publisher.awaiting() {
        publisher.confirm_oldest().await.expect("confirmed");
    }
    assert!(!publisher.publishing());
    let (sends, record) = publisher.finish();
    assert_eq!(*broker.handed.lock().expect("lock"), [1, 2, 3, 4, 5]);
    let keys: Vec<String> = sends.messages.iter().map(|m| m.key.to_string()).collect();
    assert_eq!(keys, ["msg-1", "msg-2", "msg-3", "msg-4", "msg-5"]);
    assert_eq!(state.keys.lock().expect("lock").by_seq(), keys);
    assert_eq!((record.window, record.pushed_back), (2, 3));
    assert_eq!(record.lags.len(), 5);
    assert!(
        record.lags[2..].iter().all(|&l| l >= 30 * MS),
        "{:?}",
        record.lags
    );
    // Each message is recorded at the instant it was handed over, the first and last sends'.
    let at: Vec<Nanos> = sends.messages.iter().map(|m| m.published_at).collect();
    assert!(at.windows(2).all(|w| w[0] <= w[1]), "{at:?}");
    assert_eq!(
        (record.first_sent, record.last_sent),
        (Some(at[0]), Some(at[4]))
    );
    assert!(record.last_confirmed >= record.last_sent);
    provider.shutdown().await;
}

#[tokio::test]
async fn the_earliest_failed_confirmation_fails_the_run() {
    // Every confirmation answered at once, 2 and 4 refused: all five are handed over (the
    // window of 8 is never full), and confirmations are taken in send order, so the run fails
    // with 2's error, as when each send awaited its own; 1 was confirmed before.
    let plan = plan(PROFILE);
    let broker = Held {
        at_once: Some(vec![2, 4]),
        ..Held::default()
    };
    let (state, provider) = run_parts().await;
    let sends = Sends::new(&plan, &broker, &state, &provider, false, None);
    let mut publisher = Publisher::new(sends, &plan, LiveClock::new(1.0), 8, 0);
    publisher.send_due().await.expect("every send made");
    assert_eq!(broker.handed(), 5);
    assert_eq!(publisher.confirm_oldest().await, Ok(()));
    assert_eq!(
        publisher.confirm_oldest().await,
        Err("refused 2".to_string())
    );
    assert_eq!(publisher.finish().1.pushed_back, 0);
    provider.shutdown().await;
}

#[tokio::test]
async fn fifo_sends_stay_one_at_a_time_whatever_the_window() {
    // A FIFO send's outcome is the queue's answer (a repeat is dropped), so each is awaited
    // before the next is made: never two in flight, even with a window of 1024, and every
    // confirmation is in as soon as its send returns (nothing pushed back).
    let profile = PROFILE.replace(
        "run: { duration: 1m }",
        "run: { duration: 1m }\nbroker: { fifo: true }",
    );
    let plan = plan(&profile);
    let broker = Held::default();
    let (state, provider) = run_parts().await;
    let sends = Sends::new(&plan, &broker, &state, &provider, true, None);
    let mut publisher = Publisher::new(sends, &plan, LiveClock::new(1.0), 1024, 0);
    publisher.send_due().await.expect("every send made");
    assert_eq!(broker.fifo_most.load(Ordering::SeqCst), 1);
    assert_eq!(*broker.handed.lock().expect("lock"), [1, 2, 3, 4, 5]);
    for _ in 0..5 {
        assert_eq!(publisher.confirm_oldest().now_or_never(), Some(Ok(())));
    }
    assert!(!publisher.publishing());
    let (sends, record) = publisher.finish();
    assert_eq!(sends.messages.len(), 5);
    assert_eq!(record.pushed_back, 0);
    provider.shutdown().await;
}
