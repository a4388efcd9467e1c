//! A stable round of every fuzz entry point ([`crate::fuzz_entry`]) in `cargo test`: arbitrary
//! bytes, and the seed corpus's recorded frames (`fuzz/corpus/<target>/`) mutated, cut and
//! split differently, must never panic. The rounds are small (a few hundred cases each), so
//! each stays well under 2 s; the long campaigns are cargo-fuzz's (fuzz/README.md).

use proptest::prelude::*;

use crate::fuzz_entry as entry;

/// A seed file of target `t`'s corpus.
macro_rules! seed {
    ($t:literal, $f:literal) => {
        include_bytes!(concat!("../../fuzz/corpus/", $t, "/seed-", $f)).as_slice()
    };
}

type Entry = fn(&[u8]);

/// Every entry point with its seeds.
fn entries() -> Vec<(&'static str, Entry, Vec<&'static [u8]>)> {
    #[allow(unused_mut)]
    let mut all: Vec<(&'static str, Entry, Vec<&'static [u8]>)> = vec![
        (
            "sqs_request",
            entry::sqs_request,
            vec![
                seed!("sqs_request", "json-send-message"),
                seed!("sqs_request", "query-receive-message"),
            ],
        ),
        (
            "provider_request",
            entry::provider_request,
            vec![
                seed!("provider_request", "json-pointer"),
                seed!("provider_request", "form-then-json"),
                seed!("provider_request", "segment"),
            ],
        ),
    ];
    #[cfg(feature = "live")]
    all.extend([
        (
            "amqp_frames",
            entry::amqp_frames as Entry,
            vec![
                seed!("amqp_frames", "client-handshake-consume-publish"),
                seed!("amqp_frames", "server-start-tune-deliver"),
            ],
        ),
        (
            "nats_frames",
            entry::nats_frames,
            vec![
                seed!("nats_frames", "client-connect-sub-pub-hpub"),
                seed!("nats_frames", "server-info-msg-hmsg"),
            ],
        ),
        (
            "resp_frames",
            entry::resp_frames,
            vec![
                seed!("resp_frames", "resp2-client-xreadgroup"),
                seed!("resp_frames", "resp2-server-xreadgroup-reply"),
                seed!("resp_frames", "resp3-client-xreadgroup"),
                seed!("resp_frames", "resp3-server-xreadgroup-reply"),
            ],
        ),
        (
            "kafka_requests",
            entry::kafka_requests,
            vec![seed!("kafka_requests", "api-versions-metadata-fetch")],
        ),
        (
            "kafka_responses",
            entry::kafka_responses,
            vec![
                seed!("kafka_responses", "api-versions-v0"),
                seed!("kafka_responses", "metadata-v1"),
                seed!("kafka_responses", "fetch-v4"),
            ],
        ),
    ]);
    all
}

/// `seed` with `edits` applied (each an index, taken modulo the length, and a byte to put there),
/// cut to `keep` bytes of its length in 256ths, its first byte (the piece size) replaced.
fn mutated(seed: &[u8], edits: &[(usize, u8)], keep: u8, piece: u8) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for &(at, b) in edits {
        let len = bytes.len();
        if len > 0 {
            bytes[at % len] = b;
        }
    }
    bytes.truncate(bytes.len() * (usize::from(keep) + 1) / 256);
    if let Some(first) = bytes.first_mut() {
        *first = piece;
    }
    bytes
}

#[test]
fn every_seed_reads_whole_and_in_pieces() {
    for (name, read, seeds) in entries() {
        for seed in seeds {
            read(seed);
            for piece in [0u8, 1, 7, 63] {
                read(&mutated(seed, &[], 255, piece));
            }
            assert!(!seed.is_empty(), "{name}: an empty seed");
        }
    }
}

#[test]
fn every_target_has_its_entry_and_seeds() {
    let names: Vec<&str> = entries().iter().map(|(n, _, _)| *n).collect();
    let mut expected = vec!["sqs_request", "provider_request"];
    if cfg!(feature = "live") {
        expected.extend([
            "amqp_frames",
            "nats_frames",
            "resp_frames",
            "kafka_requests",
            "kafka_responses",
        ]);
    }
    assert_eq!(names, expected);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(which in 0usize..7, data in proptest::collection::vec(any::<u8>(), 0..600)) {
        let all = entries();
        let (_, read, _) = &all[which % all.len()];
        read(&data);
    }

    #[test]
    fn mutated_recorded_frames_never_panic(
        which in 0usize..7,
        seed in 0usize..4,
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        keep in any::<u8>(),
        piece in any::<u8>(),
    ) {
        let all = entries();
        let (_, read, seeds) = &all[which % all.len()];
        read(&mutated(seeds[seed % seeds.len()], &edits, keep, piece));
    }
}

/// The frames cargo-fuzz found aborting the process (a Fetch request and a Fetch response whose
/// array counts asked kafka-protocol for about 180 GB) decode to an error now
/// (vendor/kafka-protocol/PATCHED.md).
#[cfg(feature = "live")]
#[test]
fn kafka_frames_declaring_huge_arrays_are_refused_without_allocating() {
    entry::kafka_requests(seed!("kafka_requests", "regression-huge-array"));
    entry::kafka_responses(seed!("kafka_responses", "regression-huge-array"));
}
