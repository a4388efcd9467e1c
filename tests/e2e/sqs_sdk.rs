//! SQS conformance with the real aws-sdk-sqs client: every operation, the modeled errors, long
//! polling, lease expiry, the redrive policy and batches.

use std::time::{Duration, Instant};

use ackbench::internals::profile::StaleAck;
use ackbench::internals::run::{AckOutcome, EventKind};
use ackbench::internals::serve::{BrokerConfig, QueueSpec};
use aws_sdk_sqs::error::ProvideErrorMetadata;
use aws_sdk_sqs::operation::create_queue::CreateQueueError;
use aws_sdk_sqs::operation::delete_message::DeleteMessageError;
use aws_sdk_sqs::operation::get_queue_attributes::GetQueueAttributesError;
use aws_sdk_sqs::operation::get_queue_url::GetQueueUrlError;
use aws_sdk_sqs::operation::purge_queue::PurgeQueueError;
use aws_sdk_sqs::operation::send_message_batch::SendMessageBatchError;
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
    MessageAttributeValue, MessageSystemAttributeName, QueueAttributeName,
    SendMessageBatchRequestEntry,
};

use crate::sqs_support::{handle, sqs_test, system, within, Message, Sqs};

const S: u64 = 1_000_000_000;

sqs_test!(queue_lifecycle_and_attributes(t) {
    let c = &t.c;
    let url = t.create("orders", &[]).await;
    assert_eq!(url, t.srv.queue_url("orders"));
    assert_eq!(
        t.create("orders", &[]).await,
        url,
        "CreateQueue of an existing queue returns its URL"
    );
    t.create("other", &[]).await;
    assert_eq!(t.url_of("orders").await, url);
    let listed = c.list_queues().queue_name_prefix("ord").send().await;
    assert_eq!(listed.unwrap().queue_urls(), std::slice::from_ref(&url));
    let all = c.list_queues().send().await.unwrap();
    assert_eq!(all.queue_urls().len(), 2);

    c.set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::VisibilityTimeout, "45")
        .attributes(QueueAttributeName::DelaySeconds, "0")
        .send()
        .await
        .unwrap();
    let a = t.attributes(&url, &[QueueAttributeName::All]).await;
    assert_eq!(a[&QueueAttributeName::VisibilityTimeout], "45");
    assert_eq!(a[&QueueAttributeName::ApproximateNumberOfMessages], "0");
    assert_eq!(
        a[&QueueAttributeName::QueueArn],
        "arn:aws:sqs:us-east-1:000000000000:orders"
    );
    assert!(a.contains_key(&QueueAttributeName::ApproximateNumberOfMessagesNotVisible));
    assert!(a.contains_key(&QueueAttributeName::ApproximateNumberOfMessagesDelayed));

    let e = c
        .create_queue()
        .queue_name("orders")
        .attributes(QueueAttributeName::VisibilityTimeout, "10")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(matches!(e, CreateQueueError::QueueNameExists(_)), "{e:?}");

    let e = c
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::from("NoSuchAttribute"))
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert!(
        matches!(e, GetQueueAttributesError::InvalidAttributeName(_)),
        "{e:?}"
    );

    c.delete_queue().queue_url(&url).send().await.unwrap();
    let e = c.get_queue_url().queue_name("orders").send().await;
    let e = e.unwrap_err().into_service_error();
    assert!(matches!(e, GetQueueUrlError::QueueDoesNotExist(_)), "{e:?}");
    assert_eq!(e.code(), Some("AWS.SimpleQueueService.NonExistentQueue"));
});

