//! Kafka responses, broker to worker, as the Kafka proxy frames and decodes them.
//!
//! `cargo +nightly fuzz run kafka_responses` from `fuzz/` (README.md there: the input's layout).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackbench::internals::fuzz::kafka_responses(data));
