//! Fuzzes the SQS request parser: any headers and body must give a request or an AWS-shaped
//! error, never a panic.
//!
//! `cargo +nightly fuzz run sqs_request` from `fuzz/`. The input's first byte picks the
//! protocol's headers (JSON target, form, wrong content type, none), the next line the action or
//! path, and the rest is the body (`ackbench::internals::fuzz::sqs_request`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| ackbench::internals::fuzz::sqs_request(data));
