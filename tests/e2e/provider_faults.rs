//! The shipped `profiles/chaos/work-done-then-5xx.yaml` in sim mode: the provider sends msg-2's
//! email on its first call, then fails it (a 503, a reset, a hang); the handler's retry sends it
//! again, exactly one duplicate. Bad provider selectors and answers are refused, naming the
//! field.

use crate::common::{counts, root, run_profile};
use crate::profile_errors::{expect_error, with};

/// What a run of the profile is checked on.
pub const KEYS: [&str; 7] = [
    "messages",
    "deliveries",
    "effects",
    "duplicate_effects",
    "lost",
    "dlq",
    "handler_retries",
];

pub fn profile() -> std::path::PathBuf {
    root().join("profiles/chaos/work-done-then-5xx.yaml")
}

/// The variants of the profile's header, as `--set` arguments: the 503 as shipped, a reset, a
/// hang after the effect.
pub const VARIANTS: [&[&str]; 3] = [
    &[],
    &["--set", "provider.phases.0.errors.status=reset"],
    &[
        "--set",
        "provider.phases.0={keys: [msg-2], attempt: 1, hang: {rate: 1, after_effect: true}}",
    ],
];

#[test]
fn the_work_done_then_5xx_profile_counts_as_its_header_derives() {
    // Its header: 4 messages, 4 deliveries, 5 effects, 1 duplicate (msg-2's), nothing lost or
    // dead-lettered, 1 retry in a handler, in each variant; the duplicate_effects budget of 0
    // fails the run: exit 1.
    for variant in VARIANTS {
        let mut args = vec!["--quiet"];
        args.extend_from_slice(variant);
        let ran = run_profile(&profile(), &args);
        assert_eq!(ran.code(), 1, "{variant:?}: {}", ran.stderr());
        assert_eq!(
            counts(&ran.summary(), &KEYS),
            vec![4, 4, 5, 1, 0, 0, 1],
            "{variant:?}"
        );
    }
    // The 503 instead of the work: msg-2's retry has its only effect; the run passes.
    let ran = run_profile(
        &profile(),
        &[
            "--quiet",
            "--set",
            "provider.phases.0.errors.after_effect=false",
        ],
    );
    assert_eq!(ran.code(), 0, "{}", ran.stderr());
    assert_eq!(counts(&ran.summary(), &KEYS), vec![4, 4, 4, 0, 0, 0, 1]);
}

#[test]
fn bad_provider_selectors_and_answers_are_refused_naming_the_field() {
    let phase = |p: &str| with(&format!("provider:\n  phases:\n    - {p}\n"));
    let cases = [
        (
            "{ keys: [msg-1], attempt: 0, hang: 1 }",
            "provider.phases.0.attempt: must be at least 1, got 0 (a key's calls count from 1)",
        ),
        (
            "{ attempt: [], hang: 1 }",
            "provider.phases.0.attempt: must not be empty",
        ),
        (
            "{ keys: [], hang: 1 }",
            "provider.phases.0.keys: must not be empty",
        ),
        (
            "{ delivery: 0, hang: 1 }",
            "provider.phases.0.delivery: must be at least 1, got 0",
        ),
        (
            "{ keys: [msg-1], errors: { status: teapot, rate: 1 } }",
            "provider.phases.0.errors.status: must be an HTTP error status, 400 to 599, or \
             `reset` (the connection closed without an answer), got `teapot`",
        ),
        (
            "{ keys: [msg-1], after_effect: true }",
            "provider.phases.0.after_effect: says whether an error or a hang comes after the \
             call's effect: write it inside errors: { status, rate, after_effect } or hang: \
             { rate, after_effect }",
        ),
        (
            "{ keys: [msg-1], hang: { after_effect: true } }",
            "provider.phases.0.hang.rate: required",
        ),
        (
            "{ keys: [msg-1] }",
            "provider.phases.0: a phase changes latency, errors or hangs",
        ),
        (
            "{ hang: 1 }",
            "provider.phases.0.from: required: when the phase starts, e.g. 0s (or select calls \
             with keys, attempt or delivery)",
        ),
    ];
    for (p, expected) in cases {
        expect_error(&phase(p), &[], expected);
    }
    // Through an override, named by it.
    expect_error(
        &phase("{ keys: [msg-1], errors: { status: 503, rate: 1 } }"),
        &["provider.phases.0.attempt=0"],
        "--set provider.phases.0.attempt=0: provider.phases.0.attempt: must be at least 1",
    );
}
