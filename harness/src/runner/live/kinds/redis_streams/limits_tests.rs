//! The RESP proxy on frames over Redis's limits: the former crash inputs (a reply nested
//! 10,000 deep, `*1` sent 200,000 times, a 600 MB bulk string) are refused before they are
//! decoded or buffered, answered as Redis answers them, and the connection ends.

use super::ack_fault_tests::{cmd, observed};
use super::proxy::RespProtocol;
use crate::chaos::KillSchedule;
use crate::provider::http::LiveClock;
use crate::runner::live::proxy::{Connection, Protocol};
use crate::runner::live::state::LiveState;

fn connection() -> Box<dyn Connection> {
    let state = LiveState::new(LiveClock::new(1.0), "s", 1, KillSchedule::new(&[], 1));
    RespProtocol(observed(&state, None)).connection(1)
}

#[tokio::test]
async fn a_reply_nested_10000_deep_closes_the_connection_without_decoding_it() {
    // EVAL "local t = {1} for i=1,10000 do t = {t} end return t" 0, and its reply.
    let mut c = connection();
    let mut out = Vec::new();
    let eval = cmd(&[
        "EVAL",
        "local t = {1} for i=1,10000 do t = {t} end return t",
        "0",
    ]);
    c.from_worker(&eval, &mut out);
    assert_eq!(out, eval);
    let mut reply = b"*1\r\n".repeat(10_000);
    reply.extend_from_slice(b":1\r\n");
    out.clear();
    c.from_server(&reply, &mut out);
    assert!(out.is_empty());
    let r = c.refusal().unwrap();
    assert_eq!(
        r.why,
        "the server sent a frame nested deeper than 128, which the proxy does not read"
    );
    assert!(r.to_worker.is_empty());
}

#[tokio::test]
async fn nested_arrays_or_a_600_mb_bulk_from_the_worker_get_redis_protocol_error() {
    // `*1\r\n` 200,000 times: Redis's answer to the second `*`, and nothing forwarded.
    let mut c = connection();
    let mut out = Vec::new();
    c.from_worker(&b"*1\r\n".repeat(200_000), &mut out);
    assert!(out.is_empty());
    let r = c.refusal().unwrap();
    assert_eq!(
        r.to_worker,
        b"-ERR Protocol error: expected '$', got '*'\r\n"
    );
    // A 600 MB SET, its header: refused before any of it is buffered; the PING before it
    // goes on.
    let mut c = connection();
    out.clear();
    let ping = cmd(&["PING"]);
    let mut bytes = ping.clone();
    bytes.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$629145600\r\nxxxx");
    c.from_worker(&bytes, &mut out);
    assert_eq!(out, ping);
    let r = c.refusal().unwrap();
    assert_eq!(r.to_worker, b"-ERR Protocol error: invalid bulk length\r\n");
    assert_eq!(
        r.why,
        "the worker sent a bulk string of 629145600 bytes, over proto-max-bulk-len (536870912)"
    );
}

#[test]
fn a_line_with_no_type_byte_is_left_to_the_decoder() {
    // `\r\n` where a frame's type byte belongs (found by the fuzz round): no length to read,
    // nothing over a limit, and no panic; the decoder judges it.
    use super::limits::{check, COMMANDS, REPLIES};
    assert!(check(b"\r\n", &REPLIES).is_ok());
    assert!(check(b"\r\n\r\n+OK\r\n", &COMMANDS).is_ok());
    // Inside an array it is one element like any line.
    assert!(check(b"*2\r\n\r\n$999999999999\r\n", &REPLIES).is_err());
}
