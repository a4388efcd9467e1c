//! The run's XADDs, pipelined in order: each message the run hands over is queued here at once
//! (in seq order, since entry ids `0-<seq>` must grow), and one task sends what is queued as one
//! pipeline, waits for its replies, then sends what queued meanwhile. So a batch grows with
//! the rate the run publishes at and the server's round trip, and no XADD overtakes an earlier
//! one (two pipelines in flight on a multiplexed connection could, were their first polls to
//! swap).
//!
//! Each message's reply (its own, read with the pipeline's errors kept per command) is its
//! confirmation; a broken connection fails every message of the batch with its error. An id of
//! the run's refused as below the stream's top (a worker added an entry itself, its retry) is
//! added again with `*`, ahead of anything queued later ([`Entries::readd`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use redis::aio::MultiplexedConnection;
use tokio::sync::{mpsc, oneshot};

use super::super::Confirmation;
use super::entries::Entries;
use crate::record::Seq;

/// The most XADDs in one pipeline: a run publishing faster sends its next batch after this
/// one's replies.
pub const BATCH: usize = 512;

/// One entry to add: its seq, id and fields, and where its reply goes.
struct Add {
    seq: Seq,
    id: String,
    fields: Vec<(String, String)>,
    replied: oneshot::Sender<Result<(), String>>,
}

/// The queue in front of the pipelining task; the task ends when this is dropped.
pub struct Publisher {
    queue: mpsc::UnboundedSender<Add>,
}

impl Publisher {
    /// Starts the task, adding to `stream` on `conn`; `published` counts the entries the
    /// server has answered for (the run's counts are not trusted from before an entry's reply).
    pub fn start(
        conn: MultiplexedConnection,
        stream: String,
        published: Arc<AtomicU64>,
        entries: Arc<Entries>,
    ) -> Self {
        let (queue, rx) = mpsc::unbounded_channel();
        tokio::spawn(pipeline(conn, stream, published, entries, rx));
        Publisher { queue }
    }

    /// Queues entry `id` of message `seq` behind every entry queued before it; the
    /// confirmation is the server's reply to its XADD.
    pub fn add(
        &self,
        seq: Seq,
        id: String,
        fields: Vec<(String, String)>,
        stream: &str,
    ) -> Result<Confirmation, String> {
        let (replied, reply) = oneshot::channel();
        let failed = |e: &str| format!("cannot publish message {seq} to stream {stream}: {e}");
        self.queue
            .send(Add {
                seq,
                id,
                fields,
                replied,
            })
            .map_err(|_| failed("the publishing task has stopped"))?;
        let gone = failed("the publishing task stopped before the reply");
        Ok(Box::pin(async move { reply.await.unwrap_or(Err(gone)) }))
    }
}

/// The task: a pipeline of what is queued, its replies, the next.
async fn pipeline(
    mut conn: MultiplexedConnection,
    stream: String,
    published: Arc<AtomicU64>,
    entries: Arc<Entries>,
    mut rx: mpsc::UnboundedReceiver<Add>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        if batch.is_empty() && rx.recv_many(&mut batch, BATCH).await == 0 {
            break;
        }
        let mut pipe = redis::pipe();
        for a in &batch {
            let add = pipe.cmd("XADD").arg(&stream).arg(&a.id);
            for (field, value) in &a.fields {
                add.arg(field).arg(value);
            }
        }
        let replies: Result<Vec<redis::RedisResult<String>>, _> =
            pipe.ignore_errors().query_async(&mut conn).await;
        let failed = |seq: Seq, e: &dyn std::fmt::Display| {
            format!("cannot publish message {seq} to stream {stream}: {e}")
        };
        match replies {
            Ok(replies) if replies.len() == batch.len() => {
                let mut again = Vec::new();
                for (a, r) in batch.drain(..).zip(replies) {
                    match r {
                        Err(e) if a.id != "*" && below_top(&e) => {
                            entries.readd(&a.id, a.seq);
                            again.push(Add {
                                id: "*".to_string(),
                                ..a
                            });
                            continue;
                        }
                        Ok(ref id) if a.id == "*" => {
                            entries.found(id, a.seq);
                        }
                        _ => {}
                    }
                    // Counts read before this entry was added would call the run drained.
                    published.fetch_add(1, Ordering::SeqCst);
                    let _ = a.replied.send(r.map(|_| ()).map_err(|e| failed(a.seq, &e)));
                }
                batch = again;
            }
            Ok(replies) => {
                let why = format!("{} replies to {} XADDs", replies.len(), batch.len());
                for a in batch.drain(..) {
                    published.fetch_add(1, Ordering::SeqCst);
                    let _ = a.replied.send(Err(failed(a.seq, &why)));
                }
            }
            Err(e) => {
                for a in batch.drain(..) {
                    published.fetch_add(1, Ordering::SeqCst);
                    let _ = a.replied.send(Err(failed(a.seq, &e)));
                }
            }
        }
    }
}

/// Redis refused an explicit id as not above the stream's top item.
fn below_top(e: &redis::RedisError) -> bool {
    e.to_string()
        .contains("equal or smaller than the target stream top item")
}
