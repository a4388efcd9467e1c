//! The request parser: both protocols to the same action, and AWS's error for each malformation.

use http::HeaderMap;
use proptest::prelude::*;

use crate::broker::sqs::error::ErrorCode;
use crate::broker::sqs::parse::access_key;
use crate::broker::sqs::{parse_request, Action, Protocol};

fn json_headers(action: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        "x-amz-target",
        format!("AmazonSQS.{action}").parse().unwrap(),
    );
    h.insert(
        "content-type",
        "application/x-amz-json-1.0".parse().unwrap(),
    );
    h
}

fn form_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        "content-type",
        "application/x-www-form-urlencoded".parse().unwrap(),
    );
    h
}

fn json(action: &str, body: &str) -> Result<Action, ErrorCode> {
    parse_request("/", &json_headers(action), body.as_bytes())
        .map(|r| r.action)
        .map_err(|e| e.code)
}

fn query(body: &str) -> Result<Action, ErrorCode> {
    parse_request("/", &form_headers(), body.as_bytes())
        .map(|r| r.action)
        .map_err(|e| e.code)
}

#[test]
fn both_protocols_parse_to_the_same_action() {
    let j = json(
        "SendMessage",
        r#"{"QueueUrl":"http://h/000000000000/q","MessageBody":"hi","DelaySeconds":3,
            "MessageAttributes":{"a":{"DataType":"String","StringValue":"v"}}}"#,
    );
    let q = query(
        "Action=SendMessage&QueueUrl=http%3A%2F%2Fh%2F000000000000%2Fq&MessageBody=hi&DelaySeconds=3\
         &MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=v",
    );
    assert!(
        matches!(&j, Ok(Action::SendMessage { queue, message }) if queue == "q" && message.delay_s == Some(3))
    );
    assert_eq!(j, q);

    let j = json(
        "DeleteMessageBatch",
        r#"{"QueueUrl":"q","Entries":[{"Id":"a","ReceiptHandle":"r1"},{"Id":"b","ReceiptHandle":"r2"}]}"#,
    );
    let q = query(
        "Action=DeleteMessageBatch&QueueUrl=q&DeleteMessageBatchRequestEntry.2.Id=b\
         &DeleteMessageBatchRequestEntry.2.ReceiptHandle=r2&DeleteMessageBatchRequestEntry.1.Id=a\
         &DeleteMessageBatchRequestEntry.1.ReceiptHandle=r1",
    );
    assert_eq!(j, q);
    let j = json(
        "CreateQueue",
        r#"{"QueueName":"q","Attributes":{"VisibilityTimeout":"5"}}"#,
    );
    let q = query(
        "Action=CreateQueue&QueueName=q&Attribute.1.Name=VisibilityTimeout&Attribute.1.Value=5",
    );
    assert_eq!(j, q);
    let j = json(
        "ReceiveMessage",
        r#"{"QueueUrl":"q","AttributeNames":["All"],"MaxNumberOfMessages":10}"#,
    );
    let q = query("Action=ReceiveMessage&QueueUrl=q&AttributeName.1=All&MaxNumberOfMessages=10");
    assert_eq!(j, q);
}

