//! Fuzzes the SQS request parser: any headers and body must give a request or an AWS-shaped
//! error, never a panic.
//!
//! `cargo +nightly fuzz run sqs_request` from `fuzz/`. The input's first byte picks the
//! protocol's headers (JSON target, form, wrong content type, none), the next line the action or
//! path, and the rest is the body.

#![no_main]

use ackbench::broker::sqs::parse_request;
use http::{HeaderMap, HeaderValue};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let (head, body) = match rest.iter().position(|&b| b == b'\n') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let head = String::from_utf8_lossy(head);
    let mut headers = HeaderMap::new();
    let mut path = "/".to_string();
    match mode % 4 {
        0 => {
            if let Ok(v) = HeaderValue::from_str(&format!("AmazonSQS.{head}")) {
                headers.insert("x-amz-target", v);
            }
            headers.insert("content-type", HeaderValue::from_static("application/x-amz-json-1.0"));
        }
        1 => {
            headers.insert("content-type", HeaderValue::from_static("application/x-www-form-urlencoded"));
            path = format!("/{head}");
        }
        2 => {
            if let Ok(v) = HeaderValue::from_str(&head) {
                headers.insert("content-type", v);
            }
        }
        _ => {
            if let Ok(v) = HeaderValue::from_str(&format!("AWS4-HMAC-SHA256 Credential={head}")) {
                headers.insert("authorization", v);
            }
            headers.insert("x-amz-target", HeaderValue::from_static("AmazonSQS.SendMessageBatch"));
            headers.insert("content-type", HeaderValue::from_static("application/x-amz-json-1.0"));
        }
    }
    let _ = parse_request(&path, &headers, body);
});
