//! Provider faults aimed at one message and one attempt, and errors after the effect, on
//! hand-derived scenarios: the shipped `profiles/chaos/work-done-then-5xx.yaml` and variants.

use super::tests::{run, S};
use crate::profile::load_str;
use crate::record::{CallOutcome, Nanos, RunRecord};

const PROFILE: &str = include_str!("../../../../profiles/chaos/work-done-then-5xx.yaml");

/// The shipped profile with `sets` applied, run with its full record.
fn run_with(sets: &[&str]) -> RunRecord {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    run(&load_str("work-done-then-5xx.yaml", PROFILE, &sets).expect("a valid profile"))
}

/// (messages, deliveries, effects, duplicate effects, lost, dlq, handler retries).
fn counts(r: &RunRecord) -> (u64, u64, u64, u64, u64, u64, u64) {
    let m = crate::metrics::analyse(r, 0);
    let c = &m.counts;
    (
        c.messages,
        c.deliveries,
        c.effects,
        c.duplicate_effects,
        c.lost,
        c.dlq,
        m.handler_retries,
    )
}

/// msg-2's calls: (start in s, end in ms or `None`, outcome).
fn calls_of_msg_2(r: &RunRecord) -> Vec<(Nanos, Option<Nanos>, CallOutcome)> {
    r.ledger
        .calls
        .iter()
        .filter(|c| c.seq == Some(2))
        .map(|c| (c.started / S, c.ended.map(|e| e / (S / 1000)), c.outcome))
        .collect()
}

/// When msg-2's effects happened, in seconds.
fn effects_of_msg_2(r: &RunRecord) -> Vec<Nanos> {
    r.ledger
        .effects
        .iter()
        .filter(|e| e.seq == Some(2))
        .map(|e| e.at / S)
        .collect()
}

#[test]
fn effect_then_503_on_one_attempt_duplicates_exactly_once() {
    // As the profile's header derives it: msg-2's first call at 50 s has its effect on arrival
    // (effect_at: request) and is answered 503 at 52 s; the handler waits 1 s (retry base,
    // no jitter) and calls again at 53 s: attempt 2, no phase selects it, effect 2, 202 at
    // 55 s, ack. msg-1, msg-3, msg-4: one call each. 4 messages, 4 deliveries, 5 effects,
    // 1 duplicate (msg-2's), nothing lost, nothing in the DLQ, 1 retry in a handler.
    let r = run_with(&[]);
    assert_eq!(counts(&r), (4, 4, 5, 1, 0, 0, 1));
    assert_eq!(
        calls_of_msg_2(&r),
        vec![
            (50, Some(52_000), CallOutcome::Error(503)),
            (53, Some(55_000), CallOutcome::Accepted),
        ]
    );
    assert_eq!(effects_of_msg_2(&r), vec![50, 53]);
}

#[test]
fn a_reset_after_the_effect_is_a_transient_connection_error() {
    // The same, the 503 replaced by the connection closed at 52 s: the client's connection
    // error is transient, the retry at 53 s has the second effect. Same counts.
    let r = run_with(&["provider.phases.0.errors.status=reset"]);
    assert_eq!(counts(&r), (4, 4, 5, 1, 0, 0, 1));
    assert_eq!(
        calls_of_msg_2(&r),
        vec![
            (50, Some(52_000), CallOutcome::Reset),
            (53, Some(55_000), CallOutcome::Accepted),
        ]
    );
    // Instead of the work: the reset's call has no effect, the retry's is the only one.
    let r = run_with(&[
        "provider.phases.0.errors.status=reset",
        "provider.phases.0.errors.after_effect=false",
    ]);
    assert_eq!(counts(&r), (4, 4, 4, 0, 0, 0, 1));
    assert_eq!(effects_of_msg_2(&r), vec![53]);
}

#[test]
fn a_hang_after_the_effect_ends_by_the_clients_timeout() {
    // msg-2's first call at 50 s has its effect and never answers; the client's 10 s timeout
    // ends the wait at 60 s, the retry 1 s later (61 s) has effect 2, 202 at 63 s. Same counts.
    let r = run_with(&[
        "provider.phases.0={keys: [msg-2], attempt: 1, hang: {rate: 1, after_effect: true}}",
    ]);
    assert_eq!(counts(&r), (4, 4, 5, 1, 0, 0, 1));
    assert_eq!(
        calls_of_msg_2(&r),
        vec![
            (50, None, CallOutcome::TimedOut),
            (61, Some(63_000), CallOutcome::Accepted),
        ]
    );
    assert_eq!(effects_of_msg_2(&r), vec![50, 61]);
}

