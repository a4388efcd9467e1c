//! The RESP proxy under `drop_delivery`: an entry taken out of an XREADGROUP reply (nil when
//! none is left, in RESP2 and RESP3) or of an XAUTOCLAIM reply, recorded as a delivery the
//! worker never saw; the others passing as they came.

use std::time::Duration;

use super::ack_fault_tests::{bulk, cmd, lines, one_rule, read_reply, READ};
use super::proxy::RespProtocol;
use crate::profile::message_action::MessageAction;
use crate::runner::live::proxy::{Flow, Protocol};

#[tokio::test]
async fn a_dropped_entry_leaves_the_read_nil_and_the_next_read_passes() {
    let (state, run) = one_rule(MessageAction::DropDelivery, Duration::ZERO);
    let mut c = RespProtocol(run).connection(1);
    let mut out = Vec::new();
    c.from_worker(&cmd(&READ), &mut out);
    let mut back = Vec::new();
    assert_eq!(
        c.from_server(read_reply("0-1").as_bytes(), &mut back),
        Flow::Go
    );
    assert_eq!(
        back, b"*-1\r\n",
        "the read found nothing, as the worker sees it"
    );
    c.from_worker(&cmd(&READ), &mut out);
    let mut back = Vec::new();
    c.from_server(read_reply("0-2").as_bytes(), &mut back);
    assert_eq!(back, read_reply("0-2").as_bytes());
    // Seq 1 delivered (its handler span ended at once: the worker never had it), seq 2
    // delivered; the rule fired once.
    assert_eq!(
        lines(&state),
        (
            vec![
                "deliver 1.1 to 1".to_string(),
                "deliver 2.1 to 1".to_string()
            ],
            1
        )
    );
}

#[tokio::test]
async fn a_dropped_entry_is_taken_out_of_a_claim_and_of_a_read_of_two() {
    let (state, run) = one_rule(MessageAction::DropDelivery, Duration::ZERO);
    let mut c = RespProtocol(run).connection(1);
    let entry = |id: &str| format!("*2\r\n{}*2\r\n{}{}", bulk(id), bulk("body"), bulk("x"));
    // XREADGROUP COUNT 2 gets 0-2 and 0-1: the worker reads 0-2 alone.
    let mut out = Vec::new();
    c.from_worker(&cmd(&READ), &mut out);
    let two = |ids: &[&str]| {
        let entries: String = ids.iter().map(|i| entry(i)).collect();
        format!("*1\r\n*2\r\n{}*{}\r\n{entries}", bulk("s"), ids.len())
    };
    let mut back = Vec::new();
    c.from_server(two(&["0-2", "0-1"]).as_bytes(), &mut back);
    assert_eq!(back, two(&["0-2"]).as_bytes());
    // An XAUTOCLAIM claims 0-1 (delivery 2; the rule selects every delivery of seq 1, so it
    // drops this one too): the worker reads [cursor, [], []].
    let claim = ["XAUTOCLAIM", "s", "g", "c1", "30000", "0-0", "COUNT", "1"];
    c.from_worker(&cmd(&claim), &mut out);
    let reply = |e: &str, n: usize| format!("*3\r\n{}*{n}\r\n{e}*0\r\n", bulk("0-0"));
    let mut back = Vec::new();
    c.from_server(reply(&entry("0-1"), 1).as_bytes(), &mut back);
    assert_eq!(back, reply("", 0).as_bytes());
    assert_eq!(
        lines(&state),
        (
            vec![
                "deliver 2.1 to 1".to_string(),
                "deliver 1.1 to 1".to_string(),
                "deliver 1.2 to 1".to_string(),
            ],
            2
        )
    );
}

#[tokio::test]
async fn after_hello_3_a_read_left_empty_is_the_resp3_nil() {
    let (_state, run) = one_rule(MessageAction::DropDelivery, Duration::ZERO);
    let mut c = RespProtocol(run).connection(1);
    let mut out = Vec::new();
    c.from_worker(&cmd(&["HELLO", "3"]), &mut out);
    let mut back = Vec::new();
    c.from_server(
        format!("%1\r\n{}:3\r\n", bulk("proto")).as_bytes(),
        &mut back,
    );
    c.from_worker(&cmd(&READ), &mut out);
    let reply = format!(
        "%1\r\n{}*1\r\n*2\r\n{}*2\r\n{}{}",
        bulk("s"),
        bulk("0-1"),
        bulk("body"),
        bulk("x")
    );
    let mut back = Vec::new();
    c.from_server(reply.as_bytes(), &mut back);
    assert_eq!(back, b"_\r\n");
}
