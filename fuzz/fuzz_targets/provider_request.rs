//! The provider's reading of a call's effect key (key source, path, header, body).
//!
//! `cargo +nightly fuzz run provider_request` from `fuzz/` (README.md there: the input's layout).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackbench::internals::fuzz::provider_request(data));
