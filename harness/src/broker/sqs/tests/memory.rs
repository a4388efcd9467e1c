//! A queue that forgets settled messages holds nothing of a message once it is deleted, purged
//! or moved to its dead-letter queue, however many it carried.

use crate::broker::sqs::queue::{default_broker_config, SqsQueue};
use crate::broker::sqs::queue_attributes::QueueSettings;
use crate::broker::sqs::receipt::ReceiptCodec;
use crate::broker::sqs::request::{NewMessage, Receive};
use crate::broker::{Broker, MessageState};
use crate::record::AckOutcome;

fn queue() -> SqsQueue {
    queue_with(default_broker_config())
}

fn queue_with(config: crate::broker::BrokerConfig) -> SqsQueue {
    let arn = "arn:aws:sqs:us-east-1:000000000000:q".to_string();
    let settings = QueueSettings::default();
    SqsQueue::new("q", arn, 1, config, settings, 0, true)
}

fn message(body: String) -> NewMessage {
    NewMessage {
        body,
        delay_s: None,
        attributes: Default::default(),
        group_id: None,
        dedup_id: None,
    }
}

fn receive(n: u32) -> Receive {
    Receive {
        queue: "q".into(),
        max_messages: n,
        wait_s: Some(0),
        visibility_timeout_s: None,
        system_attributes: Vec::new(),
        message_attributes: Vec::new(),
    }
}

#[test]
fn a_million_messages_published_and_acked_leave_nothing_in_a_forgetting_broker() {
    let mut b = Broker::forgetting_settled(default_broker_config());
    let mut log = Vec::new();
    let mut first = None;
    for round in 0..100_000u64 {
        for _ in 0..10 {
            b.publish(round, 0, &mut log);
        }
        for _ in 0..10 {
            let h = b.receive(round, 1, &mut log).expect("a visible message");
            assert_eq!(
                b.ack(round, h.receipt, 1, &mut log),
                Ok(AckOutcome::Deleted)
            );
            first.get_or_insert(h.receipt);
        }
        log.clear();
    }
    // 100,000 rounds of 10: a million published, delivered once and acked.
    assert_eq!((b.len(), b.counts().deleted), (1_000_000, 1_000_000));
    assert_eq!(b.held(), 0);
    // The first message's receipt is stale (gone), not unknown.
    let r = first.expect("a receipt");
    assert_eq!(b.ack(0, r, 1, &mut log), Ok(AckOutcome::StaleGone));
}

#[test]
fn messages_sent_and_deleted_leave_nothing_behind_in_the_queue() {
    let (mut q, codec) = (queue(), ReceiptCodec::new([3; 32]));
    let mut stale = Vec::new();
    // 10,000 rounds of 10 (receipts are HMAC-signed: a million would take minutes in a debug
    // build; the broker's own million is above).
    for round in 0..10_000u64 {
        let now = round * 1_000;
        for i in 0..10 {
            q.send(now, 0, message(format!("order-{i}"))).unwrap();
        }
        let got = q.receive(now, 0, 1, &receive(10), &codec);
        assert_eq!(got.len(), 10);
        for m in &got {
            q.delete(now, 1, &codec, &m.receipt_handle).unwrap();
        }
        if round % 1_000 == 0 {
            stale.push(got[0].receipt_handle.clone());
        }
        // A standalone broker records no events: the endpoint drops them after each request.
        q.events.clear();
    }
    // 10,000 rounds of 10: 100,000 sent, received and deleted.
    assert_eq!(q.broker.len(), 100_000);
    assert_eq!(q.counts().deleted, 100_000);
    assert_eq!((q.broker.held(), q.messages.len()), (0, 0));
    // The map shrinks as it empties: room for at most a few of the ten in flight at once.
    assert!(q.messages.capacity() <= 1024, "{}", q.messages.capacity());
    // A receipt of a forgotten message is still stale, not foreign: deleting it again is the
    // stale delete SQS documents (success, nothing deleted).
    for h in &stale {
        assert_eq!(q.delete(0, 1, &codec, h), Ok(()));
    }
    assert_eq!(q.counts().deleted, 100_000);
}

#[test]
fn a_purge_drops_bodies_and_keeps_dead_letters_not_yet_moved() {
    // One delivery allowed: a lease that ends dead-letters its message.
    let config = crate::broker::BrokerConfig {
        max_receives: 1,
        ..default_broker_config()
    };
    let (mut q, codec) = (queue_with(config), ReceiptCodec::new([3; 32]));
    q.send(0, 0, message("dead".into())).unwrap();
    let _ = q.receive(0, 0, 1, &receive(1), &codec);
    q.advance(31_000_000_000);
    assert_eq!(q.broker.state(1), Some(MessageState::DeadLettered));
    for i in 0..3 {
        for _ in 0..1_000 {
            q.send(0, 0, message("x".repeat(100 * 1024))).unwrap();
        }
        // One leased, the rest visible: all purged.
        let _ = q.receive(0, 0, 1, &receive(1), &codec);
        // One purge a minute at most: 60 s apart.
        q.purge(31_000_000_000 + i * 60_000_000_000).unwrap();
        // Only the dead letter is left, waiting for its move.
        assert_eq!((q.broker.held(), q.messages.len()), (1, 1));
        assert!(q.messages.capacity() < 16, "{}", q.messages.capacity());
    }
    assert_eq!(q.counts().deleted, 3_000);
    let letters = q.take_dead_letters();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].body, "dead");
    assert_eq!((q.broker.held(), q.messages.len()), (0, 0));
}
