//! A built-in target's queue over the SQS API (aws-sdk-sqs), and what a worker process is told
//! to reach an SQS endpoint: the endpoint, credentials whose access key id names the caller to
//! the endpoint, a region and the queue URL.

use std::time::Duration;

use ackbench_targets::{Delivery, QueueError};
use aws_sdk_sqs::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sqs::operation::delete_message::DeleteMessageError;
use aws_sdk_sqs::types::MessageSystemAttributeName;

use super::{BoxFuture, LiveQueue};
use crate::profile::run_variables;
use crate::provider::http::LiveClock;

/// The environment of a program that talks SQS to `endpoint` as `access_key_id`.
pub fn client_env(endpoint: &str, access_key_id: &str, queue_url: &str) -> Vec<(String, String)> {
    [
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ENDPOINT_URL_SQS", endpoint),
        ("AWS_ACCESS_KEY_ID", access_key_id),
        ("AWS_SECRET_ACCESS_KEY", "ackbench"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
        (run_variables::QUEUE_URL, queue_url),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// One worker's SQS client.
pub struct SqsQueue {
    sqs: aws_sdk_sqs::Client,
    queue_url: String,
    clock: LiveClock,
}

impl SqsQueue {
    pub fn new(endpoint: &str, access_key_id: &str, queue_url: &str, clock: LiveClock) -> SqsQueue {
        let conf = aws_sdk_sqs::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(endpoint)
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new(
                access_key_id,
                "ackbench",
                None,
                None,
                "ackbench",
            ))
            .http_client(aws_smithy_http_client::Builder::new().build_http())
            .build();
        SqsQueue {
            sqs: aws_sdk_sqs::Client::from_conf(conf),
            queue_url: queue_url.to_string(),
            clock,
        }
    }

    /// Whole seconds of wall time for a profile duration (SQS visibility is in seconds).
    fn wall_secs(&self, d: Duration) -> i32 {
        let wall = self.clock.wall(crate::record::nanos(d));
        i32::try_from(wall.as_secs_f64().ceil() as i64).unwrap_or(i32::MAX)
    }

    async fn receive_one(&self) -> Result<Delivery<String>, QueueError> {
        loop {
            let out = self
                .sqs
                .receive_message()
                .queue_url(&self.queue_url)
                .max_number_of_messages(1)
                .wait_time_seconds(5)
                .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
                .send()
                .await
                .map_err(|e| QueueError::Unavailable(e.to_string()))?;
            if let Some(m) = out.messages.unwrap_or_default().into_iter().next() {
                let receive_count = m
                    .attributes
                    .as_ref()
                    .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(1);
                return Ok(Delivery {
                    receipt: m.receipt_handle.unwrap_or_default(),
                    body: m.body.unwrap_or_default().into(),
                    receive_count,
                });
            }
        }
    }

    async fn delete(&self, receipt: &str) -> Result<(), QueueError> {
        self.sqs
            .delete_message()
            .queue_url(&self.queue_url)
            .receipt_handle(receipt)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| match e.into_service_error() {
                DeleteMessageError::ReceiptHandleIsInvalid(_) => QueueError::StaleReceipt,
                other => QueueError::Unavailable(other.to_string()),
            })
    }

    async fn visibility(&self, receipt: &str, timeout: Duration) -> Result<(), QueueError> {
        self.sqs
            .change_message_visibility()
            .queue_url(&self.queue_url)
            .receipt_handle(receipt)
            .visibility_timeout(self.wall_secs(timeout))
            .send()
            .await
            .map(|_| ())
            .map_err(|_| QueueError::StaleReceipt)
    }
}

impl LiveQueue for SqsQueue {
    fn receive(&self) -> BoxFuture<'_, Result<Delivery<String>, QueueError>> {
        Box::pin(self.receive_one())
    }

    fn ack<'a>(&'a self, receipt: &'a str) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.delete(receipt))
    }

    fn change_visibility<'a>(
        &'a self,
        receipt: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<(), QueueError>> {
        Box::pin(self.visibility(receipt, timeout))
    }
}