#[test]
fn with_effect_at_response_the_work_is_done_when_the_answer_leaves() {
    // effect_at: response. The 503 after the effect: effect 1 as the 503 leaves (52 s), the
    // retry at 53 s: effect 2 with its 202 at 55 s. 5 effects, 1 duplicate.
    let response = "provider.effect_at=response";
    let r = run_with(&[response]);
    assert_eq!(counts(&r), (4, 4, 5, 1, 0, 0, 1));
    assert_eq!(effects_of_msg_2(&r), vec![52, 55]);
    // A hang after the effect: the work is done at 52 s, when its answer would have left; the
    // client still waits (timeout at 60 s): effect 1 at 52 s, the retry at 61 s: effect 2 at
    // 63 s.
    let hang = "provider.phases.0={keys: [msg-2], attempt: 1, hang: {rate: 1, after_effect: true}}";
    let r = run_with(&[response, hang]);
    assert_eq!(counts(&r), (4, 4, 5, 1, 0, 0, 1));
    assert_eq!(effects_of_msg_2(&r), vec![52, 63]);
    // The same hang with its own latency of 15 s: its work would be done at 65 s, after the
    // client gave up (60 s): no effect; the retry at 61 s has msg-2's only effect, at 63 s.
    let slow = "provider.phases.0={keys: [msg-2], attempt: 1, latency: {dist: fixed, value: 15s}, \
                hang: {rate: 1, after_effect: true}}";
    let r = run_with(&[response, slow]);
    assert_eq!(counts(&r), (4, 4, 4, 0, 0, 0, 1));
    assert_eq!(effects_of_msg_2(&r), vec![63]);
    // A plain hang under response (after_effect defaults to false): never an effect; the
    // retry has the only one (61 s call, effect at 63 s).
    let plain = "provider.phases.0={keys: [msg-2], attempt: 1, hang: 1}";
    let r = run_with(&[response, plain]);
    assert_eq!(counts(&r), (4, 4, 4, 0, 0, 0, 1));
    assert_eq!(effects_of_msg_2(&r), vec![63]);
}

#[test]
fn a_delivery_selector_aims_at_one_delivery_and_the_redelivery_is_spared() {
    // No retry in the handler. msg-2's delivery 1 at 50 s: its call has its effect, 503 at
    // 52 s; the handler ends without an ack. The 30 s lease ends at 80 s: delivery 2 at 80 s,
    // not selected (delivery 1 only): effect 2, 202 at 82 s, acked. 4 messages, 5 deliveries,
    // 5 effects, 1 duplicate, no retry in a handler.
    let r = run_with(&[
        "consumer.options.retry=",
        "provider.phases.0={keys: [msg-2], delivery: 1, errors: {status: 503, rate: 1, after_effect: true}}",
    ]);
    assert_eq!(counts(&r), (4, 5, 5, 1, 0, 0, 0));
    assert_eq!(effects_of_msg_2(&r), vec![50, 80]);
    // An attempt counts msg-2's calls across deliveries. Phase 0 (attempt 1): a 503 instead
    // of the work at 50 s, no ack; the lease ends at 80 s: delivery 2's call is msg-2's
    // attempt 2, phase 1: its effect, then 503 at 82 s, no ack; the lease ends at 110 s:
    // delivery 3's call (attempt 3): effect, acked at 112 s. 6 deliveries, 5 effects, 1
    // duplicate (msg-2's at 80 s and 110 s).
    let r = run_with(&[
        "consumer.options.retry=",
        "provider.phases=[{keys: [msg-2], attempt: 1, errors: {status: 503, rate: 1}}, \
         {keys: [msg-2], attempt: 2, errors: {status: 503, rate: 1, after_effect: true}}]",
    ]);
    assert_eq!(counts(&r), (4, 6, 5, 1, 0, 0, 0));
    assert_eq!(effects_of_msg_2(&r), vec![80, 110]);
}
