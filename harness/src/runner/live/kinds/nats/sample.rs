//! The run's sampler of the NATS server's own counts, on a connection of its own: the run's
//! consumer's info (`num_pending`: messages not yet delivered, the backlog; `num_ack_pending`:
//! delivered and not acked, in flight) and the MAX_DELIVERIES advisories of that consumer,
//! subscribed to before the first publish and read at each sample: the messages the server
//! stopped delivering (they stay in the stream), its DLQ count.

use std::collections::BTreeSet;

use async_nats::jetstream;
use futures::FutureExt;
use futures_util::StreamExt;

use crate::record::{BrokerSample, Unavailable};
use crate::runner::live::kinds::{BoxFuture, BrokerSampler};

pub struct Sampler {
    js: jetstream::Context,
    stream: String,
    consumer: String,
    /// The MAX_DELIVERIES advisories of the run's consumer, read at each sample.
    advisories: async_nats::Subscriber,
    /// Stream sequences the server announced at MaxDeliver.
    stopped: BTreeSet<u64>,
}

impl Sampler {
    pub async fn open(url: &str, stream: String, consumer: String) -> Result<Sampler, String> {
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(super::SETUP_TIMEOUT)
            .connect(url)
            .await
            .map_err(|e| format!("cannot connect to {url}: {e}"))?;
        let subject = format!("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{stream}.{consumer}");
        let advisories = client
            .subscribe(subject)
            .await
            .map_err(|e| format!("cannot subscribe to advisories: {e}"))?;
        // The subscription is in place on the server before the first publish.
        client.flush().await.map_err(|e| e.to_string())?;
        let mut js = jetstream::new(client);
        js.set_timeout(super::SETUP_TIMEOUT);
        Ok(Sampler {
            js,
            stream,
            consumer,
            advisories,
            stopped: BTreeSet::new(),
        })
    }

    async fn read(&mut self) -> Result<BrokerSample, String> {
        let info = super::consumer_info(&self.js, &self.stream, &self.consumer).await?;
        // The server wrote every advisory it published before this answer to the same
        // connection ahead of it: they are all waiting here now.
        while let Some(Some(m)) = self.advisories.next().now_or_never() {
            if let Some(seq) = stream_seq(&m.payload) {
                self.stopped.insert(seq);
            }
        }
        Ok(BrokerSample {
            at: 0,
            dlq: Some(self.stopped.len() as u64),
            backlog: Some(info.num_pending),
            in_flight: Some(info.num_ack_pending as u64),
        })
    }
}

/// The stream sequence a MAX_DELIVERIES advisory names.
fn stream_seq(payload: &[u8]) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_slice(payload).ok()?;
    v["stream_seq"].as_u64()
}

impl BrokerSampler for Sampler {
    fn sample(&mut self) -> BoxFuture<'_, Result<BrokerSample, String>> {
        Box::pin(self.read())
    }

    fn unavailable(&self) -> Vec<Unavailable> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advisory_names_its_stream_sequence() {
        let advisory = br#"{"type":"io.nats.jetstream.advisory.v1.max_deliver","stream":"s","consumer":"workers","stream_seq":17,"deliveries":3}"#;
        assert_eq!(stream_seq(advisory), Some(17));
        assert_eq!(stream_seq(b"not json"), None);
    }
}