sqs_test!(send_receive_delete_with_attributes(t, "worker-3", 30) {
    let c = &t.c;
    let url = t.create("q", &[]).await;
    let body = r#"{"key": "msg-1", "seq": 1, "email": "msg-1@example.test"}"#;
    let attribute = |data_type: &str, value: &str| {
        MessageAttributeValue::builder()
            .data_type(data_type)
            .string_value(value)
            .build()
            .unwrap()
    };
    let sent = c
        .send_message()
        .queue_url(&url)
        .message_body(body)
        .message_attributes("trace", attribute("String", "abc"))
        .message_attributes("n", attribute("Number", "42"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        sent.md5_of_message_body(),
        Some(format!("{:x}", md5_of(body)).as_str())
    );
    assert!(sent.md5_of_message_attributes().is_some());

    let got = c
        .receive_message()
        .queue_url(&url)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .message_attribute_names("All")
        .send()
        .await
        .unwrap();
    let m = &got.messages()[0];
    assert_eq!(m.body(), Some(body));
    assert_eq!(m.message_id(), sent.message_id());
    assert_eq!(
        m.md5_of_message_attributes(),
        sent.md5_of_message_attributes()
    );
    assert_eq!(system(m, MessageSystemAttributeName::ApproximateReceiveCount), "1");
    let sent_at = system(m, MessageSystemAttributeName::SentTimestamp);
    assert!(sent_at.parse::<u64>().unwrap() > 1_600_000_000_000);
    system(m, MessageSystemAttributeName::ApproximateFirstReceiveTimestamp);
    let ma = m.message_attributes().unwrap();
    assert_eq!(ma["trace"].string_value(), Some("abc"));
    assert_eq!(ma["n"].data_type(), "Number");

    let not_visible = QueueAttributeName::ApproximateNumberOfMessagesNotVisible;
    assert_eq!(t.attribute(&url, not_visible).await, "1");

    t.delete(&url, &handle(m)).await;
    assert!(t.receive(&url, None).await.is_empty());

    // The worker was identified by its access key id.
    let events = t.srv.take_events("q").unwrap();
    assert!(events.iter().any(|e| matches!(
        e.kind,
        EventKind::Delivered {
            worker: 3,
            delivery: 1,
            ..
        }
    )));
    assert!(events.iter().any(|e| matches!(
        e.kind,
        EventKind::Acked {
            worker: 3,
            outcome: AckOutcome::Deleted,
            ..
        }
    )));
    assert!(t.srv.workers().contains(&("worker-3".to_string(), 3)));
});

fn md5_of(s: &str) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(s.as_bytes()).into())
}

