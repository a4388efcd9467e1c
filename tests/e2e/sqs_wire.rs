//! The SQS endpoint on the wire: a corpus of malformed requests, each answered with an
//! AWS-shaped 400, and the query protocol (form in, XML out).

use serde_json::json;

use crate::sqs_support::{json_call, post, query_call, server, within, AUTH};

/// (what, X-Amz-Target, Content-Type, body, expected `__type`).
fn corpus(
    queue_url: &str,
) -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    Vec<u8>,
    &'static str,
)> {
    const J: &str = "application/x-amz-json-1.0";
    let q = queue_url.to_string();
    vec![
        ("bad JSON", "AmazonSQS.SendMessage", J, b"{\"QueueUrl\": ".to_vec(), "com.amazon.coral.service#SerializationException"),
        ("not an object", "AmazonSQS.SendMessage", J, b"\"hello\"".to_vec(), "com.amazon.coral.service#SerializationException"),
        ("binary garbage", "AmazonSQS.ReceiveMessage", J, vec![0xff, 0xfe, 0x00, 0x01], "com.amazon.coral.service#SerializationException"),
        ("wrong type", "AmazonSQS.ReceiveMessage", J, json!({"QueueUrl": q, "MaxNumberOfMessages": "ten"}).to_string().into_bytes(), "com.amazon.coral.service#SerializationException"),
        ("wrong type in entries", "AmazonSQS.DeleteMessageBatch", J, json!({"QueueUrl": q, "Entries": "all"}).to_string().into_bytes(), "com.amazon.coral.service#SerializationException"),
        ("missing QueueUrl", "AmazonSQS.SendMessage", J, json!({"MessageBody": "x"}).to_string().into_bytes(), "com.amazonaws.sqs#MissingParameter"),
        ("missing MessageBody", "AmazonSQS.SendMessage", J, json!({"QueueUrl": q}).to_string().into_bytes(), "com.amazonaws.sqs#MissingParameter"),
        ("missing ReceiptHandle", "AmazonSQS.DeleteMessage", J, json!({"QueueUrl": q}).to_string().into_bytes(), "com.amazonaws.sqs#MissingParameter"),
        ("unknown action", "AmazonSQS.StealMessages", J, b"{}".to_vec(), "com.amazon.coral.service#UnknownOperationException"),
        ("other service", "AmazonSNS.Publish", J, b"{}".to_vec(), "com.amazon.coral.service#UnknownOperationException"),
        ("wrong content type", "AmazonSQS.ListQueues", "text/plain", b"{}".to_vec(), "com.amazonaws.sqs#MalformedRequest"),
        ("huge body", "AmazonSQS.SendMessage", J, vec![b' '; 9 * 1024 * 1024], "com.amazonaws.sqs#MalformedRequest"),
        ("message too long", "AmazonSQS.SendMessage", J, json!({"QueueUrl": q, "MessageBody": "x".repeat(1_048_577)}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidParameterValue"),
        ("forged receipt", "AmazonSQS.DeleteMessage", J, json!({"QueueUrl": q, "ReceiptHandle": "AQAAAAEAAAABAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAA"}).to_string().into_bytes(), "com.amazonaws.sqs#ReceiptHandleIsInvalid"),
        ("garbage receipt", "AmazonSQS.ChangeMessageVisibility", J, json!({"QueueUrl": q, "ReceiptHandle": "💥", "VisibilityTimeout": 5}).to_string().into_bytes(), "com.amazonaws.sqs#ReceiptHandleIsInvalid"),
        ("no such queue", "AmazonSQS.PurgeQueue", J, json!({"QueueUrl": "http://x/000000000000/none"}).to_string().into_bytes(), "com.amazonaws.sqs#QueueDoesNotExist"),
        ("too many entries", "AmazonSQS.SendMessageBatch", J, json!({"QueueUrl": q, "Entries": (0..11).map(|i| json!({"Id": format!("e{i}"), "MessageBody": "x"})).collect::<Vec<_>>()}).to_string().into_bytes(), "com.amazonaws.sqs#TooManyEntriesInBatchRequest"),
        ("empty batch", "AmazonSQS.SendMessageBatch", J, json!({"QueueUrl": q, "Entries": []}).to_string().into_bytes(), "com.amazonaws.sqs#EmptyBatchRequest"),
        ("repeated ids", "AmazonSQS.ChangeMessageVisibilityBatch", J, json!({"QueueUrl": q, "Entries": [{"Id": "a", "ReceiptHandle": "r", "VisibilityTimeout": 1}, {"Id": "a", "ReceiptHandle": "r", "VisibilityTimeout": 1}]}).to_string().into_bytes(), "com.amazonaws.sqs#BatchEntryIdsNotDistinct"),
        ("batch over 1 MiB", "AmazonSQS.SendMessageBatch", J, json!({"QueueUrl": q, "Entries": [{"Id": "a", "MessageBody": "x".repeat(600_000)}, {"Id": "b", "MessageBody": "y".repeat(600_000)}]}).to_string().into_bytes(), "com.amazonaws.sqs#BatchRequestTooLong"),
        ("maximum message size over 1 MiB", "AmazonSQS.SetQueueAttributes", J, json!({"QueueUrl": q, "Attributes": {"MaximumMessageSize": "1048577"}}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidAttributeValue"),
        ("missing Tags", "AmazonSQS.TagQueue", J, json!({"QueueUrl": q}).to_string().into_bytes(), "com.amazonaws.sqs#MissingParameter"),
        ("reserved tag prefix", "AmazonSQS.TagQueue", J, json!({"QueueUrl": q, "Tags": {"aws:owner": "x"}}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidParameterValue"),
        ("tag value too long", "AmazonSQS.CreateQueue", J, json!({"QueueName": "tag-long", "tags": {"k": "v".repeat(257)}}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidParameterValue"),
        ("missing TagKeys", "AmazonSQS.UntagQueue", J, json!({"QueueUrl": q}).to_string().into_bytes(), "com.amazonaws.sqs#MissingParameter"),
        ("tags of no queue", "AmazonSQS.ListQueueTags", J, json!({"QueueUrl": "http://x/000000000000/none"}).to_string().into_bytes(), "com.amazonaws.sqs#QueueDoesNotExist"),
        ("sources of no queue", "AmazonSQS.ListDeadLetterSourceQueues", J, json!({"QueueUrl": "http://x/000000000000/none"}).to_string().into_bytes(), "com.amazonaws.sqs#QueueDoesNotExist"),
        ("unsupported operation", "AmazonSQS.AddPermission", J, json!({"QueueUrl": q}).to_string().into_bytes(), "com.amazonaws.sqs#UnsupportedOperation"),
        ("bad attribute name", "AmazonSQS.GetQueueAttributes", J, json!({"QueueUrl": q, "AttributeNames": ["Colour"]}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidAttributeName"),
        ("bad attribute value", "AmazonSQS.SetQueueAttributes", J, json!({"QueueUrl": q, "Attributes": {"VisibilityTimeout": "-3"}}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidAttributeValue"),
        ("bad redrive policy", "AmazonSQS.SetQueueAttributes", J, json!({"QueueUrl": q, "Attributes": {"RedrivePolicy": "{\"maxReceiveCount\": 2}"}}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidAttributeValue"),
        ("unknown DLQ", "AmazonSQS.SetQueueAttributes", J, json!({"QueueUrl": q, "Attributes": {"RedrivePolicy": "{\"deadLetterTargetArn\": \"arn:aws:sqs:us-east-1:000000000000:nope\", \"maxReceiveCount\": 2}"}}).to_string().into_bytes(), "com.amazonaws.sqs#InvalidAttributeValue"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_aws_shaped_400s() {
    let srv = server().await;
    let endpoint = srv.endpoint_url();
    within(60, async {
        let created = json_call(&endpoint, "CreateQueue", &json!({"QueueName": "corpus"})).await;
        assert_eq!(created.status, 200, "{}", created.body);
        let url = created.json()["QueueUrl"].as_str().unwrap().to_string();
        let cases = corpus(&url);
        let n = cases.len();
        for (what, target, content_type, body, want) in cases {
            let r = post(
                &endpoint,
                "/",
                &[
                    ("x-amz-target", target),
                    ("content-type", content_type),
                    ("authorization", AUTH),
                ],
                body,
            )
            .await;
            assert_eq!(r.status, 400, "{what}: {}", r.body);
            assert_eq!(r.json()["__type"], want, "{what}: {}", r.body);
            assert!(
                r.json()["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{what}: a message"
            );
            let qe = r
                .query_error
                .unwrap_or_else(|| panic!("{what}: x-amzn-query-error"));
            assert!(qe.ends_with(";Sender"), "{what}: {qe}");
            assert!(
                r.content_type.starts_with("application/x-amz-json-1.0"),
                "{what}"
            );
        }
        // The server still serves after the corpus.
        let ok = json_call(&endpoint, "ListQueues", &json!({})).await;
        assert_eq!(ok.status, 200);
        println!("malformed corpus: {n} requests, each answered 400 in AWS's shape");
    })
    .await;
    srv.shutdown().await;
}

/// The text of the first `<tag>` in `xml`.
fn xml_text<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{tag}>"))? + start;
    Some(&xml[start..end])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_protocol_round_trip_and_errors() {
    let srv = server().await;
    let endpoint = srv.endpoint_url();
    within(60, async {
        let r = query_call(
            &endpoint,
            &[
                ("Action", "CreateQueue"),
                ("QueueName", "legacy"),
                ("Attribute.1.Name", "VisibilityTimeout"),
                ("Attribute.1.Value", "12"),
            ],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(r.content_type.starts_with("text/xml"));
        let url = xml_text(&r.body, "QueueUrl").unwrap().to_string();
        assert_eq!(url, srv.queue_url("legacy"));

        let body = "a <tagged> & \"quoted\" body\r\n";
        let r = query_call(
            &endpoint,
            &[
                ("Action", "SendMessage"),
                ("QueueUrl", &url),
                ("MessageBody", body),
                ("MessageAttribute.1.Name", "kind"),
                ("MessageAttribute.1.Value.DataType", "String"),
                ("MessageAttribute.1.Value.StringValue", "order"),
            ],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(xml_text(&r.body, "MD5OfMessageAttributes").is_some());
        let r = query_call(
            &endpoint,
            &[
                ("Action", "ReceiveMessage"),
                ("QueueUrl", &url),
                ("AttributeName.1", "All"),
                ("MessageAttributeName.1", "All"),
                ("WaitTimeSeconds", "1"),
            ],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(r.body.contains("<ReceiveMessageResponse"), "{}", r.body);
        assert_eq!(
            xml_text(&r.body, "Body"),
            Some("a &lt;tagged&gt; &amp; &quot;quoted&quot; body&#13;\n")
        );
        assert!(
            r.body
                .contains("<Name>ApproximateReceiveCount</Name><Value>1</Value>"),
            "{}",
            r.body
        );
        assert!(
            r.body.contains("<StringValue>order</StringValue>"),
            "{}",
            r.body
        );
        let receipt = xml_text(&r.body, "ReceiptHandle").unwrap().to_string();

        let r = query_call(
            &endpoint,
            &[
                ("Action", "GetQueueAttributes"),
                ("QueueUrl", &url),
                ("AttributeName.1", "ApproximateNumberOfMessagesNotVisible"),
            ],
        )
        .await;
        assert!(
            r.body
                .contains("<Name>ApproximateNumberOfMessagesNotVisible</Name><Value>1</Value>"),
            "{}",
            r.body
        );
        let r = query_call(
            &endpoint,
            &[
                ("Action", "DeleteMessage"),
                ("QueueUrl", &url),
                ("ReceiptHandle", &receipt),
            ],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(r.body.contains("<DeleteMessageResponse"), "{}", r.body);
        assert_eq!(srv.counts("legacy").unwrap().deleted, 1);

        // Errors come as XML ErrorResponses with the query codes.
        for (pairs, code) in [
            (
                vec![
                    ("Action", "DeleteMessage"),
                    ("QueueUrl", url.as_str()),
                    ("ReceiptHandle", "forged"),
                ],
                "ReceiptHandleIsInvalid",
            ),
            (
                vec![("Action", "GetQueueUrl"), ("QueueName", "none")],
                "AWS.SimpleQueueService.NonExistentQueue",
            ),
            (vec![("Action", "Explode")], "InvalidAction"),
            (
                vec![("Action", "SendMessage"), ("QueueUrl", url.as_str())],
                "MissingParameter",
            ),
            (
                vec![
                    ("Action", "ReceiveMessage"),
                    ("QueueUrl", url.as_str()),
                    ("MaxNumberOfMessages", "11"),
                ],
                "InvalidParameterValue",
            ),
            (
                vec![("Action", "DeleteMessageBatch"), ("QueueUrl", url.as_str())],
                "AWS.SimpleQueueService.EmptyBatchRequest",
            ),
        ] {
            let r = query_call(&endpoint, &pairs).await;
            assert_eq!(r.status, 400, "{pairs:?}: {}", r.body);
            assert!(r.body.contains("<ErrorResponse"), "{}", r.body);
            assert_eq!(xml_text(&r.body, "Code"), Some(code), "{}", r.body);
            assert_eq!(xml_text(&r.body, "Type"), Some("Sender"));
        }
        // A form whose decoded bytes are not UTF-8 is refused, as the JSON protocol refuses them
        // (its SerializationException is the query protocol's MalformedInput), and nothing is
        // sent: the queue, emptied above, stays empty.
        for body in [
            format!("Action=SendMessage&QueueUrl={url}&MessageBody=caf%C3").into_bytes(),
            [format!("Action=SendMessage&QueueUrl={url}&MessageBody=").as_bytes(), &[0xFF]].concat(),
        ] {
            let form = [("content-type", "application/x-www-form-urlencoded"), ("authorization", AUTH)];
            let r = post(&endpoint, "/", &form, body).await;
            assert_eq!(r.status, 400, "{}", r.body);
            assert_eq!(xml_text(&r.body, "Code"), Some("MalformedInput"), "{}", r.body);
            assert!(r.body.contains("not valid UTF-8"), "{}", r.body);
        }
        let c = srv.counts("legacy").unwrap();
        assert_eq!((c.visible, c.delayed, c.leased), (0, 0, 0));
        // Tags and dead-letter sources in the query protocol.
        let r = query_call(
            &endpoint,
            &[
                ("Action", "CreateQueue"),
                ("QueueName", "legacy-src"),
                ("Tag.1.Key", "team"),
                ("Tag.1.Value", "mail"),
                ("Attribute.1.Name", "RedrivePolicy"),
                (
                    "Attribute.1.Value",
                    r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:legacy","maxReceiveCount":3}"#,
                ),
            ],
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let src = xml_text(&r.body, "QueueUrl").unwrap().to_string();
        let r = query_call(&endpoint, &[("Action", "TagQueue"), ("QueueUrl", &src), ("Tag.1.Key", "env"), ("Tag.1.Value", "prod")]).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let r = query_call(&endpoint, &[("Action", "ListQueueTags"), ("QueueUrl", &src)]).await;
        assert!(
            r.body.contains("<ListQueueTagsResult><Tag><Key>env</Key><Value>prod</Value></Tag><Tag><Key>team</Key><Value>mail</Value></Tag></ListQueueTagsResult>"),
            "{}",
            r.body
        );
        let r = query_call(&endpoint, &[("Action", "UntagQueue"), ("QueueUrl", &src), ("TagKey.1", "team")]).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let r = query_call(&endpoint, &[("Action", "ListQueueTags"), ("QueueUrl", &src)]).await;
        assert!(!r.body.contains("<Key>team</Key>"), "{}", r.body);
        let r = query_call(&endpoint, &[("Action", "ListDeadLetterSourceQueues"), ("QueueUrl", &url)]).await;
        assert!(
            r.body.contains(&format!("<ListDeadLetterSourceQueuesResult><QueueUrl>{src}</QueueUrl></ListDeadLetterSourceQueuesResult>")),
            "{}",
            r.body
        );
        // One purge a minute: the second answers PurgeQueueInProgress.
        let purge = [("Action", "PurgeQueue"), ("QueueUrl", src.as_str())];
        assert_eq!(query_call(&endpoint, &purge).await.status, 200);
        let r = query_call(&endpoint, &purge).await;
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(
            xml_text(&r.body, "Code"),
            Some("AWS.SimpleQueueService.PurgeQueueInProgress"),
            "{}",
            r.body
        );
        let r = json_call(&endpoint, "PurgeQueue", &json!({"QueueUrl": src})).await;
        assert_eq!(r.json()["__type"], "com.amazonaws.sqs#PurgeQueueInProgress", "{}", r.body);

        // A GET with the form in the query string (older SDKs) works too.
        let r = reqwest::Client::new()
            .get(format!("{endpoint}/?Action=ListQueues&QueueNamePrefix=leg"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let text = r.text().await.unwrap();
        assert_eq!(xml_text(&text, "QueueUrl"), Some(url.as_str()));
    })
    .await;
    srv.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_answers_open_long_polls() {
    let srv = server().await;
    let endpoint = srv.endpoint_url();
    let created = json_call(&endpoint, "CreateQueue", &json!({"QueueName": "quiet"})).await;
    let url = created.json()["QueueUrl"].as_str().unwrap().to_string();
    let poll = tokio::spawn(async move {
        let r = json_call(
            &endpoint,
            "ReceiveMessage",
            &json!({"QueueUrl": url, "WaitTimeSeconds": 20}),
        )
        .await;
        (r.status, r.body)
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let t0 = std::time::Instant::now();
    within(10, srv.shutdown()).await;
    let (status, body) = within(10, poll).await.unwrap();
    assert_eq!(
        (status, body.as_str()),
        (200, "{}"),
        "the open long poll is answered, empty"
    );
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(3),
        "shutdown took {:?}",
        t0.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_that_records_no_events_keeps_none() {
    let config = ackbench::internals::serve::SqsConfig {
        record_events: false,
        ..Default::default()
    };
    let srv = ackbench::internals::serve::SqsServer::bind("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let endpoint = srv.endpoint_url();
    within(30, async {
        let created = json_call(&endpoint, "CreateQueue", &json!({"QueueName": "q"})).await;
        let url = created.json()["QueueUrl"].as_str().unwrap().to_string();
        json_call(
            &endpoint,
            "SendMessage",
            &json!({"QueueUrl": url, "MessageBody": "m"}),
        )
        .await;
        let got = json_call(&endpoint, "ReceiveMessage", &json!({"QueueUrl": url})).await;
        assert_eq!(got.json()["Messages"].as_array().map(Vec::len), Some(1));
        assert_eq!(srv.take_events("q"), Some(Vec::new()));
    })
    .await;
    srv.shutdown().await;
}
