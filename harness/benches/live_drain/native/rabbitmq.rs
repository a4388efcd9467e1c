//! RabbitMQ with lapin: a quorum queue (a profile's default type), a connection per consumer,
//! `basic_consume` with prefetch 1 (a profile's default prefetch) and manual acks.

use futures::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
    ConfirmSelectOptions, QueueDeclareOptions, QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};

use super::{body, Call, Consuming};

const URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

pub struct Queue {
    name: String,
    connection: Connection,
    channel: Channel,
}

fn failed(what: &str, e: impl std::fmt::Display) -> String {
    format!("RabbitMQ: {what}: {e}")
}

impl Queue {
    pub async fn open(name: &str) -> Result<Queue, String> {
        let connection = Connection::connect(URL, ConnectionProperties::default())
            .await
            .map_err(|e| failed("cannot connect", e))?;
        let channel = connection
            .create_channel()
            .await
            .map_err(|e| failed("cannot open a channel", e))?;
        let mut args = FieldTable::default();
        args.insert(
            "x-queue-type".into(),
            AMQPValue::LongString(LongString::from(b"quorum".to_vec())),
        );
        let durable = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        channel
            .queue_declare(name.into(), durable, args)
            .await
            .map_err(|e| failed("cannot declare the queue", e))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| failed("cannot select confirms", e))?;
        Ok(Queue {
            name: name.to_string(),
            connection,
            channel,
        })
    }

    pub async fn consumer(&self, worker: u32, call: Call) -> Result<Consuming, String> {
        let connection = Connection::connect(URL, ConnectionProperties::default())
            .await
            .map_err(|e| failed("cannot connect", e))?;
        let channel = connection
            .create_channel()
            .await
            .map_err(|e| failed("cannot open a channel", e))?;
        channel
            .basic_qos(1, BasicQosOptions::default())
            .await
            .map_err(|e| failed("basic.qos", e))?;
        let mut consumer = channel
            .basic_consume(
                self.name.as_str().into(),
                format!("native-{worker}").into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(|e| failed("basic.consume", e))?;
        Ok(Box::pin(async move {
            let _keep = connection;
            while let Some(Ok(d)) = consumer.next().await {
                if call.send(&d.data).await {
                    let _ = d.ack(BasicAckOptions::default()).await;
                }
            }
        }))
    }

    /// Publishes every message, then waits for every confirm.
    pub async fn publish(&self, n: u64) -> Result<(), String> {
        let mut confirms = Vec::with_capacity(n as usize);
        for seq in 1..=n {
            let props = BasicProperties::default()
                .with_message_id(seq.to_string().into())
                .with_content_type("application/json".into())
                .with_delivery_mode(2);
            let confirm = self
                .channel
                .basic_publish(
                    "".into(),
                    self.name.as_str().into(),
                    BasicPublishOptions::default(),
                    body(seq).as_bytes(),
                    props,
                )
                .await
                .map_err(|e| failed("cannot publish", e))?;
            confirms.push(confirm);
        }
        for c in confirms {
            c.await
                .map_err(|e| failed("a publish was not confirmed", e))?;
        }
        Ok(())
    }

    pub async fn delete(self) {
        let _ = self
            .channel
            .queue_delete(self.name.as_str().into(), QueueDeleteOptions::default())
            .await;
        let _ = self.connection.close(200, "done".into()).await;
    }
}