sqs_test!(long_poll_wakes_on_send(t) {
    let url = t.create("poll", &[]).await;
    let (c2, url2) = (t.c.clone(), url.clone());
    let poller = tokio::spawn(async move {
        let r = c2.receive_message().queue_url(&url2).wait_time_seconds(5);
        let r = r.send().await.unwrap();
        (Instant::now(), r.messages().len())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent_at = Instant::now();
    t.send(&url, "wake up").await;
    let (woke_at, n) = poller.await.unwrap();
    assert_eq!(n, 1);
    let lag = woke_at.saturating_duration_since(sent_at);
    assert!(
        lag < Duration::from_millis(100),
        "long poll answered {lag:?} after the send"
    );

    // An empty long poll waits its full time, then answers empty.
    let t0 = Instant::now();
    assert!(t.receive_waiting(&url, None, 1).await.is_empty());
    assert!(
        t0.elapsed() >= Duration::from_millis(950),
        "{:?}",
        t0.elapsed()
    );
});

sqs_test!(lease_expiry_redelivers_with_receive_count_two(t) {
    let url = t.create("lease", &[]).await;
    t.send(&url, "m").await;
    let old = handle(&t.receive(&url, Some(1)).await[0]);
    assert!(t.receive(&url, None).await.is_empty(), "hidden while leased");
    // A long poll wakes when the lease expires.
    let t0 = Instant::now();
    let second = t.receive_waiting(&url, None, 5).await;
    assert!(
        t0.elapsed() < Duration::from_millis(1500),
        "woke at the lease end: {:?}",
        t0.elapsed()
    );
    let m = &second[0];
    assert_eq!(system(m, MessageSystemAttributeName::ApproximateReceiveCount), "2");
    // The old receipt is stale: SQS's documented behaviour (the default) is success, nothing
    // deleted.
    t.delete(&url, &old).await;
    let e = t
        .c
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&old)
        .visibility_timeout(10)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    let counts = t.srv.counts("lease").unwrap();
    assert_eq!(
        (counts.leased, counts.deleted),
        (1, 0),
        "the stale delete deleted nothing"
    );
    // Extending and releasing the current lease.
    t.change_visibility(&url, &handle(m), 0).await;
    assert_eq!(
        t.receive(&url, None).await.len(),
        1,
        "visibility 0 releases the message at once"
    );
});

/// A redrive policy into the queue of `arn` after `max` receives, `max` written as JSON `max`.
fn redrive(arn: &str, max: &str) -> String {
    format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":{max}}}"#)
}

sqs_test!(redrive_policy_moves_message_to_the_dead_letter_queue(t) {
    let dlq = t.create("orders-dlq", &[]).await;
    let dlq_arn = t.attribute(&dlq, QueueAttributeName::QueueArn).await;
    let policy = redrive(&dlq_arn, "\"2\"");
    let url = t
        .create("orders", &[(QueueAttributeName::RedrivePolicy, &policy)])
        .await;
    let sent = t.send(&url, "poison").await;
    for delivery in 1..=2 {
        assert_eq!(t.receive(&url, Some(0)).await.len(), 1, "delivery {delivery}");
    }
    assert!(t.receive(&url, None).await.is_empty());
    let r = t.receive_waiting(&dlq, None, 2).await;
    let m = &r[0];
    assert_eq!(m.body(), Some("poison"));
    assert_eq!(m.message_id(), sent.message_id());
    assert_eq!(
        system(m, MessageSystemAttributeName::DeadLetterQueueSourceArn),
        "arn:aws:sqs:us-east-1:000000000000:orders"
    );
    let policy = t.attribute(&url, QueueAttributeName::RedrivePolicy).await;
    assert!(policy.contains("\"maxReceiveCount\":2"), "{policy}");
    let events = t.srv.take_events("orders").unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e.kind, EventKind::DeadLettered { delivery: 2, .. })));
});

sqs_test!(batch_operations_and_their_errors(t) {
    let c = &t.c;
    let url = t.create("batch", &[]).await;
    let entry = |id: &str, body: &str| {
        SendMessageBatchRequestEntry::builder()
            .id(id)
            .message_body(body)
            .build()
            .unwrap()
    };
    let too_late = SendMessageBatchRequestEntry::builder()
        .id("d")
        .message_body("x")
        .delay_seconds(901)
        .build()
        .unwrap();
    let sent = c
        .send_message_batch()
        .queue_url(&url)
        .entries(entry("a", "one"))
        .entries(entry("b", "two"))
        .entries(entry("c", "three"))
        .entries(too_late)
        .send()
        .await
        .unwrap();
    assert_eq!(sent.successful().len(), 3);
    assert_eq!(sent.failed().len(), 1);
    assert_eq!(sent.failed()[0].id(), "d");
    assert_eq!(sent.failed()[0].code(), "InvalidParameterValue");

    let got = c.receive_message().queue_url(&url).max_number_of_messages(10);
    let got = got.send().await.unwrap();
    let bodies: Vec<_> = got.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, ["one", "two", "three"], "publish order");
    let handles: Vec<String> = got.messages().iter().map(handle).collect();

    let visibility = |id: &str, receipt: &str| {
        ChangeMessageVisibilityBatchRequestEntry::builder()
            .id(id)
            .receipt_handle(receipt)
            .visibility_timeout(60)
            .build()
            .unwrap()
    };
    let vis = c
        .change_message_visibility_batch()
        .queue_url(&url)
        .entries(visibility("a", &handles[0]))
        .entries(visibility("z", "forged"))
        .send()
        .await
        .unwrap();
    assert_eq!(vis.successful().len(), 1);
    assert_eq!(vis.failed()[0].code(), "ReceiptHandleIsInvalid");

    let deletion = |id: &str, receipt: &str| {
        DeleteMessageBatchRequestEntry::builder()
            .id(id)
            .receipt_handle(receipt)
            .build()
            .unwrap()
    };
    let mut del = c.delete_message_batch().queue_url(&url);
    for (i, h) in handles.iter().enumerate() {
        del = del.entries(deletion(&format!("m{i}"), h));
    }
    let del = del.entries(deletion("bogus", "AAAA")).send().await.unwrap();
    assert_eq!(del.successful().len(), 3);
    assert_eq!(del.failed().len(), 1);
    assert!(del.failed()[0].sender_fault());
    assert_eq!(t.srv.counts("batch").unwrap().deleted, 3);

    let refused = |entries: Vec<SendMessageBatchRequestEntry>| {
        let req = c.send_message_batch().queue_url(&url).set_entries(Some(entries));
        async move { req.send().await.unwrap_err().into_service_error() }
    };
    let e = refused(vec![]).await;
    assert!(
        matches!(e, SendMessageBatchError::EmptyBatchRequest(_)),
        "{e:?}"
    );
    let e = refused((0..11).map(|i| entry(&format!("e{i}"), "x")).collect()).await;
    assert!(
        matches!(e, SendMessageBatchError::TooManyEntriesInBatchRequest(_)),
        "{e:?}"
    );
    let e = refused(vec![entry("same", "x"), entry("same", "y")]).await;
    assert!(
        matches!(e, SendMessageBatchError::BatchEntryIdsNotDistinct(_)),
        "{e:?}"
    );
});

