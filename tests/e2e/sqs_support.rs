//! Helpers of the SQS endpoint tests: a server on a free loopback port, SDK clients that sign
//! as a given worker, and raw HTTP for requests no SDK would send.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;

use ackbench::internals::serve::{SqsConfig, SqsServer};
use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::operation::send_message::SendMessageOutput;
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use serde_json::Value;

/// A server on 127.0.0.1 with a free port and the default configuration.
pub async fn server() -> SqsServer {
    SqsServer::bind(
        "127.0.0.1:0".parse().expect("address"),
        SqsConfig::default(),
    )
    .await
    .expect("the SQS endpoint binds to loopback")
}

/// An aws-sdk-sqs client for `endpoint` whose access key id is `akid` (the worker's identity).
pub fn client(endpoint: &str, akid: &str) -> aws_sdk_sqs::Client {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(
            akid,
            "secret",
            None,
            None,
            "ackbench-test",
        ))
        .http_client(aws_smithy_http_client::Builder::new().build_http())
        .build();
    aws_sdk_sqs::Client::from_conf(conf)
}

/// The raw answer to a request: status, headers and body.
pub struct Raw {
    pub status: u16,
    pub query_error: Option<String>,
    pub content_type: String,
    pub body: String,
}

impl Raw {
    /// The JSON body (panics with the body if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("JSON answer ({e}): {}", self.body))
    }
}

/// POSTs `body` to `endpoint` + `path` with `headers`.
pub async fn post(endpoint: &str, path: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Raw {
    let mut req = reqwest::Client::new()
        .post(format!("{endpoint}{path}"))
        .timeout(Duration::from_secs(30))
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("the endpoint answers");
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let query_error = header("x-amzn-query-error");
    let content_type = header("content-type").unwrap_or_default();
    let body = resp.text().await.expect("a readable body");
    Raw {
        status,
        query_error,
        content_type,
        body,
    }
}

/// A JSON-protocol request for `action` with a JSON body.
pub async fn json_call(endpoint: &str, action: &str, body: &Value) -> Raw {
    let target = format!("AmazonSQS.{action}");
    post(
        endpoint,
        "/",
        &[
            ("x-amz-target", target.as_str()),
            ("content-type", "application/x-amz-json-1.0"),
            ("authorization", AUTH),
        ],
        body.to_string().into_bytes(),
    )
    .await
}

/// A query-protocol request with form `pairs`.
pub async fn query_call(endpoint: &str, pairs: &[(&str, &str)]) -> Raw {
    let body = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect::<Vec<_>>()
        .join("&");
    post(
        endpoint,
        "/",
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("authorization", AUTH),
        ],
        body.into_bytes(),
    )
    .await
}

/// Percent-encodes a form component.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// SigV4-shaped credentials of worker 1 (signatures are not checked).
pub const AUTH: &str = "AWS4-HMAC-SHA256 Credential=worker-1/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00";

/// Runs `f` with a deadline, so that a hung endpoint fails the test instead of stalling CI.
pub async fn within<F: std::future::Future>(secs: u64, f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(secs), f)
        .await
        .expect("finished in time")
}

/// What an SDK conformance test works with: an endpoint of its own and an aws-sdk-sqs client
/// signing as one worker, with the calls the tests make again and again.
pub struct Sqs {
    pub srv: SqsServer,
    pub c: aws_sdk_sqs::Client,
}

/// A received message, as the SDK gives it.
pub type Message = aws_sdk_sqs::types::Message;

impl Sqs {
    /// An endpoint with the default configuration and a client signing as `akid`.
    pub async fn start(akid: &str) -> Sqs {
        Sqs::with(SqsConfig::default(), akid).await
    }

    /// An endpoint with `config` and a client signing as `akid`.
    pub async fn with(config: SqsConfig, akid: &str) -> Sqs {
        let srv = SqsServer::bind("127.0.0.1:0".parse().expect("address"), config)
            .await
            .expect("the SQS endpoint binds to loopback");
        let c = client(&srv.endpoint_url(), akid);
        Sqs { srv, c }
    }

