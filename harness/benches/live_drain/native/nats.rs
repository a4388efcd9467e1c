//! NATS JetStream with async-nats: a memory stream and a durable pull consumer with explicit
//! acks (as an ackbench run creates them), a connection per consumer, a persistent pull
//! (`consumer.stream()`) of one message per request, and double acks (the server confirms
//! each, as the built-in client waits for it).

use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use futures::StreamExt;

use super::{body, Call, Consuming};

const URL: &str = "nats://127.0.0.1:4222";
const CONSUMER: &str = "native";

pub struct Queue {
    js: jetstream::Context,
    name: String,
}

fn failed(what: &str, e: impl std::fmt::Display) -> String {
    format!("NATS: {what}: {e}")
}

impl Queue {
    pub async fn open(name: &str) -> Result<Queue, String> {
        let client = async_nats::connect(URL)
            .await
            .map_err(|e| failed("cannot connect", e))?;
        let js = jetstream::new(client);
        let st = js
            .create_stream(stream::Config {
                name: name.to_string(),
                subjects: vec![format!("{name}.orders")],
                storage: stream::StorageType::Memory,
                ..Default::default()
            })
            .await
            .map_err(|e| failed("cannot create the stream", e))?;
        st.create_consumer(consumer::pull::Config {
            durable_name: Some(CONSUMER.to_string()),
            ack_policy: consumer::AckPolicy::Explicit,
            ack_wait: Duration::from_secs(30),
            ..Default::default()
        })
        .await
        .map_err(|e| failed("cannot create the consumer", e))?;
        Ok(Queue {
            js,
            name: name.to_string(),
        })
    }

    pub async fn consumer(&self, call: Call) -> Result<Consuming, String> {
        let client = async_nats::connect(URL)
            .await
            .map_err(|e| failed("cannot connect", e))?;
        let js = jetstream::new(client);
        let consumer: consumer::PullConsumer = js
            .get_consumer_from_stream(CONSUMER, &self.name)
            .await
            .map_err(|e| failed("cannot bind the consumer", e))?;
        let mut messages = consumer
            .stream()
            .max_messages_per_batch(1)
            .messages()
            .await
            .map_err(|e| failed("cannot pull", e))?;
        Ok(Box::pin(async move {
            while let Some(m) = messages.next().await {
                let Ok(m) = m else { continue };
                if call.send(&m.payload).await {
                    let _ = m.double_ack().await;
                }
            }
        }))
    }

    /// Publishes every message, then waits for every publish ack.
    pub async fn publish(&self, n: u64) -> Result<(), String> {
        let subject = format!("{}.orders", self.name);
        let mut acks = Vec::with_capacity(n as usize);
        for seq in 1..=n {
            let ack = self
                .js
                .publish(subject.clone(), body(seq).into())
                .await
                .map_err(|e| failed("cannot publish", e))?;
            acks.push(ack);
        }
        for a in acks {
            a.await.map_err(|e| failed("a publish was not acked", e))?;
        }
        Ok(())
    }

    pub async fn delete(self) {
        let _ = self.js.delete_stream(&self.name).await;
    }
}
