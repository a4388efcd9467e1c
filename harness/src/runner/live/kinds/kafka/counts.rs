//! The run's counts from the broker: the records of the topic the group has not committed past,
//! per partition its log end offset (ListOffsets) less the group's committed offset
//! (OffsetFetch, none yet: 0). Exact on Tansu because ackbench writes one record per batch
//! (docs/kafka-live.md). Read on ackbench's own client, which names the group but never joins
//! it, and reused for [`COUNTS_FOR`] while nothing new was published.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{ClientConfig, Offset, TopicPartitionList};

/// How long an answer is reused.
const COUNTS_FOR: Duration = Duration::from_millis(150);
/// How long one read of the broker may take.
const ASK_TIMEOUT: Duration = Duration::from_secs(5);

pub struct GroupLag {
    client: Arc<BaseConsumer>,
    topic: String,
    partitions: i32,
    /// The last answer, when it was read and after how many published records.
    cached: Mutex<Option<(Instant, u64, u64)>>,
}

/// What the group has not committed past, from each partition's log end and committed offset.
pub fn unsettled(ends: &[i64], committed: &[Option<i64>]) -> u64 {
    ends.iter()
        .zip(committed)
        .map(|(end, c)| (end - c.unwrap_or(0)).max(0) as u64)
        .sum()
}

impl GroupLag {
    pub fn open(
        bootstrap: &str,
        topic: &str,
        group: &str,
        partitions: u32,
    ) -> Result<GroupLag, String> {
        let client: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", group)
            .set("enable.auto.commit", "false")
            .create()
            .map_err(|e| format!("cannot create a Kafka client for {bootstrap}: {e}"))?;
        Ok(GroupLag {
            client: Arc::new(client),
            topic: topic.to_string(),
            partitions: partitions as i32,
            cached: Mutex::new(None),
        })
    }

    /// The records not committed past, read again when the last answer is older than
    /// [`COUNTS_FOR`] or `published` changed since.
    pub async fn read(&self, published: u64) -> Result<u64, String> {
        let cached = *self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, after, n)) = cached {
            if at.elapsed() < COUNTS_FOR && after == published {
                return Ok(n);
            }
        }
        let (client, topic, partitions) =
            (self.client.clone(), self.topic.clone(), self.partitions);
        let n = tokio::task::spawn_blocking(move || ask(&client, &topic, partitions))
            .await
            .map_err(|e| format!("the Kafka counts' reader ended: {e}"))??;
        *self.cached.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((Instant::now(), published, n));
        Ok(n)
    }
}

fn ask(client: &BaseConsumer, topic: &str, partitions: i32) -> Result<u64, String> {
    let mut ends = Vec::with_capacity(partitions as usize);
    let mut asked = TopicPartitionList::new();
    for p in 0..partitions {
        let (_, high) = client
            .fetch_watermarks(topic, p, ASK_TIMEOUT)
            .map_err(|e| format!("ListOffsets of {topic} [{p}]: {e}"))?;
        ends.push(high);
        asked.add_partition(topic, p);
    }
    let got = client
        .committed_offsets(asked, ASK_TIMEOUT)
        .map_err(|e| format!("OffsetFetch of {topic}: {e}"))?;
    let committed: Vec<Option<i64>> = (0..partitions)
        .map(|p| match got.find_partition(topic, p).map(|e| e.offset()) {
            Some(Offset::Offset(o)) => Some(o),
            _ => None,
        })
        .collect();
    Ok(unsettled(&ends, &committed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsettled_is_each_partitions_end_less_its_committed_offset() {
        // Partition 0: 5 records, committed 3 -> 2; partition 1: 4 records, nothing committed
        // -> 4; partition 2: committed at its end -> 0. 2 + 4 + 0 = 6.
        assert_eq!(unsettled(&[5, 4, 2], &[Some(3), None, Some(2)]), 6);
        // A commit past the end (read between two answers) counts no negative records.
        assert_eq!(unsettled(&[1], &[Some(3)]), 0);
    }
}
