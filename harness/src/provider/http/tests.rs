//! The HTTP provider against a real client on loopback.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::profile::{
    EffectAt, ErrorAnswer, ErrorSpec, KillPoint, LatencyDist, Phase, ProviderSpec,
};
use crate::provider::ProviderModel;
use crate::record::{CallOutcome, Seq, WorkerId};

fn spec(latency_ms: u64, effect_at: EffectAt, phases: Vec<Phase>) -> ProviderSpec {
    ProviderSpec {
        key: Default::default(),
        effect_at,
        latency: LatencyDist::Fixed(Duration::from_millis(latency_ms)),
        phases,
    }
}

async fn provider(spec: ProviderSpec, key: KeySource, hooks: Arc<dyn LiveHooks>) -> HttpProvider {
    let model = ProviderModel::new(&spec, 1);
    HttpProvider::bind(
        "127.0.0.1:0".parse().unwrap(),
        model,
        LiveClock::new(1.0),
        key,
        3,
        hooks,
    )
    .await
    .expect("bind on loopback")
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_call_is_answered_after_its_latency_and_attributed_to_its_worker() {
    let p = provider(
        spec(50, EffectAt::Request, vec![]),
        KeySource::default(),
        Arc::new(NoHooks),
    )
    .await;
    p.publish_key("msg-1", 1);
    let t = Instant::now();
    let r = client()
        .post(format!("{}send", p.base_url(2)))
        .json(&serde_json::json!({"key": "msg-1", "to": "msg-1@example.test"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    assert!(t.elapsed() >= Duration::from_millis(50));
    let body: serde_json::Value = r.json().await.unwrap();
    assert!(body["id"].as_str().unwrap().starts_with("em-"));
    let ledger = p.shutdown().await;
    assert_eq!(ledger.calls.len(), 1);
    assert_eq!((ledger.calls[0].worker, ledger.calls[0].seq), (2, Some(1)));
    assert_eq!(ledger.calls[0].outcome, CallOutcome::Accepted);
    assert_eq!(ledger.effects.len(), 1);
}

#[tokio::test]
async fn keys_come_from_a_header_or_a_path_segment_and_unknown_keys_are_kept() {
    let p = provider(
        spec(0, EffectAt::Request, vec![]),
        KeySource::Header("Idempotency-Key".into()),
        Arc::new(NoHooks),
    )
    .await;
    p.publish_key("order-9", 9);
    let c = client();
    let r = c
        .post(format!("{}v1/emails", p.base_url(1)))
        .header("Idempotency-Key", "order-9")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let r = c
        .post(format!("{}v1/emails", p.base_url(1)))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "no key: refused, not counted");
    let r = c
        .post(format!("{}v1/emails", p.base_url(1)))
        .header("Idempotency-Key", "stranger")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let l = p.shutdown().await;
    assert_eq!(
        l.effects.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![Some(9), None]
    );

    let p = provider(
        spec(0, EffectAt::Request, vec![]),
        KeySource::PathSegment(1),
        Arc::new(NoHooks),
    )
    .await;
    p.publish_key("msg-4", 4);
    let r = c
        .put(format!("{}orders/msg-4", p.base_url(3)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    assert_eq!(p.shutdown().await.effects[0].seq, Some(4));
}

#[tokio::test]
async fn injected_errors_are_answered_and_never_an_effect() {
    let phase = Phase {
        from: Duration::ZERO,
        to: Some(Duration::from_secs(3600)),
        latency: None,
        errors: Some(ErrorSpec {
            answer: ErrorAnswer::Status(503),
            rate: 1.0,
            after_effect: false,
        }),
        hang: None,
        ..Phase::default()
    };
    let p = provider(
        spec(0, EffectAt::Response, vec![phase]),
        KeySource::default(),
        Arc::new(NoHooks),
    )
    .await;
    let r = client()
        .post(format!("{}send", p.base_url(1)))
        .json(&serde_json::json!({"key": "k"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    let l = p.shutdown().await;
    assert_eq!(l.calls[0].outcome, CallOutcome::Error(503));
    assert!(l.effects.is_empty());
}

/// A phase on key `k`'s calls in `attempts`, answering `answer` after the effect.
fn after_effect(attempts: Vec<u32>, answer: ErrorAnswer) -> Phase {
    Phase {
        keys: Some(vec!["k".into()]),
        attempts: Some(attempts),
        errors: Some(ErrorSpec {
            answer,
            rate: 1.0,
            after_effect: true,
        }),
        ..Phase::default()
    }
}

#[tokio::test]
async fn an_error_or_a_reset_after_the_effect_is_answered_and_is_an_effect() {
    // effect_at: response. Key k's call 1: 503 after the effect; call 2: the connection closed
    // after the effect; call 3: accepted. 3 effects, one per call, each as its answer left.
    let p = provider(
        spec(
            20,
            EffectAt::Response,
            vec![
                after_effect(vec![1], ErrorAnswer::Status(503)),
                after_effect(vec![2], ErrorAnswer::Reset),
            ],
        ),
        KeySource::default(),
        Arc::new(NoHooks),
    )
    .await;
    let send = || {
        client()
            .post(format!("{}send", p.base_url(1)))
            .json(&serde_json::json!({"key": "k"}))
            .send()
    };
    assert_eq!(send().await.unwrap().status(), 503);
    let reset = send()
        .await
        .expect_err("the connection closes without an answer");
    assert!(
        !reset.is_timeout(),
        "a closed connection, not a timeout: {reset}"
    );
    assert_eq!(send().await.unwrap().status(), 202);
    let l = p.shutdown().await;
    let outcomes: Vec<CallOutcome> = l.calls.iter().map(|c| c.outcome).collect();
    assert_eq!(
        outcomes,
        vec![
            CallOutcome::Error(503),
            CallOutcome::Reset,
            CallOutcome::Accepted
        ]
    );
    assert_eq!(l.effects.len(), 3);
    assert!(
        l.calls
            .iter()
            .zip(&l.effects)
            .all(|(c, e)| Some(e.at) == c.ended),
        "each effect as its call's answer left"
    );
}

#[tokio::test]
async fn a_hang_after_the_effect_has_it_when_its_answer_would_have_left() {
    // effect_at: response, a 20 ms provider; key k's first call hangs after the effect: its
    // effect 20 ms after it arrived, no answer; the client's 300 ms timeout ends the wait.
    let phase = Phase {
        keys: Some(vec!["k".into()]),
        attempts: Some(vec![1]),
        hang: Some(crate::profile::HangSpec {
            rate: 1.0,
            after_effect: true,
        }),
        ..Phase::default()
    };
    let p = provider(
        spec(20, EffectAt::Response, vec![phase]),
        KeySource::default(),
        Arc::new(NoHooks),
    )
    .await;
    let c = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let r = c
        .post(format!("{}send", p.base_url(1)))
        .json(&serde_json::json!({"key": "k"}))
        .send()
        .await;
    assert!(r.expect_err("never answered").is_timeout());
    let l = p.shutdown().await;
    assert_eq!(l.effects.len(), 1);
    let after = l.effects[0].at - l.calls[0].started;
    assert!(
        (20_000_000..300_000_000).contains(&after),
        "its effect at its latency, before the timeout: {after} ns"
    );
    assert_eq!(l.calls[0].ended, None);
}

#[tokio::test]
async fn bad_worker_and_bad_path_are_refused() {
    let p = provider(
        spec(0, EffectAt::Request, vec![]),
        KeySource::default(),
        Arc::new(NoHooks),
    )
    .await;
    let c = client();
    for url in [
        format!("http://{}/w/9/send", p.local_addr()),
        format!("http://{}/w/x/send", p.local_addr()),
        format!("http://{}/send", p.local_addr()),
    ] {
        let r = c
            .post(url)
            .json(&serde_json::json!({"key": "k"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
    }
    let r = c
        .post(format!("{}send", p.base_url(1)))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(p.shutdown().await.calls.is_empty());
}

/// Kills every call at `point` (counting them) without answering.
struct KillAt(KillPoint, AtomicU32);
impl LiveHooks for KillAt {
    fn at_point(&self, point: &KillPoint, _w: WorkerId, _s: Option<Seq>, _d: u32) -> bool {
        let kill = *point == self.0;
        if kill {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
        kill
    }
}

#[tokio::test]
async fn a_worker_killed_at_call_answered_never_gets_the_answer_but_the_effect_happened() {
    let hooks = Arc::new(KillAt(KillPoint::CallAnswered, AtomicU32::new(0)));
    let p = provider(
        spec(20, EffectAt::Response, vec![]),
        KeySource::default(),
        hooks.clone(),
    )
    .await;
    let c = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let r = c
        .post(format!("{}send", p.base_url(1)))
        .json(&serde_json::json!({"key": "k"}))
        .send()
        .await;
    assert!(r.is_err(), "no answer is written after the kill");
    assert_eq!(hooks.1.load(Ordering::SeqCst), 1);
    let l = p.shutdown().await;
    assert_eq!(
        l.effects.len(),
        1,
        "the provider answered: the effect happened"
    );
    assert!(l.calls[0].ended.is_some());
}

#[tokio::test]
async fn a_worker_killed_at_call_started_abandons_the_call_with_effect_at_response() {
    let hooks = Arc::new(KillAt(KillPoint::CallStarted, AtomicU32::new(0)));
    let p = provider(
        spec(20, EffectAt::Response, vec![]),
        KeySource::default(),
        hooks,
    )
    .await;
    let c = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    assert!(c
        .post(format!("{}send", p.base_url(1)))
        .json(&serde_json::json!({"key": "k"}))
        .send()
        .await
        .is_err());
    let l = p.shutdown().await;
    assert!(l.effects.is_empty());
    assert_eq!(l.calls[0].outcome, CallOutcome::Abandoned);
}
