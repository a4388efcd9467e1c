//! AMQP 0-9-1 frames, either direction, as the RabbitMQ proxy splits and parses them.
//!
//! `cargo +nightly fuzz run amqp_frames` from `fuzz/` (README.md there: the input's layout).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackbench::internals::fuzz::amqp_frames(data));
