//! SQS conformance with the real aws-sdk-sqs client: every operation, the modeled errors, long
//! polling, lease expiry, the redrive policy and batches.

use std::time::{Duration, Instant};

use ackbench::broker::sqs::QueueSpec;
use ackbench::broker::BrokerConfig;
use ackbench::profile::StaleAck;
use ackbench::record::{AckOutcome, EventKind};
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

use crate::sqs_support::{client, server, within};

const S: u64 = 1_000_000_000;

async fn create(c: &aws_sdk_sqs::Client, name: &str) -> String {
    c.create_queue()
        .queue_name(name)
        .send()
        .await
        .expect("create queue")
        .queue_url
        .expect("url")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_lifecycle_and_attributes() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let url = create(&c, "orders").await;
        assert_eq!(url, srv.queue_url("orders"));
        assert_eq!(
            create(&c, "orders").await,
            url,
            "CreateQueue of an existing queue returns its URL"
        );
        create(&c, "other").await;
        let got = c.get_queue_url().queue_name("orders").send().await.unwrap();
        assert_eq!(got.queue_url(), Some(url.as_str()));
        let listed = c
            .list_queues()
            .queue_name_prefix("ord")
            .send()
            .await
            .unwrap();
        assert_eq!(listed.queue_urls(), std::slice::from_ref(&url));
        let all = c.list_queues().send().await.unwrap();
        assert_eq!(all.queue_urls().len(), 2);

        c.set_queue_attributes()
            .queue_url(&url)
            .attributes(QueueAttributeName::VisibilityTimeout, "45")
            .attributes(QueueAttributeName::DelaySeconds, "0")
            .send()
            .await
            .unwrap();
        let attrs = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .unwrap();
        let a = attrs.attributes().expect("attributes");
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
        let e = c
            .get_queue_url()
            .queue_name("orders")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert!(matches!(e, GetQueueUrlError::QueueDoesNotExist(_)), "{e:?}");
        assert_eq!(e.code(), Some("AWS.SimpleQueueService.NonExistentQueue"));
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_receive_delete_with_attributes() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-3");
    within(30, async {
        let url = create(&c, "q").await;
        let body = r#"{"key": "msg-1", "seq": 1, "email": "msg-1@example.test"}"#;
        let sent = c
            .send_message()
            .queue_url(&url)
            .message_body(body)
            .message_attributes(
                "trace",
                MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value("abc")
                    .build()
                    .unwrap(),
            )
            .message_attributes(
                "n",
                MessageAttributeValue::builder()
                    .data_type("Number")
                    .string_value("42")
                    .build()
                    .unwrap(),
            )
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
        let sys = m.attributes().unwrap();
        assert_eq!(
            sys[&MessageSystemAttributeName::ApproximateReceiveCount],
            "1"
        );
        assert!(
            sys[&MessageSystemAttributeName::SentTimestamp]
                .parse::<u64>()
                .unwrap()
                > 1_600_000_000_000
        );
        assert!(sys.contains_key(&MessageSystemAttributeName::ApproximateFirstReceiveTimestamp));
        let ma = m.message_attributes().unwrap();
        assert_eq!(ma["trace"].string_value(), Some("abc"));
        assert_eq!(ma["n"].data_type(), "Number");

        let attrs = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .send()
            .await
            .unwrap();
        assert_eq!(
            attrs.attributes().unwrap()[&QueueAttributeName::ApproximateNumberOfMessagesNotVisible],
            "1"
        );

        c.delete_message()
            .queue_url(&url)
            .receipt_handle(m.receipt_handle().unwrap())
            .send()
            .await
            .unwrap();
        let again = c.receive_message().queue_url(&url).send().await.unwrap();
        assert!(again.messages().is_empty());

        // The worker was identified by its access key id.
        let events = srv.take_events("q").unwrap();
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
        assert!(srv.workers().contains(&("worker-3".to_string(), 3)));
    })
    .await;
    srv.shutdown().await;
}

