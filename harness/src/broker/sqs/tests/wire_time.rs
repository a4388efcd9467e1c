//! A queue whose wire seconds are profile seconds (a consumer on the scaled clock, time scale
//! 0.05): every duration a request or an attribute carries lasts 0.05 s a second here.

use std::collections::BTreeMap;

use crate::broker::sqs::message_attributes::MessageAttributes;
use crate::broker::sqs::queue::{default_broker_config, SqsQueue};
use crate::broker::sqs::queue_attributes::QueueSettings;
use crate::broker::sqs::receipt::ReceiptCodec;
use crate::broker::sqs::request::Receive;
use crate::broker::sqs::{NewMessage, WireTime};
use crate::record::Nanos;

const MS: Nanos = 1_000_000;

fn queue() -> SqsQueue {
    let mut q = SqsQueue::new(
        "q",
        "arn:aws:sqs:us-east-1:000000000000:q".into(),
        1,
        default_broker_config(),
        QueueSettings::default(),
        0,
        false,
    );
    q.wire_time = WireTime::scaled(0.05);
    q
}

fn send(q: &mut SqsQueue, now: Nanos, delay_s: Option<u32>) {
    let m = NewMessage {
        body: "{}".into(),
        delay_s,
        attributes: MessageAttributes::default(),
        group_id: None,
        dedup_id: None,
    };
    q.send(now, 0, m).unwrap();
}

fn receive(q: &mut SqsQueue, now: Nanos, visibility_timeout_s: Option<u32>) -> Vec<String> {
    let r = Receive {
        queue: "q".into(),
        max_messages: 10,
        wait_s: None,
        visibility_timeout_s,
        system_attributes: vec![],
        message_attributes: vec![],
    };
    let codec = ReceiptCodec::new([1; 32]);
    q.advance(now);
    q.receive(now, 0, 1, &r, &codec)
        .into_iter()
        .map(|m| m.receipt_handle)
        .collect()
}

#[test]
fn a_receive_visibility_timeout_of_30_is_a_lease_of_1_5_s() {
    let mut q = queue();
    send(&mut q, 0, None);
    assert_eq!(receive(&mut q, 0, Some(30)).len(), 1);
    // 30 x 0.05 = 1.5 s: still leased at 1499 ms, visible again at 1500 ms.
    assert!(receive(&mut q, 1499 * MS, None).is_empty());
    assert_eq!(receive(&mut q, 1500 * MS, None).len(), 1);
}

#[test]
fn a_heartbeat_of_30_from_now_extends_by_1_5_s() {
    let mut q = queue();
    send(&mut q, 0, None);
    let handle = receive(&mut q, 0, Some(30)).remove(0);
    // At 1 s (20 profile seconds in), ChangeMessageVisibility 30: the lease ends at 2.5 s.
    let codec = ReceiptCodec::new([1; 32]);
    q.change_visibility(1000 * MS, 1, &codec, &handle, 30)
        .unwrap();
    assert!(receive(&mut q, 2499 * MS, None).is_empty());
    assert_eq!(receive(&mut q, 2500 * MS, None).len(), 1);
}

#[test]
fn a_delay_of_20_s_is_1_s() {
    let mut q = queue();
    send(&mut q, 0, Some(20));
    assert!(receive(&mut q, 999 * MS, None).is_empty());
    assert_eq!(receive(&mut q, 1000 * MS, None).len(), 1);
}

#[test]
fn queue_attributes_are_read_and_answered_in_profile_seconds() {
    let attributes = BTreeMap::from([("VisibilityTimeout".to_string(), "30".to_string())]);
    let (config, _) = SqsQueue::with_attributes(
        default_broker_config(),
        &QueueSettings::default(),
        &attributes,
        WireTime::scaled(0.05),
    )
    .unwrap();
    assert_eq!(config.visibility_timeout, 1500 * MS);
    let mut q = queue();
    q.broker.set_config(config);
    let got = q.attributes(&["VisibilityTimeout".to_string()]);
    assert_eq!(got["VisibilityTimeout"], "30");
}
