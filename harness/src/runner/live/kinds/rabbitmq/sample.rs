//! The run's sampler of the RabbitMQ server's own counts, on a connection of its own: a passive
//! declare of the run's queue (its ready messages: the backlog) and of its dead-letter queue,
//! which nobody consumes (its depth: the DLQ). A passive declare does not give the messages
//! delivered and not acked, and the management API is not assumed: in-flight is not given.
//! A failed declare closes its channel: the next sample opens another (and reconnects if the
//! connection went).

use lapin::{Channel, Connection, ConnectionProperties};

use super::resources::{self, Names};
use crate::record::{BrokerSample, Unavailable};
use crate::runner::live::kinds::{unavailable, BoxFuture, BrokerSampler};

pub struct Sampler {
    url: String,
    names: Names,
    connection: Option<Connection>,
    channel: Option<Channel>,
}

impl Sampler {
    pub async fn open(url: String, names: Names) -> Result<Sampler, String> {
        let mut s = Sampler {
            url,
            names,
            connection: None,
            channel: None,
        };
        s.channel().await?;
        Ok(s)
    }

    /// The sampler's channel, opened again (on a new connection if needed) after a failure.
    async fn channel(&mut self) -> Result<Channel, String> {
        if let Some(ch) = self.channel.as_ref().filter(|c| c.status().connected()) {
            return Ok(ch.clone());
        }
        if !self
            .connection
            .as_ref()
            .is_some_and(|c| c.status().connected())
        {
            let c = Connection::connect(&self.url, ConnectionProperties::default())
                .await
                .map_err(|e| format!("cannot connect to {}: {e}", self.url))?;
            self.connection = Some(c);
        }
        let conn = self.connection.as_ref().expect("connected above");
        let ch = conn
            .create_channel()
            .await
            .map_err(|e| format!("cannot open a channel: {e}"))?;
        self.channel = Some(ch.clone());
        Ok(ch)
    }

    async fn read(&mut self) -> Result<BrokerSample, String> {
        let ch = self.channel().await?;
        let failed = |q: &str, e: lapin::Error| format!("passive declare of {q}: {e}");
        let backlog = resources::ready(&ch, &self.names.queue)
            .await
            .map_err(|e| failed(&self.names.queue, e))?;
        let dlq = match &self.names.dead_letter {
            Some((_, q)) => Some(resources::ready(&ch, q).await.map_err(|e| failed(q, e))?),
            None => None,
        };
        Ok(BrokerSample {
            at: 0,
            dlq,
            backlog: Some(backlog),
            in_flight: None,
        })
    }
}

impl BrokerSampler for Sampler {
    fn sample(&mut self) -> BoxFuture<'_, Result<BrokerSample, String>> {
        Box::pin(self.read())
    }

    fn unavailable(&self) -> Vec<Unavailable> {
        let mut v = vec![unavailable(
            "in_flight",
            "RabbitMQ: a passive declare gives a queue's ready messages only, not those \
             delivered and unacked (the management API would; ackbench does not assume it)",
        )];
        if self.names.dead_letter.is_none() {
            v.push(unavailable(
                "dlq",
                "RabbitMQ: dead_letter is off, so the server drops a message at its delivery \
                 limit and keeps no count of it",
            ));
        }
        v
    }
}
