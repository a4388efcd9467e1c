//! The run's resources on the broker: its topic (created with the profile's partitions, one
//! replica: the broker on this machine is one node) and its consumer group, both removed when
//! the run ends. Over librdkafka's admin client (CreateTopics, DeleteTopics, DeleteGroups).

use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::ClientConfig;

/// How long the broker may take to answer an admin request.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Admin {
    client: AdminClient<DefaultClientContext>,
    bootstrap: String,
}

fn options() -> AdminOptions {
    AdminOptions::new().request_timeout(Some(ADMIN_TIMEOUT))
}

impl Admin {
    pub fn connect(bootstrap: &str) -> Result<Admin, String> {
        let client = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .create()
            .map_err(|e| format!("cannot create a Kafka admin client: {e}"))?;
        Ok(Admin {
            client,
            bootstrap: bootstrap.to_string(),
        })
    }

    /// Creates `topic` with `partitions` partitions. `Err(true, why)`: it already exists.
    pub async fn create_topic(&self, topic: &str, partitions: u32) -> Result<(), (bool, String)> {
        let new = NewTopic::new(topic, partitions as i32, TopicReplication::Fixed(1));
        let answers = self
            .client
            .create_topics([&new], &options())
            .await
            .map_err(|e| (false, format!("CreateTopics {topic}: {e}")))?;
        match answers.into_iter().next() {
            Some(Ok(_)) => Ok(()),
            Some(Err((_, RDKafkaErrorCode::TopicAlreadyExists))) => {
                Err((true, format!("topic {topic} already exists")))
            }
            Some(Err((_, code))) => Err((false, format!("CreateTopics {topic}: {code}"))),
            None => Err((false, format!("CreateTopics {topic}: no answer"))),
        }
    }

    /// Deletes the run's topic and its group: what could not be deleted, named with how to do
    /// it by hand. A group the broker does not know (never joined, or Tansu without
    /// DeleteGroups) is nothing left behind.
    pub async fn delete(&self, topic: &str, group: &str) -> Vec<String> {
        let mut left = Vec::new();
        let topic_gone = match self.client.delete_topics(&[topic], &options()).await {
            Ok(answers) => answers.into_iter().all(|a| a.is_ok()),
            Err(_) => false,
        };
        if !topic_gone {
            left.push(format!(
                "Kafka topic {topic} on {}: delete it with kafka-topics --delete --topic {topic}",
                self.bootstrap
            ));
        }
        let group_gone = match self.client.delete_groups(&[group], &options()).await {
            Ok(answers) => answers.into_iter().all(|a| match a {
                Ok(_) => true,
                Err((_, code)) => matches!(
                    code,
                    RDKafkaErrorCode::GroupIdNotFound
                        | RDKafkaErrorCode::UnsupportedVersion
                        | RDKafkaErrorCode::InvalidRequest
                ),
            }),
            Err(_) => false,
        };
        if !group_gone {
            left.push(format!(
                "Kafka consumer group {group} on {}: delete it with kafka-consumer-groups \
                 --delete --group {group}",
                self.bootstrap
            ));
        }
        left
    }
}