sqs_test!(errors_in_aws_shapes(t) {
    let c = &t.c;
    let url = t.create("errs", &[]).await;
    let e = c.delete_message().queue_url(&url).receipt_handle("forged-handle");
    let e = e.send().await.unwrap_err().into_service_error();
    assert!(
        matches!(e, DeleteMessageError::ReceiptHandleIsInvalid(_)),
        "{e:?}"
    );
    let e = c.receive_message().queue_url(&url).max_number_of_messages(11);
    assert_eq!(e.send().await.unwrap_err().code(), Some("InvalidParameterValue"));
    let refused = |url: &str, body: String| {
        let req = c.send_message().queue_url(url).message_body(body);
        async move { req.send().await.unwrap_err() }
    };
    let e = refused(&url, "x".repeat(1_048_577)).await;
    assert_eq!(e.code(), Some("InvalidParameterValue"));
    assert!(e.message().unwrap_or_default().contains("1048576"), "{e:?}");
    t.send(&url, &"x".repeat(1_048_576)).await; // 1 MiB is allowed
    let e = refused(&url, "bad \u{1} char".into()).await;
    assert_eq!(e.code(), Some("InvalidMessageContents"));
    let e = c
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle("x")
        .visibility_timeout(43_201)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    let missing = format!("{}/000000000000/nope", t.srv.endpoint_url());
    let e = refused(&missing, "x".into()).await;
    assert_eq!(e.code(), Some("AWS.SimpleQueueService.NonExistentQueue"));
    let e = c
        .add_permission()
        .queue_url(&url)
        .label("l")
        .aws_account_ids("111122223333")
        .actions("SendMessage")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        e.code(),
        Some("AWS.SimpleQueueService.UnsupportedOperation")
    );

    // Delays and purge.
    let later = c.send_message().queue_url(&url).message_body("later");
    later.delay_seconds(60).send().await.unwrap();
    let a = t
        .attributes(
            &url,
            &[
                QueueAttributeName::ApproximateNumberOfMessagesDelayed,
                QueueAttributeName::ApproximateNumberOfMessages,
            ],
        )
        .await;
    assert_eq!(
        a[&QueueAttributeName::ApproximateNumberOfMessagesDelayed],
        "1"
    );
    assert_eq!(a[&QueueAttributeName::ApproximateNumberOfMessages], "1");
    c.purge_queue().queue_url(&url).send().await.unwrap();
    assert_eq!(t.srv.counts("errs").unwrap().in_queue(), 0);
});

