//! NATS protocol frames, either direction, as the NATS proxy reads them.
//!
//! `cargo +nightly fuzz run nats_frames` from `fuzz/` (README.md there: the input's layout).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackbench::internals::fuzz::nats_frames(data));
