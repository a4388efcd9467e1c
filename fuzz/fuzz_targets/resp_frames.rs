//! RESP2 and RESP3 frames, either direction, as the Redis Streams proxy reads them.
//!
//! `cargo +nightly fuzz run resp_frames` from `fuzz/` (README.md there: the input's layout).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackbench::internals::fuzz::resp_frames(data));