sqs_test!(stale_ack_policies_over_sqs(t, "7", 30) {
    let policies = [
        ("rej", StaleAck::Reject),
        ("ign", StaleAck::Ignore),
        ("del", StaleAck::Delete),
        ("sqs", StaleAck::Sqs),
    ];
    for (name, policy) in policies {
        let spec = QueueSpec {
            broker: BrokerConfig {
                visibility_timeout: 30 * S,
                max_receives: 0,
                stale_ack: policy,
            },
            dead_letter_queue: None,
            fifo: None,
        };
        let url = t.srv.create_queue(name, spec).unwrap();
        t.send(&url, "m").await;
        let old = handle(&t.receive(&url, Some(0)).await[0]);
        assert_eq!(t.receive(&url, None).await.len(), 1);
        let res = t.c.delete_message().queue_url(&url).receipt_handle(&old).send().await;
        let counts = t.srv.counts(name).unwrap();
        match policy {
            StaleAck::Reject => {
                let e = res.unwrap_err().into_service_error();
                assert!(
                    matches!(e, DeleteMessageError::ReceiptHandleIsInvalid(_)),
                    "{e:?}"
                );
                assert_eq!(counts.leased, 1);
            }
            // sqs: the old handle is not the latest (received again since): as ignore.
            StaleAck::Ignore | StaleAck::Sqs => {
                res.unwrap();
                assert_eq!(counts.leased, 1);
            }
            StaleAck::Delete => {
                res.unwrap();
                assert_eq!(counts.deleted, 1);
            }
        }
        let events = t.srv.take_events(name).unwrap();
        let stale = events
            .iter()
            .filter(|e| {
                matches!(e.kind, EventKind::Acked { worker: 7, outcome, .. } if outcome.is_stale())
            })
            .count();
        assert_eq!(stale, 1, "{name}: the stale delete is recorded");
    }
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_configured_at_bind_dead_letter_into_their_named_dlq() {
    let spec = QueueSpec {
        broker: BrokerConfig {
            visibility_timeout: 30 * S,
            max_receives: 2,
            stale_ack: StaleAck::Reject,
        },
        dead_letter_queue: Some("emails-dlq".into()),
        fifo: None,
    };
    let config = ackbench::internals::serve::SqsConfig {
        queues: vec![("emails".into(), spec)],
        ..Default::default()
    };
    let t = Sqs::with(config, "worker-2").await;
    within(30, async {
        let url = t.url_of("emails").await;
        let dlq = t.url_of("emails-dlq").await;
        let a = t.attributes(&url, &[QueueAttributeName::All]).await;
        assert_eq!(a[&QueueAttributeName::VisibilityTimeout], "30");
        assert!(
            a[&QueueAttributeName::RedrivePolicy].contains("emails-dlq"),
            "{a:?}"
        );
        t.send(&url, "m").await;
        for _ in 0..2 {
            assert_eq!(t.receive(&url, Some(0)).await.len(), 1);
        }
        let r = t.receive_waiting(&dlq, None, 2).await;
        assert_eq!(r.len(), 1, "dead-lettered into the named DLQ");
        let events = t.srv.take_events("emails").unwrap();
        let delivered = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Delivered { worker: 2, .. }))
            .count();
        assert_eq!(delivered, 2);
        assert!(
            t.srv.take_events("emails").unwrap().is_empty(),
            "events are taken once"
        );
        assert!(t.srv.take_events("nope").is_none());
    })
    .await;
    t.srv.shutdown().await;
}

