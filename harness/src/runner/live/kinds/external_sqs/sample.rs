//! The run's sampler of an external SQS server's own counts, on a client of its own:
//! GetQueueAttributes of the run's queue (`ApproximateNumberOfMessages`: visible, the backlog;
//! `ApproximateNumberOfMessagesNotVisible`: received and not deleted, in flight) and of its DLQ
//! (visible plus not visible: ackbench's own reader keeps each entry it saw invisible).

use aws_sdk_sqs::types::QueueAttributeName;

use crate::record::{BrokerSample, Unavailable};
use crate::runner::live::kinds::{unavailable, BoxFuture, BrokerSampler};

pub struct Sampler {
    pub sqs: aws_sdk_sqs::Client,
    pub queue_url: String,
    pub dlq_url: Option<String>,
}

const VISIBLE: QueueAttributeName = QueueAttributeName::ApproximateNumberOfMessages;
const NOT_VISIBLE: QueueAttributeName = QueueAttributeName::ApproximateNumberOfMessagesNotVisible;

/// The visible and not-visible counts of queue `url` (what KEDA's `aws-sqs-queue` scaler reads
/// too), on client `sqs`.
pub async fn visible_and_not(sqs: &aws_sdk_sqs::Client, url: &str) -> Result<(u64, u64), String> {
    let a = sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(VISIBLE)
        .attribute_names(NOT_VISIBLE)
        .send()
        .await
        .map_err(|e| {
            format!(
                "GetQueueAttributes {url}: {}",
                aws_sdk_sqs::error::DisplayErrorContext(e)
            )
        })?;
    let attrs = a.attributes.unwrap_or_default();
    let get = |n: &QueueAttributeName| {
        attrs
            .get(n)
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("GetQueueAttributes {url} did not give {}", n.as_str()))
    };
    Ok((get(&VISIBLE)?, get(&NOT_VISIBLE)?))
}

impl Sampler {
    async fn read(&mut self) -> Result<BrokerSample, String> {
        let (visible, not_visible) = visible_and_not(&self.sqs, &self.queue_url).await?;
        let dlq = match self.dlq_url.clone() {
            Some(d) => {
                let (v, n) = visible_and_not(&self.sqs, &d).await?;
                Some(v + n)
            }
            None => None,
        };
        Ok(BrokerSample {
            at: 0,
            dlq,
            backlog: Some(visible),
            in_flight: Some(not_visible),
        })
    }
}

impl BrokerSampler for Sampler {
    fn sample(&mut self) -> BoxFuture<'_, Result<BrokerSample, String>> {
        Box::pin(self.read())
    }

    fn unavailable(&self) -> Vec<Unavailable> {
        if self.dlq_url.is_some() {
            return Vec::new();
        }
        vec![unavailable(
            "dlq",
            "SQS: the run's queue has no DLQ (broker.max_receives is 0), so there is no DLQ \
             depth to read",
        )]
    }
}
