//! Helpers of the SQS endpoint tests: a server on a free loopback port, SDK clients that sign
//! as a given worker, and raw HTTP for requests no SDK would send.
#![allow(dead_code)]

use std::time::Duration;

use ackbench::broker::sqs::{SqsConfig, SqsServer};
use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
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