// Queues created over the API have `stale_ack: sqs`, what SQS does.
sqs_test!(the_latest_receipt_after_its_lease_ended_still_deletes_and_changes_visibility(t) {
    let url = t.create("late", &[]).await;
    let lease_ended = || tokio::time::sleep(Duration::from_millis(1300));
    // 1. A delete with the latest handle after its 1 s lease ended, nobody having received
    //    the message since: success, and the message is deleted.
    t.send(&url, "a").await;
    let h = handle(&t.receive(&url, Some(1)).await[0]);
    lease_ended().await;
    assert_eq!(t.srv.counts("late").unwrap().visible, 1, "the lease ended");
    t.delete(&url, &h).await;
    let counts = t.srv.counts("late").unwrap();
    assert_eq!((counts.visible, counts.deleted), (0, 1));
    assert!(
        t.receive(&url, Some(30)).await.is_empty(),
        "deleted, not redelivered"
    );
    // 2. A visibility change with the latest handle after its lease ended: success, and the
    //    message is hidden again for the new timeout.
    t.send(&url, "b").await;
    let h = handle(&t.receive(&url, Some(1)).await[0]);
    lease_ended().await;
    t.change_visibility(&url, &h, 30).await;
    assert!(t.receive(&url, Some(30)).await.is_empty(), "hidden again");
    assert_eq!(t.srv.counts("late").unwrap().leased, 1);
    t.delete(&url, &h).await;
    assert_eq!(t.srv.counts("late").unwrap().deleted, 2);
    // 3. An older handle (received again since): success, the message is not deleted.
    t.send(&url, "c").await;
    let old = handle(&t.receive(&url, Some(1)).await[0]);
    lease_ended().await;
    let again = t.receive(&url, Some(1)).await;
    assert_eq!(
        system(&again[0], MessageSystemAttributeName::ApproximateReceiveCount),
        "2"
    );
    t.delete(&url, &old).await;
    let counts = t.srv.counts("late").unwrap();
    assert_eq!(
        (counts.leased, counts.deleted),
        (1, 2),
        "the older handle deleted nothing"
    );
    let e = t
        .c
        .change_message_visibility()
        .queue_url(&url)
        .receipt_handle(&old)
        .visibility_timeout(30)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    let outcomes: Vec<AckOutcome> = t
        .srv
        .take_events("late")
        .unwrap()
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Acked { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            AckOutcome::LateDeleted,
            AckOutcome::Deleted,
            AckOutcome::StaleIgnored
        ]
    );
});

// Limit 2: two receives in `src`, then the DLQ's first receive reports 3 (SQS counts the
// receives of every queue).
sqs_test!(the_receive_count_carries_over_into_the_dead_letter_queue(t) {
    let dlq = t.create("rc-dlq", &[]).await;
    let policy = redrive("arn:aws:sqs:us-east-1:000000000000:rc-dlq", "2");
    let url = t
        .create("rc", &[(QueueAttributeName::RedrivePolicy, &policy)])
        .await;
    t.send(&url, "p").await;
    for _ in 0..2 {
        assert_eq!(t.receive(&url, Some(0)).await.len(), 1);
    }
    assert!(t.receive(&url, None).await.is_empty());
    let count = |r: &[Message]| {
        system(&r[0], MessageSystemAttributeName::ApproximateReceiveCount).to_string()
    };
    assert_eq!(count(&t.receive_waiting(&dlq, Some(0), 2).await), "3");
    assert_eq!(count(&t.receive(&dlq, None).await), "4");
});

sqs_test!(one_mib_messages_and_batches_and_one_purge_a_minute(t, "worker-1", 60) {
    let c = &t.c;
    let url = t.create("big", &[]).await;
    assert_eq!(
        t.attribute(&url, QueueAttributeName::MaximumMessageSize).await,
        "1048576"
    );
    let e = c
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::MaximumMessageSize, "1048577")
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidAttributeValue"), "{e:?}");
    // A batch of two 600,000-byte messages: each fits, together they are over 1 MiB.
    let entry = |id: &str| {
        SendMessageBatchRequestEntry::builder()
            .id(id)
            .message_body("x".repeat(600_000))
            .build()
            .unwrap()
    };
    let two = c.send_message_batch().queue_url(&url).entries(entry("a")).entries(entry("b"));
    let e = two.send().await.unwrap_err().into_service_error();
    assert!(
        matches!(e, SendMessageBatchError::BatchRequestTooLong(_)),
        "{e:?}"
    );
    let one = c.send_message_batch().queue_url(&url).entries(entry("a"));
    assert_eq!(one.send().await.unwrap().successful().len(), 1);
    // One purge a minute: the second answers PurgeQueueInProgress and deletes nothing.
    c.purge_queue().queue_url(&url).send().await.unwrap();
    t.send(&url, "after").await;
    let e = c.purge_queue().queue_url(&url).send().await;
    let e = e.unwrap_err().into_service_error();
    assert!(
        matches!(e, PurgeQueueError::PurgeQueueInProgress(_)),
        "{e:?}"
    );
    assert_eq!(
        t.srv.counts("big").unwrap().visible,
        1,
        "the refused purge deleted nothing"
    );
});