#[test]
fn tags_parse_alike_in_both_protocols() {
    let tags: std::collections::BTreeMap<String, String> = [("team", "mail"), ("env", "")]
        .map(|(k, v)| (k.into(), v.into()))
        .into();
    let j = json(
        "TagQueue",
        r#"{"QueueUrl":"q","Tags":{"team":"mail","env":""}}"#,
    );
    let q = query("Action=TagQueue&QueueUrl=q&Tag.1.Key=team&Tag.1.Value=mail&Tag.2.Key=env");
    let want = Action::TagQueue {
        queue: "q".into(),
        tags: tags.clone(),
    };
    assert_eq!((j, q), (Ok(want.clone()), Ok(want)));
    let want = Action::UntagQueue {
        queue: "q".into(),
        keys: vec!["team".into(), "env".into()],
    };
    let j = json("UntagQueue", r#"{"QueueUrl":"q","TagKeys":["team","env"]}"#);
    let q = query("Action=UntagQueue&QueueUrl=q&TagKey.2=env&TagKey.1=team");
    assert_eq!((j, q), (Ok(want.clone()), Ok(want)));
    // CreateQueue's member is `tags` in JSON, `Tag.N` in the query protocol.
    let want = Action::CreateQueue {
        name: "jobs".into(),
        attributes: Default::default(),
        tags,
    };
    let j = json(
        "CreateQueue",
        r#"{"QueueName":"jobs","tags":{"team":"mail","env":""}}"#,
    );
    let q = query("Action=CreateQueue&QueueName=jobs&Tag.1.Key=team&Tag.1.Value=mail&Tag.2.Key=env&Tag.2.Value=");
    assert_eq!((j, q), (Ok(want.clone()), Ok(want)));
}

#[test]
fn query_requests_may_name_the_queue_in_the_path() {
    let r = parse_request("/000000000000/jobs", &form_headers(), b"Action=PurgeQueue").unwrap();
    assert_eq!(r.protocol, Protocol::Query);
    assert_eq!(
        r.action,
        Action::PurgeQueue {
            queue: "jobs".into()
        }
    );
}

#[test]
fn each_malformation_gets_its_error() {
    use ErrorCode::*;
    let cases: &[(&str, &str, ErrorCode)] = &[
        ("SendMessage", "{not json", SerializationException),
        ("SendMessage", "[1,2]", SerializationException),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":5}"#,
            SerializationException,
        ),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":"x","DelaySeconds":"soon"}"#,
            SerializationException,
        ),
        ("SendMessage", r#"{"QueueUrl":"q"}"#, MissingParameter),
        ("SendMessage", r#"{"MessageBody":"x"}"#, MissingParameter),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":""}"#,
            MissingParameter,
        ),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":"x","DelaySeconds":901}"#,
            InvalidParameterValue,
        ),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":"\u0000"}"#,
            InvalidMessageContents,
        ),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":"x","MessageAttributes":{"AWS.x":{"DataType":"String","StringValue":"v"}}}"#,
            InvalidParameterValue,
        ),
        (
            "SendMessage",
            r#"{"QueueUrl":"q","MessageBody":"x","MessageAttributes":{"n":{"DataType":"Number","StringValue":"abc"}}}"#,
            InvalidParameterValue,
        ),
        (
            "ReceiveMessage",
            r#"{"QueueUrl":"q","MaxNumberOfMessages":0}"#,
            InvalidParameterValue,
        ),
        (
            "ReceiveMessage",
            r#"{"QueueUrl":"q","WaitTimeSeconds":21}"#,
            InvalidParameterValue,
        ),
        (
            "ReceiveMessage",
            r#"{"QueueUrl":"q","VisibilityTimeout":-1}"#,
            InvalidParameterValue,
        ),
        (
            "ReceiveMessage",
            r#"{"QueueUrl":"q","AttributeNames":["Nope"]}"#,
            InvalidAttributeName,
        ),
        (
            "DeleteMessageBatch",
            r#"{"QueueUrl":"q","Entries":[]}"#,
            EmptyBatchRequest,
        ),
        (
            "DeleteMessageBatch",
            r#"{"QueueUrl":"q"}"#,
            EmptyBatchRequest,
        ),
        (
            "DeleteMessageBatch",
            r#"{"QueueUrl":"q","Entries":[{"Id":"a","ReceiptHandle":"r"},{"Id":"a","ReceiptHandle":"r"}]}"#,
            BatchEntryIdsNotDistinct,
        ),
        (
            "DeleteMessageBatch",
            r#"{"QueueUrl":"q","Entries":[{"Id":"a b","ReceiptHandle":"r"}]}"#,
            InvalidBatchEntryId,
        ),
        (
            "ChangeMessageVisibility",
            r#"{"QueueUrl":"q","ReceiptHandle":"r"}"#,
            MissingParameter,
        ),
        (
            "CreateQueue",
            r#"{"QueueName":"bad name"}"#,
            InvalidParameterValue,
        ),
        (
            "CreateQueue",
            r#"{"QueueName":"bad name.fifo"}"#,
            InvalidParameterValue,
        ),
        ("NoSuchThing", "{}", UnknownOperation),
        ("TagQueue", r#"{"QueueUrl":"q"}"#, MissingParameter),
        ("UntagQueue", r#"{"QueueUrl":"q"}"#, MissingParameter),
        ("ListQueueTags", "{}", MissingParameter),
        (
            "ListDeadLetterSourceQueues",
            r#"{"QueueUrl":"q","MaxResults":0}"#,
            InvalidParameterValue,
        ),
        ("AddPermission", r#"{"QueueUrl":"q"}"#, UnsupportedOperation),
    ];
    for (action, body, want) in cases {
        assert_eq!(json(action, body).err(), Some(*want), "{action} {body}");
    }
    let many: Vec<String> = (0..11)
        .map(|i| format!(r#"{{"Id":"e{i}","ReceiptHandle":"r"}}"#))
        .collect();
    let body = format!(r#"{{"QueueUrl":"q","Entries":[{}]}}"#, many.join(","));
    assert_eq!(
        json("DeleteMessageBatch", &body).err(),
        Some(TooManyEntriesInBatchRequest)
    );

    assert_eq!(
        query("QueueUrl=q").err(),
        Some(MissingParameter),
        "no Action"
    );
    assert_eq!(query("Action=Frobnicate").err(), Some(InvalidAction));
    assert_eq!(
        query("Action=ReceiveMessage&QueueUrl=q&MaxNumberOfMessages=many").err(),
        Some(InvalidParameterValue)
    );
    assert_eq!(
        query("Action=SendMessage&QueueUrl=q&MessageBody=x&A..b=1").err(),
        Some(InvalidParameterValue)
    );
    assert_eq!(
        query("Action=SendMessage&QueueUrl=q&MessageBody=x&MessageBody.1=y").err(),
        Some(InvalidParameterValue)
    );

    let mut wrong = json_headers("SendMessage");
    wrong.insert("content-type", "text/plain".parse().unwrap());
    let e = parse_request("/", &wrong, b"{}").unwrap_err();
    assert_eq!(e.code, MalformedRequest);
    let mut other = HeaderMap::new();
    other.insert("content-type", "application/json".parse().unwrap());
    assert_eq!(
        parse_request("/", &other, b"{}").unwrap_err().code,
        MalformedRequest
    );
}

#[test]
fn a_form_that_is_not_utf8_is_refused_as_the_json_protocol_refuses_it() {
    use ErrorCode::SerializationException;
    let q = "Action=SendMessage&QueueUrl=/000000000000/q&MessageBody=";
    // A percent-encoded byte that starts no UTF-8 character, a lone continuation byte, a cut
    // two-byte character, and a bad byte in a key.
    for bad in ["%FF", "ok%80", "caf%C3", "x&Bad%FEKey=1"] {
        assert_eq!(
            query(&format!("{q}{bad}")),
            Err(SerializationException),
            "{bad}"
        );
    }
    let raw = [q.as_bytes(), &[0xC3, 0x28]].concat();
    let e = parse_request("/", &form_headers(), &raw).unwrap_err();
    assert_eq!(e.code, SerializationException);
    assert!(e.message.contains("'MessageBody'"), "{}", e.message);
    // The JSON protocol gives the same error for the same bytes.
    let json_body = [
        &br#"{"QueueUrl": "/000000000000/q", "MessageBody": ""#[..],
        &[0xFF],
        b"\"}",
    ]
    .concat();
    let e = parse_request("/", &json_headers("SendMessage"), &json_body).unwrap_err();
    assert_eq!(e.code, SerializationException);
    // U+FFFD itself, percent-encoded, and other characters are text like any other.
    for good in ["%EF%BF%BD", "caf%C3%A9", "a+b%2Bc", "100%", "%zz"] {
        match query(&format!("{q}{good}")) {
            Ok(Action::SendMessage { .. }) => {}
            other => panic!("{good}: {other:?}"),
        }
    }
}

#[test]
fn the_access_key_id_names_the_worker() {
    let mut h = json_headers("ListQueues");
    h.insert(
        "authorization",
        "AWS4-HMAC-SHA256 Credential=worker-4/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=ab"
            .parse()
            .unwrap(),
    );
    assert_eq!(access_key(&h).as_deref(), Some("worker-4"));
    assert_eq!(
        parse_request("/", &h, b"{}").unwrap().access_key.as_deref(),
        Some("worker-4")
    );
    let form = parse_request("/", &form_headers(), b"Action=ListQueues&AWSAccessKeyId=7").unwrap();
    assert_eq!(form.access_key.as_deref(), Some("7"));
    assert_eq!(access_key(&HeaderMap::new()), None);
}

proptest! {
    #[test]
    fn arbitrary_bodies_never_panic(body in proptest::collection::vec(any::<u8>(), 0..300), action in "[A-Za-z]{0,30}") {
        let _ = parse_request("/", &json_headers(&action), &body);
        let _ = parse_request("/a/b", &form_headers(), &body);
    }

    #[test]
    fn arbitrary_forms_never_panic(pairs in proptest::collection::vec(("[A-Za-z0-9.]{0,40}", ".{0,20}"), 0..12)) {
        let body: String = pairs.iter().map(|(k, v)| format!("{k}={v}&")).collect();
        let _ = parse_request("/", &form_headers(), format!("Action=SendMessageBatch&{body}").as_bytes());
        let _ = parse_request("/", &form_headers(), format!("Action=ReceiveMessage&{body}").as_bytes());
    }
}
