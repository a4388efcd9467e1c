//! The run's sampler of the Redis server's own counts, on a connection of its own: XINFO GROUPS
//! of the run's stream (the group's `lag`: entries not yet read by the group, the backlog; its
//! `pending`: read and not XACKed, in flight) and XLEN of the dead stream (the DLQ). A `lag`
//! the server cannot tell (nil, after deletions in the stream) leaves that sample's backlog out.

use redis::aio::MultiplexedConnection;
use redis::Value;

use super::{group_info, GROUP};
use crate::record::{BrokerSample, Unavailable};
use crate::runner::live::kinds::{BoxFuture, BrokerSampler};

pub struct Sampler {
    conn: MultiplexedConnection,
    stream: String,
    dead: String,
}

impl Sampler {
    pub async fn open(url: &str, stream: String, dead: String) -> Result<Sampler, String> {
        let client = redis::Client::open(url).map_err(|e| e.to_string())?;
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(std::time::Duration::from_secs(3)))
            .set_response_timeout(Some(std::time::Duration::from_secs(2)));
        let conn = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| format!("cannot connect to {url}: {e}"))?;
        Ok(Sampler { conn, stream, dead })
    }

    async fn read(&mut self) -> Result<BrokerSample, String> {
        let groups: Value = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg(&self.stream)
            .query_async(&mut self.conn)
            .await
            .map_err(|e| format!("XINFO GROUPS {}: {e}", self.stream))?;
        let dead: u64 = redis::cmd("XLEN")
            .arg(&self.dead)
            .query_async(&mut self.conn)
            .await
            .map_err(|e| format!("XLEN {}: {e}", self.dead))?;
        let group = group_info(&groups, GROUP)
            .ok_or_else(|| format!("group {GROUP} of {} is gone", self.stream))?;
        Ok(BrokerSample {
            at: 0,
            dlq: Some(dead),
            backlog: group.lag,
            in_flight: Some(group.pending),
        })
    }
}

impl BrokerSampler for Sampler {
    fn sample(&mut self) -> BoxFuture<'_, Result<BrokerSample, String>> {
        Box::pin(self.read())
    }

    fn unavailable(&self) -> Vec<Unavailable> {
        Vec::new()
    }
}