sqs_test!(queue_tags_and_dead_letter_source_queues(t) {
    let c = &t.c;
    let tagged = c.create_queue().queue_name("tagged").tags("team", "mail").tags("env", "test");
    let url = tagged.send().await.unwrap().queue_url.unwrap();
    let tags = |url: String| async move {
        let out = c.list_queue_tags().queue_url(url).send().await.unwrap();
        let mut t: Vec<(String, String)> =
            out.tags().into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
        t.sort();
        t
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(tags(url.clone()).await, [pair("env", "test"), pair("team", "mail")]);
    c.tag_queue().queue_url(&url).tags("env", "prod").tags("owner", "ops").send().await.unwrap();
    c.untag_queue().queue_url(&url).tag_keys("team").tag_keys("absent").send().await.unwrap();
    assert_eq!(tags(url.clone()).await, [pair("env", "prod"), pair("owner", "ops")]);
    let e = c.tag_queue().queue_url(&url).tags("aws:reserved", "x").send().await;
    let e = e.unwrap_err().into_service_error();
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    let untagged = t.create("plain", &[]).await;
    assert!(tags(untagged).await.is_empty());
    // Two queues dead-letter into `dl`, one elsewhere.
    let dl = t.create("dl", &[]).await;
    t.create("dl-other", &[]).await;
    for (name, target) in [("src-b", "dl"), ("src-a", "dl"), ("src-c", "dl-other")] {
        let policy = redrive(&format!("arn:aws:sqs:us-east-1:000000000000:{target}"), "3");
        t.create(name, &[(QueueAttributeName::RedrivePolicy, &policy)]).await;
    }
    let sources = || c.list_dead_letter_source_queues().queue_url(&dl);
    let all = sources().send().await.unwrap();
    let base = t.srv.endpoint_url();
    let q = |n: &str| format!("{base}/000000000000/{n}");
    assert_eq!(all.queue_urls(), [q("src-a"), q("src-b")]);
    let page = sources().max_results(1).send().await.unwrap();
    assert_eq!((page.queue_urls(), page.next_token()), (&[q("src-a")][..], Some("src-a")));
    let next = sources().max_results(1).next_token("src-a").send().await.unwrap();
    assert_eq!((next.queue_urls(), next.next_token()), (&[q("src-b")][..], None));
    let none = c.list_dead_letter_source_queues().queue_url(&url).send().await.unwrap();
    assert!(none.queue_urls().is_empty());
});

sqs_test!(a_fifo_queue_deduplicates_and_keeps_one_message_of_a_group_in_flight(t) {
    let c = &t.c;
    let fifo = (QueueAttributeName::FifoQueue, "true");
    let refused_queue = |name: &'static str, attributes: Vec<(QueueAttributeName, &'static str)>| {
        let mut req = c.create_queue().queue_name(name);
        for (k, v) in attributes {
            req = req.attributes(k, v);
        }
        async move { req.send().await.unwrap_err().into_service_error() }
    };
    // A .fifo name needs FifoQueue=true, and FifoQueue=true a .fifo name.
    let e = refused_queue("orders.fifo", vec![]).await;
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    let e = refused_queue("orders", vec![fifo.clone()]).await;
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    let url = t.create("orders.fifo", std::slice::from_ref(&fifo)).await;
    let attrs = t.attributes(&url, &[QueueAttributeName::All]).await;
    let attr = |name| attrs.get(&name).map(String::as_str);
    assert_eq!(attr(QueueAttributeName::FifoQueue), Some("true"));
    assert_eq!(attr(QueueAttributeName::ContentBasedDeduplication), Some("false"));
    let send = |url: &str, body: &str, group: Option<&str>, dedup: Option<&str>| {
        c.send_message()
            .queue_url(url)
            .message_body(body)
            .set_message_group_id(group.map(str::to_string))
            .set_message_deduplication_id(dedup.map(str::to_string))
            .send()
    };
    let in_group = |body, group, dedup| send(&url, body, Some(group), Some(dedup));
    // Two of group A, one of group B; a repeat of the first id is dropped and answered as
    // the first send was.
    let a1 = in_group("a1", "A", "order-1").await.unwrap();
    let a2 = in_group("a2", "A", "order-2").await.unwrap();
    let b1 = in_group("b1", "B", "order-3").await.unwrap();
    let again = in_group("a1 again", "A", "order-1").await.unwrap();
    assert_eq!(again.message_id(), a1.message_id());
    assert_eq!(again.sequence_number(), a1.sequence_number());
    let (n1, n2) = (a1.sequence_number().unwrap(), a2.sequence_number().unwrap());
    assert!(n1.len() >= 20 && n1 < n2, "{n1} {n2}");
    assert_ne!(b1.message_id(), a1.message_id());
    // One receive of up to 10 gets the head of each group: a1 and b1, not a2.
    let got = c
        .receive_message()
        .queue_url(&url)
        .max_number_of_messages(10)
        .message_system_attribute_names(MessageSystemAttributeName::All)
        .send()
        .await
        .unwrap();
    let bodies: Vec<&str> = got.messages().iter().filter_map(|m| m.body()).collect();
    assert_eq!(bodies, ["a1", "b1"]);
    let m = &got.messages()[0];
    assert_eq!(system(m, MessageSystemAttributeName::MessageGroupId), "A");
    assert_eq!(
        system(m, MessageSystemAttributeName::MessageDeduplicationId),
        "order-1"
    );
    assert_eq!(system(m, MessageSystemAttributeName::SequenceNumber), n1);
    // Group A is blocked while a1 is in flight.
    assert!(t.receive(&url, None).await.is_empty());
    t.delete(&url, &handle(m)).await;
    assert_eq!(t.receive(&url, None).await[0].body(), Some("a2"));
    // The id is still remembered after its message was deleted.
    let after = in_group("a1 once more", "A", "order-1").await.unwrap();
    assert_eq!(after.message_id(), a1.message_id());
    // A FIFO send needs a group, takes no delay of its own, and needs a deduplication id
    // without content-based deduplication.
    let e = send(&url, "x", None, Some("d")).await.unwrap_err().into_service_error();
    assert_eq!(e.code(), Some("MissingParameter"), "{e:?}");
    let e = send(&url, "x", Some("A"), None).await.unwrap_err().into_service_error();
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    let e = c
        .send_message()
        .queue_url(&url)
        .message_body("x")
        .message_group_id("A")
        .message_deduplication_id("d")
        .delay_seconds(5)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    // Content-based deduplication: the same body twice is one message.
    let content_based = (QueueAttributeName::ContentBasedDeduplication, "true");
    let cb = t.create("content.fifo", &[fifo, content_based]).await;
    let one = send(&cb, "same", Some("g"), None).await.unwrap();
    let two = send(&cb, "same", Some("g"), None).await.unwrap();
    assert_eq!(one.message_id(), two.message_id());
    let visible = QueueAttributeName::ApproximateNumberOfMessages;
    assert_eq!(t.attribute(&cb, visible).await, "1");
    // A standard queue takes no deduplication id.
    let plain = t.create("plain", &[]).await;
    let e = send(&plain, "x", None, Some("d")).await.unwrap_err().into_service_error();
    assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
});