fn md5_of(s: &str) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(s.as_bytes()).into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_wakes_on_send() {
    let srv = server().await;
    let endpoint = srv.endpoint_url();
    let c = client(&endpoint, "worker-1");
    within(30, async {
        let url = create(&c, "poll").await;
        let (c2, url2) = (c.clone(), url.clone());
        let poller = tokio::spawn(async move {
            let r = c2
                .receive_message()
                .queue_url(&url2)
                .wait_time_seconds(5)
                .send()
                .await
                .unwrap();
            (Instant::now(), r.messages().len())
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let sent_at = Instant::now();
        c.send_message()
            .queue_url(&url)
            .message_body("wake up")
            .send()
            .await
            .unwrap();
        let (woke_at, n) = poller.await.unwrap();
        assert_eq!(n, 1);
        let lag = woke_at.saturating_duration_since(sent_at);
        assert!(
            lag < Duration::from_millis(100),
            "long poll answered {lag:?} after the send"
        );

        // An empty long poll waits its full time, then answers empty.
        let t0 = Instant::now();
        let r = c
            .receive_message()
            .queue_url(&url)
            .wait_time_seconds(1)
            .send()
            .await
            .unwrap();
        assert!(r.messages().is_empty());
        assert!(
            t0.elapsed() >= Duration::from_millis(950),
            "{:?}",
            t0.elapsed()
        );
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_expiry_redelivers_with_receive_count_two() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let url = create(&c, "lease").await;
        c.send_message()
            .queue_url(&url)
            .message_body("m")
            .send()
            .await
            .unwrap();
        let first = c
            .receive_message()
            .queue_url(&url)
            .visibility_timeout(1)
            .send()
            .await
            .unwrap();
        let old = first.messages()[0].receipt_handle().unwrap().to_string();
        assert!(
            c.receive_message()
                .queue_url(&url)
                .send()
                .await
                .unwrap()
                .messages()
                .is_empty(),
            "hidden while leased"
        );
        // A long poll wakes when the lease expires.
        let t0 = Instant::now();
        let second = c
            .receive_message()
            .queue_url(&url)
            .wait_time_seconds(5)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .send()
            .await
            .unwrap();
        assert!(
            t0.elapsed() < Duration::from_millis(1500),
            "woke at the lease end: {:?}",
            t0.elapsed()
        );
        let m = &second.messages()[0];
        assert_eq!(
            m.attributes().unwrap()[&MessageSystemAttributeName::ApproximateReceiveCount],
            "2"
        );
        // The old receipt is stale: SQS's documented behaviour (the default) is success, nothing deleted.
        c.delete_message()
            .queue_url(&url)
            .receipt_handle(&old)
            .send()
            .await
            .unwrap();
        let e = c
            .change_message_visibility()
            .queue_url(&url)
            .receipt_handle(&old)
            .visibility_timeout(10)
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
        let counts = srv.counts("lease").unwrap();
        assert_eq!(
            (counts.leased, counts.deleted),
            (1, 0),
            "the stale delete deleted nothing"
        );
        // Extending and releasing the current lease.
        let h = m.receipt_handle().unwrap();
        c.change_message_visibility()
            .queue_url(&url)
            .receipt_handle(h)
            .visibility_timeout(0)
            .send()
            .await
            .unwrap();
        let third = c.receive_message().queue_url(&url).send().await.unwrap();
        assert_eq!(
            third.messages().len(),
            1,
            "visibility 0 releases the message at once"
        );
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redrive_policy_moves_message_to_the_dead_letter_queue() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let dlq = create(&c, "orders-dlq").await;
        let dlq_arn = c
            .get_queue_attributes()
            .queue_url(&dlq)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await
            .unwrap()
            .attributes()
            .unwrap()[&QueueAttributeName::QueueArn]
            .clone();
        let url = c
            .create_queue()
            .queue_name("orders")
            .attributes(
                QueueAttributeName::RedrivePolicy,
                format!(r#"{{"deadLetterTargetArn":"{dlq_arn}","maxReceiveCount":"2"}}"#),
            )
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let sent = c
            .send_message()
            .queue_url(&url)
            .message_body("poison")
            .send()
            .await
            .unwrap();
        for delivery in 1..=2 {
            let r = c
                .receive_message()
                .queue_url(&url)
                .visibility_timeout(0)
                .send()
                .await
                .unwrap();
            assert_eq!(r.messages().len(), 1, "delivery {delivery}");
        }
        assert!(c
            .receive_message()
            .queue_url(&url)
            .send()
            .await
            .unwrap()
            .messages()
            .is_empty());
        let r = c
            .receive_message()
            .queue_url(&dlq)
            .wait_time_seconds(2)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap();
        let m = &r.messages()[0];
        assert_eq!(m.body(), Some("poison"));
        assert_eq!(m.message_id(), sent.message_id());
        let sys = m.attributes().unwrap();
        assert_eq!(
            sys[&MessageSystemAttributeName::DeadLetterQueueSourceArn],
            "arn:aws:sqs:us-east-1:000000000000:orders"
        );
        let policy = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::RedrivePolicy)
            .send()
            .await
            .unwrap();
        assert!(
            policy.attributes().unwrap()[&QueueAttributeName::RedrivePolicy]
                .contains("\"maxReceiveCount\":2")
        );
        let events = srv.take_events("orders").unwrap();
        assert!(events
            .iter()
            .any(|e| matches!(e.kind, EventKind::DeadLettered { delivery: 2, .. })));
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_operations_and_their_errors() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let url = create(&c, "batch").await;
        let entry = |id: &str, body: &str| {
            SendMessageBatchRequestEntry::builder()
                .id(id)
                .message_body(body)
                .build()
                .unwrap()
        };
        let sent = c
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("a", "one"))
            .entries(entry("b", "two"))
            .entries(entry("c", "three"))
            .entries(
                SendMessageBatchRequestEntry::builder()
                    .id("d")
                    .message_body("x")
                    .delay_seconds(901)
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(sent.successful().len(), 3);
        assert_eq!(sent.failed().len(), 1);
        assert_eq!(sent.failed()[0].id(), "d");
        assert_eq!(sent.failed()[0].code(), "InvalidParameterValue");

        let got = c
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(10)
            .send()
            .await
            .unwrap();
        let bodies: Vec<_> = got.messages().iter().filter_map(|m| m.body()).collect();
        assert_eq!(bodies, ["one", "two", "three"], "publish order");
        let handles: Vec<String> = got
            .messages()
            .iter()
            .map(|m| m.receipt_handle().unwrap().to_string())
            .collect();

        let vis = c
            .change_message_visibility_batch()
            .queue_url(&url)
            .entries(
                ChangeMessageVisibilityBatchRequestEntry::builder()
                    .id("a")
                    .receipt_handle(&handles[0])
                    .visibility_timeout(60)
                    .build()
                    .unwrap(),
            )
            .entries(
                ChangeMessageVisibilityBatchRequestEntry::builder()
                    .id("z")
                    .receipt_handle("forged")
                    .visibility_timeout(60)
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(vis.successful().len(), 1);
        assert_eq!(vis.failed()[0].code(), "ReceiptHandleIsInvalid");

        let mut del = c.delete_message_batch().queue_url(&url);
        for (i, h) in handles.iter().enumerate() {
            del = del.entries(
                DeleteMessageBatchRequestEntry::builder()
                    .id(format!("m{i}"))
                    .receipt_handle(h)
                    .build()
                    .unwrap(),
            );
        }
        let del = del
            .entries(
                DeleteMessageBatchRequestEntry::builder()
                    .id("bogus")
                    .receipt_handle("AAAA")
                    .build()
                    .unwrap(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(del.successful().len(), 3);
        assert_eq!(del.failed().len(), 1);
        assert!(del.failed()[0].sender_fault());
        assert_eq!(srv.counts("batch").unwrap().deleted, 3);

        let e = c
            .send_message_batch()
            .queue_url(&url)
            .set_entries(Some(vec![]))
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert!(
            matches!(e, SendMessageBatchError::EmptyBatchRequest(_)),
            "{e:?}"
        );
        let mut many = c.send_message_batch().queue_url(&url);
        for i in 0..11 {
            many = many.entries(entry(&format!("e{i}"), "x"));
        }
        let e = many.send().await.unwrap_err().into_service_error();
        assert!(
            matches!(e, SendMessageBatchError::TooManyEntriesInBatchRequest(_)),
            "{e:?}"
        );
        let e = c
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("same", "x"))
            .entries(entry("same", "y"))
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert!(
            matches!(e, SendMessageBatchError::BatchEntryIdsNotDistinct(_)),
            "{e:?}"
        );
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_in_aws_shapes() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let url = create(&c, "errs").await;
        let e = c
            .delete_message()
            .queue_url(&url)
            .receipt_handle("forged-handle")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert!(
            matches!(e, DeleteMessageError::ReceiptHandleIsInvalid(_)),
            "{e:?}"
        );
        let e = c
            .receive_message()
            .queue_url(&url)
            .max_number_of_messages(11)
            .send()
            .await
            .unwrap_err();
        assert_eq!(e.code(), Some("InvalidParameterValue"));
        let e = c
            .send_message()
            .queue_url(&url)
            .message_body("x".repeat(1_048_577))
            .send()
            .await
            .unwrap_err();
        assert_eq!(e.code(), Some("InvalidParameterValue"));
        assert!(e.message().unwrap_or_default().contains("1048576"), "{e:?}");
        c.send_message()
            .queue_url(&url)
            .message_body("x".repeat(1_048_576))
            .send()
            .await
            .expect("1 MiB is allowed");
        let e = c
            .send_message()
            .queue_url(&url)
            .message_body("bad \u{1} char")
            .send()
            .await
            .unwrap_err();
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
        let missing = format!("{}/000000000000/nope", srv.endpoint_url());
        let e = c
            .send_message()
            .queue_url(&missing)
            .message_body("x")
            .send()
            .await
            .unwrap_err();
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
        c.send_message()
            .queue_url(&url)
            .message_body("later")
            .delay_seconds(60)
            .send()
            .await
            .unwrap();
        let attrs = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesDelayed)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .send()
            .await
            .unwrap();
        let a = attrs.attributes().unwrap();
        assert_eq!(
            a[&QueueAttributeName::ApproximateNumberOfMessagesDelayed],
            "1"
        );
        assert_eq!(a[&QueueAttributeName::ApproximateNumberOfMessages], "1");
        c.purge_queue().queue_url(&url).send().await.unwrap();
        assert_eq!(srv.counts("errs").unwrap().in_queue(), 0);
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_ack_policies_over_sqs() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "7");
    within(30, async {
        for (name, policy) in [("rej", StaleAck::Reject), ("ign", StaleAck::Ignore), ("del", StaleAck::Delete), ("sqs", StaleAck::Sqs)] {
            let spec = QueueSpec {
                broker: BrokerConfig { visibility_timeout: 30 * S, max_receives: 0, stale_ack: policy },
                dead_letter_queue: None,
                fifo: None,
            };
            let url = srv.create_queue(name, spec).unwrap();
            c.send_message().queue_url(&url).message_body("m").send().await.unwrap();
            let r1 = c.receive_message().queue_url(&url).visibility_timeout(0).send().await.unwrap();
            let old = r1.messages()[0].receipt_handle().unwrap().to_string();
            let r2 = c.receive_message().queue_url(&url).send().await.unwrap();
            assert_eq!(r2.messages().len(), 1);
            let res = c.delete_message().queue_url(&url).receipt_handle(&old).send().await;
            let counts = srv.counts(name).unwrap();
            match policy {
                StaleAck::Reject => {
                    let e = res.unwrap_err().into_service_error();
                    assert!(matches!(e, DeleteMessageError::ReceiptHandleIsInvalid(_)), "{e:?}");
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
            let events = srv.take_events(name).unwrap();
            let stale = events.iter().filter(|e| matches!(e.kind, EventKind::Acked { worker: 7, outcome, .. } if outcome.is_stale())).count();
            assert_eq!(stale, 1, "{name}: the stale delete is recorded");
        }
    })
    .await;
    srv.shutdown().await;
}

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
    let config = ackbench::broker::sqs::SqsConfig {
        queues: vec![("emails".into(), spec)],
        ..Default::default()
    };
    let srv = ackbench::broker::sqs::SqsServer::bind("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let c = client(&srv.endpoint_url(), "worker-2");
    within(30, async {
        let url = c
            .get_queue_url()
            .queue_name("emails")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let dlq = c
            .get_queue_url()
            .queue_name("emails-dlq")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let attrs = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .unwrap();
        let a = attrs.attributes().unwrap();
        assert_eq!(a[&QueueAttributeName::VisibilityTimeout], "30");
        assert!(
            a[&QueueAttributeName::RedrivePolicy].contains("emails-dlq"),
            "{a:?}"
        );
        c.send_message()
            .queue_url(&url)
            .message_body("m")
            .send()
            .await
            .unwrap();
        for _ in 0..2 {
            let r = c
                .receive_message()
                .queue_url(&url)
                .visibility_timeout(0)
                .send()
                .await
                .unwrap();
            assert_eq!(r.messages().len(), 1);
        }
        let r = c
            .receive_message()
            .queue_url(&dlq)
            .wait_time_seconds(2)
            .send()
            .await
            .unwrap();
        assert_eq!(r.messages().len(), 1, "dead-lettered into the named DLQ");
        let events = srv.take_events("emails").unwrap();
        let delivered = events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Delivered { worker: 2, .. }))
            .count();
        assert_eq!(delivered, 2);
        assert!(
            srv.take_events("emails").unwrap().is_empty(),
            "events are taken once"
        );
        assert!(srv.take_events("nope").is_none());
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_latest_receipt_after_its_lease_ended_still_deletes_and_changes_visibility() {
    // Queues created over the API have `stale_ack: sqs`, what SQS does.
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let url = create(&c, "late").await;
        let receive = |vt: i32| {
            c.receive_message()
                .queue_url(&url)
                .visibility_timeout(vt)
                .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
                .send()
        };
        // 1. A delete with the latest handle after its 1 s lease ended, nobody having received
        //    the message since: success, and the message is deleted.
        c.send_message()
            .queue_url(&url)
            .message_body("a")
            .send()
            .await
            .unwrap();
        let h = receive(1).await.unwrap().messages()[0]
            .receipt_handle()
            .unwrap()
            .to_string();
        tokio::time::sleep(Duration::from_millis(1300)).await;
        assert_eq!(srv.counts("late").unwrap().visible, 1, "the lease ended");
        c.delete_message()
            .queue_url(&url)
            .receipt_handle(&h)
            .send()
            .await
            .unwrap();
        let counts = srv.counts("late").unwrap();
        assert_eq!((counts.visible, counts.deleted), (0, 1));
        assert!(
            receive(30).await.unwrap().messages().is_empty(),
            "deleted, not redelivered"
        );
        // 2. A visibility change with the latest handle after its lease ended: success, and the
        //    message is hidden again for the new timeout.
        c.send_message()
            .queue_url(&url)
            .message_body("b")
            .send()
            .await
            .unwrap();
        let h = receive(1).await.unwrap().messages()[0]
            .receipt_handle()
            .unwrap()
            .to_string();
        tokio::time::sleep(Duration::from_millis(1300)).await;
        c.change_message_visibility()
            .queue_url(&url)
            .receipt_handle(&h)
            .visibility_timeout(30)
            .send()
            .await
            .unwrap();
        assert!(
            receive(30).await.unwrap().messages().is_empty(),
            "hidden again"
        );
        assert_eq!(srv.counts("late").unwrap().leased, 1);
        c.delete_message()
            .queue_url(&url)
            .receipt_handle(&h)
            .send()
            .await
            .unwrap();
        assert_eq!(srv.counts("late").unwrap().deleted, 2);
        // 3. An older handle (received again since): success, the message is not deleted.
        c.send_message()
            .queue_url(&url)
            .message_body("c")
            .send()
            .await
            .unwrap();
        let old = receive(1).await.unwrap().messages()[0]
            .receipt_handle()
            .unwrap()
            .to_string();
        tokio::time::sleep(Duration::from_millis(1300)).await;
        let again = receive(1).await.unwrap();
        let m = &again.messages()[0];
        assert_eq!(
            m.attributes().unwrap()[&MessageSystemAttributeName::ApproximateReceiveCount],
            "2"
        );
        c.delete_message()
            .queue_url(&url)
            .receipt_handle(&old)
            .send()
            .await
            .unwrap();
        let counts = srv.counts("late").unwrap();
        assert_eq!(
            (counts.leased, counts.deleted),
            (1, 2),
            "the older handle deleted nothing"
        );
        let e = c
            .change_message_visibility()
            .queue_url(&url)
            .receipt_handle(&old)
            .visibility_timeout(30)
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
        let outcomes: Vec<AckOutcome> = srv
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
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_receive_count_carries_over_into_the_dead_letter_queue() {
    // Limit 2: two receives in `src`, then the DLQ's first receive reports 3 (SQS counts the
    // receives of every queue).
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let dlq = create(&c, "rc-dlq").await;
        let url = c
            .create_queue()
            .queue_name("rc")
            .attributes(
                QueueAttributeName::RedrivePolicy,
                r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:rc-dlq","maxReceiveCount":2}"#,
            )
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        c.send_message().queue_url(&url).message_body("p").send().await.unwrap();
        for _ in 0..2 {
            let r = c.receive_message().queue_url(&url).visibility_timeout(0).send().await.unwrap();
            assert_eq!(r.messages().len(), 1);
        }
        assert!(c.receive_message().queue_url(&url).send().await.unwrap().messages().is_empty());
        let count = |r: &aws_sdk_sqs::operation::receive_message::ReceiveMessageOutput| {
            r.messages()[0].attributes().unwrap()[&MessageSystemAttributeName::ApproximateReceiveCount].clone()
        };
        let r = c
            .receive_message()
            .queue_url(&dlq)
            .visibility_timeout(0)
            .wait_time_seconds(2)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .send()
            .await
            .unwrap();
        assert_eq!(count(&r), "3");
        let r = c
            .receive_message()
            .queue_url(&dlq)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .send()
            .await
            .unwrap();
        assert_eq!(count(&r), "4");
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_mib_messages_and_batches_and_one_purge_a_minute() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(60, async {
        let url = create(&c, "big").await;
        let attrs = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::MaximumMessageSize)
            .send()
            .await
            .unwrap();
        assert_eq!(
            attrs.attributes().unwrap()[&QueueAttributeName::MaximumMessageSize],
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
        let e = c
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("a"))
            .entries(entry("b"))
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert!(
            matches!(e, SendMessageBatchError::BatchRequestTooLong(_)),
            "{e:?}"
        );
        let ok = c
            .send_message_batch()
            .queue_url(&url)
            .entries(entry("a"))
            .send()
            .await
            .unwrap();
        assert_eq!(ok.successful().len(), 1);
        // One purge a minute: the second answers PurgeQueueInProgress and deletes nothing.
        c.purge_queue().queue_url(&url).send().await.unwrap();
        c.send_message()
            .queue_url(&url)
            .message_body("after")
            .send()
            .await
            .unwrap();
        let e = c
            .purge_queue()
            .queue_url(&url)
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert!(
            matches!(e, PurgeQueueError::PurgeQueueInProgress(_)),
            "{e:?}"
        );
        assert_eq!(
            srv.counts("big").unwrap().visible,
            1,
            "the refused purge deleted nothing"
        );
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_tags_and_dead_letter_source_queues() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        let url = c
            .create_queue()
            .queue_name("tagged")
            .tags("team", "mail")
            .tags("env", "test")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let tags = |c: &aws_sdk_sqs::Client, url: String| {
            let c = c.clone();
            async move {
                let out = c.list_queue_tags().queue_url(url).send().await.unwrap();
                let mut t: Vec<(String, String)> =
                    out.tags().into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
                t.sort();
                t
            }
        };
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(tags(&c, url.clone()).await, [pair("env", "test"), pair("team", "mail")]);
        c.tag_queue().queue_url(&url).tags("env", "prod").tags("owner", "ops").send().await.unwrap();
        c.untag_queue().queue_url(&url).tag_keys("team").tag_keys("absent").send().await.unwrap();
        assert_eq!(tags(&c, url.clone()).await, [pair("env", "prod"), pair("owner", "ops")]);
        let e = c
            .tag_queue()
            .queue_url(&url)
            .tags("aws:reserved", "x")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
        let untagged = create(&c, "plain").await;
        assert!(tags(&c, untagged).await.is_empty());
        // Two queues dead-letter into `dl`, one elsewhere.
        let dl = create(&c, "dl").await;
        create(&c, "dl-other").await;
        for (name, target) in [("src-b", "dl"), ("src-a", "dl"), ("src-c", "dl-other")] {
            c.create_queue()
                .queue_name(name)
                .attributes(
                    QueueAttributeName::RedrivePolicy,
                    format!(r#"{{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:{target}","maxReceiveCount":3}}"#),
                )
                .send()
                .await
                .unwrap();
        }
        let all = c.list_dead_letter_source_queues().queue_url(&dl).send().await.unwrap();
        let base = srv.endpoint_url();
        let q = |n: &str| format!("{base}/000000000000/{n}");
        assert_eq!(all.queue_urls(), [q("src-a"), q("src-b")]);
        let page = c.list_dead_letter_source_queues().queue_url(&dl).max_results(1).send().await.unwrap();
        assert_eq!((page.queue_urls(), page.next_token()), (&[q("src-a")][..], Some("src-a")));
        let next = c
            .list_dead_letter_source_queues()
            .queue_url(&dl)
            .max_results(1)
            .next_token("src-a")
            .send()
            .await
            .unwrap();
        assert_eq!((next.queue_urls(), next.next_token()), (&[q("src-b")][..], None));
        let none = c.list_dead_letter_source_queues().queue_url(&url).send().await.unwrap();
        assert!(none.queue_urls().is_empty());
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_queue_deduplicates_and_keeps_one_message_of_a_group_in_flight() {
    let srv = server().await;
    let c = client(&srv.endpoint_url(), "worker-1");
    within(30, async {
        // A .fifo name needs FifoQueue=true, and FifoQueue=true a .fifo name.
        let e = c
            .create_queue()
            .queue_name("orders.fifo")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
        let e = c
            .create_queue()
            .queue_name("orders")
            .attributes(QueueAttributeName::FifoQueue, "true")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
        let url = c
            .create_queue()
            .queue_name("orders.fifo")
            .attributes(QueueAttributeName::FifoQueue, "true")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let attrs = c
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .unwrap();
        let attrs = attrs.attributes().unwrap();
        assert_eq!(
            attrs
                .get(&QueueAttributeName::FifoQueue)
                .map(String::as_str),
            Some("true")
        );
        assert_eq!(
            attrs
                .get(&QueueAttributeName::ContentBasedDeduplication)
                .map(String::as_str),
            Some("false")
        );
        let send = |body: &str, group: &str, dedup: &str| {
            c.send_message()
                .queue_url(&url)
                .message_body(body)
                .message_group_id(group)
                .message_deduplication_id(dedup)
                .send()
        };
        // Two of group A, one of group B; a repeat of the first id is dropped and answered as
        // the first send was.
        let a1 = send("a1", "A", "order-1").await.unwrap();
        let a2 = send("a2", "A", "order-2").await.unwrap();
        let b1 = send("b1", "B", "order-3").await.unwrap();
        let again = send("a1 again", "A", "order-1").await.unwrap();
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
        let sys = m.attributes().unwrap();
        assert_eq!(
            sys.get(&MessageSystemAttributeName::MessageGroupId)
                .map(String::as_str),
            Some("A")
        );
        assert_eq!(
            sys.get(&MessageSystemAttributeName::MessageDeduplicationId)
                .map(String::as_str),
            Some("order-1")
        );
        assert_eq!(
            sys.get(&MessageSystemAttributeName::SequenceNumber)
                .map(String::as_str),
            Some(n1)
        );
        // Group A is blocked while a1 is in flight.
        let none = c.receive_message().queue_url(&url).send().await.unwrap();
        assert!(none.messages().is_empty());
        c.delete_message()
            .queue_url(&url)
            .receipt_handle(m.receipt_handle().unwrap())
            .send()
            .await
            .unwrap();
        let next = c.receive_message().queue_url(&url).send().await.unwrap();
        assert_eq!(next.messages()[0].body(), Some("a2"));
        // The id is still remembered after its message was deleted.
        let after = send("a1 once more", "A", "order-1").await.unwrap();
        assert_eq!(after.message_id(), a1.message_id());
        // A FIFO send needs a group, takes no delay of its own, and needs a deduplication id
        // without content-based deduplication.
        let e = c
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_deduplication_id("d")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("MissingParameter"), "{e:?}");
        let e = c
            .send_message()
            .queue_url(&url)
            .message_body("x")
            .message_group_id("A")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
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
        let cb = c
            .create_queue()
            .queue_name("content.fifo")
            .attributes(QueueAttributeName::FifoQueue, "true")
            .attributes(QueueAttributeName::ContentBasedDeduplication, "true")
            .send()
            .await
            .unwrap()
            .queue_url
            .unwrap();
        let one = c
            .send_message()
            .queue_url(&cb)
            .message_body("same")
            .message_group_id("g")
            .send()
            .await
            .unwrap();
        let two = c
            .send_message()
            .queue_url(&cb)
            .message_body("same")
            .message_group_id("g")
            .send()
            .await
            .unwrap();
        assert_eq!(one.message_id(), two.message_id());
        let counts = c
            .get_queue_attributes()
            .queue_url(&cb)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .send()
            .await
            .unwrap();
        assert_eq!(
            counts
                .attributes()
                .unwrap()
                .get(&QueueAttributeName::ApproximateNumberOfMessages)
                .map(String::as_str),
            Some("1")
        );
        // A standard queue takes no deduplication id.
        let plain = create(&c, "plain").await;
        let e = c
            .send_message()
            .queue_url(&plain)
            .message_body("x")
            .message_deduplication_id("d")
            .send()
            .await
            .unwrap_err()
            .into_service_error();
        assert_eq!(e.code(), Some("InvalidParameterValue"), "{e:?}");
    })
    .await;
    srv.shutdown().await;
}