    /// CreateQueue `name` with `attributes`; its URL.
    pub async fn create(&self, name: &str, attributes: &[(QueueAttributeName, &str)]) -> String {
        let mut req = self.c.create_queue().queue_name(name);
        for (k, v) in attributes {
            req = req.attributes(k.clone(), *v);
        }
        let out = req.send().await.expect("create queue");
        out.queue_url.expect("a queue URL")
    }

    /// GetQueueUrl of `name`.
    pub async fn url_of(&self, name: &str) -> String {
        let out = self.c.get_queue_url().queue_name(name).send().await;
        out.expect("the queue exists")
            .queue_url
            .expect("a queue URL")
    }

    /// SendMessage of `body` to `url`.
    pub async fn send(&self, url: &str, body: &str) -> SendMessageOutput {
        let req = self.c.send_message().queue_url(url).message_body(body);
        req.send().await.expect("sent")
    }

    /// ReceiveMessage on `url` (one message at most, no wait), with the visibility timeout
    /// `visibility` when given, asking for every system attribute.
    pub async fn receive(&self, url: &str, visibility: Option<i32>) -> Vec<Message> {
        self.receive_waiting(url, visibility, 0).await
    }

    /// As [`Sqs::receive`], long polling for `wait_s` seconds.
    pub async fn receive_waiting(
        &self,
        url: &str,
        visibility: Option<i32>,
        wait_s: i32,
    ) -> Vec<Message> {
        let req = self
            .c
            .receive_message()
            .queue_url(url)
            .set_visibility_timeout(visibility)
            .wait_time_seconds(wait_s)
            .message_system_attribute_names(MessageSystemAttributeName::All);
        let out = req.send().await.expect("received");
        out.messages.unwrap_or_default()
    }

    /// DeleteMessage of `handle` on `url`, which must succeed.
    pub async fn delete(&self, url: &str, handle: &str) {
        let req = self
            .c
            .delete_message()
            .queue_url(url)
            .receipt_handle(handle);
        req.send().await.expect("deleted");
    }

    /// ChangeMessageVisibility of `handle` on `url` to `timeout_s`, which must succeed.
    pub async fn change_visibility(&self, url: &str, handle: &str, timeout_s: i32) {
        let req = self.c.change_message_visibility().queue_url(url);
        let req = req.receipt_handle(handle).visibility_timeout(timeout_s);
        req.send().await.expect("visibility changed");
    }

    /// GetQueueAttributes `names` of `url`.
    pub async fn attributes(
        &self,
        url: &str,
        names: &[QueueAttributeName],
    ) -> HashMap<QueueAttributeName, String> {
        let req = self.c.get_queue_attributes().queue_url(url);
        let req = req.set_attribute_names(Some(names.to_vec()));
        let out = req.send().await.expect("attributes");
        out.attributes.unwrap_or_default()
    }

    /// One attribute of `url`.
    pub async fn attribute(&self, url: &str, name: QueueAttributeName) -> String {
        let mut all = self.attributes(url, std::slice::from_ref(&name)).await;
        all.remove(&name)
            .unwrap_or_else(|| panic!("{name:?} in the answer"))
    }
}

/// A message's system attribute.
pub fn system(m: &Message, name: MessageSystemAttributeName) -> &str {
    m.attributes()
        .and_then(|a| a.get(&name))
        .map_or_else(|| panic!("{name:?} on the message"), String::as_str)
}

/// A message's receipt handle.
pub fn handle(m: &Message) -> String {
    m.receipt_handle().expect("a receipt handle").to_string()
}

/// An SDK conformance test: `sqs_test!(name(t) { ... })` runs the body with `t: &Sqs` (a client
/// signing as worker 1) within 30 s, then shuts the endpoint down;
/// `sqs_test!(name(t, "worker-3", 60) { ... })` names the worker and the deadline.
macro_rules! sqs_test {
    ($name:ident($t:ident) $body:block) => {
        $crate::sqs_support::sqs_test!($name($t, "worker-1", 30) $body);
    };
    ($name:ident($t:ident, $akid:expr, $secs:expr) $body:block) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let fixture = $crate::sqs_support::Sqs::start($akid).await;
            $crate::sqs_support::within($secs, async {
                let $t = &fixture;
                $body
            })
            .await;
            fixture.srv.shutdown().await;
        }
    };
}
pub(crate) use sqs_test;
