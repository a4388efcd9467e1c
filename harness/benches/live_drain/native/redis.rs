//! Redis Streams with redis-rs: a stream and consumer group, a connection per consumer,
//! `XREADGROUP ... COUNT 1 BLOCK 1000 STREAMS <stream> >` then `XACK` per entry.

use redis::aio::MultiplexedConnection;
use redis::Value;

use super::{body, Call, Consuming};

const URL: &str = "redis://127.0.0.1:6379";
const GROUP: &str = "native";

pub struct Queue {
    name: String,
    conn: MultiplexedConnection,
}

fn failed(what: &str, e: impl std::fmt::Display) -> String {
    format!("Redis: {what}: {e}")
}

async fn connect() -> Result<MultiplexedConnection, String> {
    redis::Client::open(URL)
        .map_err(|e| failed("bad URL", e))?
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| failed("cannot connect", e))
}

impl Queue {
    pub async fn open(name: &str) -> Result<Queue, String> {
        let mut conn = connect().await?;
        redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(name)
            .arg(GROUP)
            .arg("0")
            .arg("MKSTREAM")
            .query_async::<Value>(&mut conn)
            .await
            .map_err(|e| failed("cannot create the group", e))?;
        Ok(Queue {
            name: name.to_string(),
            conn,
        })
    }

    pub async fn consumer(&self, worker: u32, call: Call) -> Result<Consuming, String> {
        let mut conn = connect().await?;
        let stream = self.name.clone();
        let me = format!("native-{worker}");
        Ok(Box::pin(async move {
            loop {
                let reply = redis::cmd("XREADGROUP")
                    .arg("GROUP")
                    .arg(GROUP)
                    .arg(&me)
                    .arg("COUNT")
                    .arg(1)
                    .arg("BLOCK")
                    .arg(1000)
                    .arg("STREAMS")
                    .arg(&stream)
                    .arg(">")
                    .query_async::<Value>(&mut conn)
                    .await;
                let Some((id, body)) = reply.ok().as_ref().and_then(entry) else {
                    continue;
                };
                if call.send(&body).await {
                    let _ = redis::cmd("XACK")
                        .arg(&stream)
                        .arg(GROUP)
                        .arg(&id)
                        .query_async::<Value>(&mut conn)
                        .await;
                }
            }
        }))
    }

    /// Adds every entry, in pipelines of 500.
    pub async fn publish(&self, n: u64) -> Result<(), String> {
        let mut conn = self.conn.clone();
        let seqs: Vec<u64> = (1..=n).collect();
        for chunk in seqs.chunks(500) {
            let mut pipe = redis::pipe();
            for &seq in chunk {
                pipe.cmd("XADD")
                    .arg(&self.name)
                    .arg("*")
                    .arg("body")
                    .arg(body(seq));
            }
            pipe.query_async::<Value>(&mut conn)
                .await
                .map_err(|e| failed("cannot add", e))?;
        }
        Ok(())
    }

    pub async fn delete(self) {
        let mut conn = self.conn;
        let _ = redis::cmd("DEL")
            .arg(&self.name)
            .query_async::<Value>(&mut conn)
            .await;
    }
}

/// The entry of an XREADGROUP reply (`[[stream, [[id, [field, value, ...]]]]]`, or a map of
/// stream to entries in RESP3): its id and its `body` field.
fn entry(reply: &Value) -> Option<(Vec<u8>, Vec<u8>)> {
    let entries = match reply {
        Value::Map(m) => m.first().map(|(_, v)| v)?,
        Value::Array(streams) => match streams.first()? {
            Value::Array(s) => s.get(1)?,
            _ => return None,
        },
        _ => return None,
    };
    let Value::Array(entries) = entries else {
        return None;
    };
    let Value::Array(pair) = entries.first()? else {
        return None;
    };
    let (Value::BulkString(id), Value::Array(fields)) = (pair.first()?, pair.get(1)?) else {
        return None;
    };
    fields.chunks(2).find_map(|kv| match kv {
        [Value::BulkString(k), Value::BulkString(v)] if k == b"body" => {
            Some((id.clone(), v.clone()))
        }
        _ => None,
    })
}
