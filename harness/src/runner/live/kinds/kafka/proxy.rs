//! The Kafka reader of one worker connection. It reads the worker's requests (each remembered
//! by its correlation id until the broker answers it) and the broker's answers:
//!
//! - Fetch: each record of the run's topic at or after the offset the worker asked from is a
//!   delivery of its message (the record's partition and offset name it). What a consumer
//!   fetches it may still drop unseen (librdkafka empties its prefetched queue on a
//!   rebalance): a delivery here is a fetch, as a RabbitMQ prefetch is.
//! - Produce to the run's topic: a record whose value names a message of the run is the
//!   worker's retry of it ([`super::copies`]).
//! - OffsetCommit: committing offset `n` of a partition acks the records below `n` the worker
//!   fetched there: accepted (error 0) or refused (any error; UNKNOWN_MEMBER_ID,
//!   ILLEGAL_GENERATION: fenced, the member was removed or its generation is over).
//! - JoinGroup, SyncGroup, Heartbeat, LeaveGroup: the group's rebalances ([`super::group`]).
//! - Metadata, FindCoordinator (and Fetch's node endpoints): the broker's address becomes the
//!   worker's proxy port ([`super::rewrite`]), so the client's every connection comes back here.
//!
//! An answer carrying a delivery a `received` kill is decided for is not forwarded: the
//! connection is cut. Bytes that cannot be read as Kafka frames are passed on unread from then.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kafka_protocol::records::RecordBatchDecoder;
use uuid::Uuid;

use super::frames::{
    correlation_id, read_request, read_response, take_frames, write_response, FrameError,
    MAX_REQUEST, MAX_RESPONSE,
};
use super::group::{code, GroupLog, Happened};
use super::records::Records;
use super::rewrite;
use crate::record::{AckOutcome, EventKind, Nanos, WorkerId};
use crate::runner::live::proxy::{Connection, Flow, Protocol, Refusal};
use crate::runner::live::state::LiveState;

/// What the proxies of one run share.
pub struct Observed {
    pub state: Arc<LiveState>,
    pub records: Arc<Records>,
    pub group: Arc<GroupLog>,
    pub topic: String,
    /// The topic's id (Fetch and OffsetCommit name topics by id from v13 and v10).
    pub topic_id: Mutex<Option<Uuid>>,
    /// Each worker's proxy address, set once the listeners are bound.
    pub listeners: OnceLock<Vec<SocketAddr>>,
    /// `max.poll.interval.ms` in profile time: a fetched record's lease ends that long after
    /// the fetch (the poll that fetched it), as the sim model's does after the poll.
    pub max_poll_interval: Nanos,
    /// The handlers as the commits time them.
    pub handlers: super::commit_clock::CommitClock,
}

impl Observed {
    pub(super) fn is_topic(&self, name: &str, id: Uuid) -> bool {
        name == self.topic
            || (!id.is_nil()
                && *self.topic_id.lock().unwrap_or_else(PoisonError::into_inner) == Some(id))
    }

    fn now(&self) -> Nanos {
        self.state.clock.now()
    }
}

/// Makes each worker connection's reader.
pub struct KafkaProtocol(pub Arc<Observed>);

impl Protocol for KafkaProtocol {
    fn broke(&self, worker: WorkerId, why: String) {
        self.0.state.connection_broke(worker, why);
    }

    fn connection(&self, worker: WorkerId) -> Box<dyn Connection> {
        Box::new(KafkaConnection {
            run: self.0.clone(),
            worker,
            up: Vec::new(),
            down: Vec::new(),
            asked: HashMap::new(),
            fetch_from: HashMap::new(),
            blind: false,
            refusal: None,
        })
    }
}

/// A request whose answer the proxy reads.
#[derive(Debug, Clone, PartialEq)]
enum Asked {
    /// Metadata, FindCoordinator: answers naming brokers.
    Addresses,
    Fetch,
    /// OffsetCommit of the run's topic: (partition, committed offset).
    Commit(Vec<(i32, i64)>),
    Join,
    /// SyncGroup of `member` in `generation`.
    Sync {
        generation: i32,
        member: String,
    },
    Heartbeat,
    Leave,
}

fn reads(key: ApiKey) -> bool {
    matches!(
        key,
        ApiKey::Metadata
            | ApiKey::FindCoordinator
            | ApiKey::Fetch
            | ApiKey::OffsetCommit
            | ApiKey::JoinGroup
            | ApiKey::SyncGroup
            | ApiKey::Heartbeat
            | ApiKey::LeaveGroup
    )
}

struct KafkaConnection {
    run: Arc<Observed>,
    worker: WorkerId,
    /// Bytes of a request not complete yet (already forwarded).
    up: Vec<u8>,
    /// Bytes of an answer not complete yet (held).
    down: Vec<u8>,
    /// Correlation id -> the request's API key, version and what its answer will say.
    asked: HashMap<i32, (ApiKey, i16, Asked)>,
    /// The offset the worker last asked to fetch from, per partition of the run's topic.
    fetch_from: HashMap<i32, i64>,
    blind: bool,
    /// A frame over the broker's size limit was read: the connection ends as the broker
    /// ends it.
    refusal: Option<Refusal>,
}

impl KafkaConnection {
    /// One whole request frame; `Ok(false)`: it comes from a killed consumer
    /// ([`super::killed`]) and must not reach the broker.
    fn request(&mut self, payload: Bytes) -> Result<bool, super::frames::FrameError> {
        if let Some(p) = super::copies::produce_request(&payload) {
            super::copies::produced(&self.run, self.worker, &p);
        }
        let (header, body) = read_request(payload, reads)?;
        let client = header.client_id.as_ref().map_or("", |c| c.as_str());
        if super::killed::silenced(&self.run.state, client) {
            return Ok(false);
        }
        let Some(body) = body else {
            return Ok(true);
        };
        let asked = match body {
            RequestKind::Metadata(_) | RequestKind::FindCoordinator(_) => Asked::Addresses,
            RequestKind::Fetch(f) => {
                for t in f
                    .topics
                    .iter()
                    .filter(|t| self.run.is_topic(&t.topic, t.topic_id))
                {
                    for p in &t.partitions {
                        self.fetch_from.insert(p.partition, p.fetch_offset);
                    }
                }
                Asked::Fetch
            }
            RequestKind::OffsetCommit(c) => Asked::Commit(
                c.topics
                    .iter()
                    .filter(|t| self.run.is_topic(&t.name, t.topic_id))
                    .flat_map(|t| t.partitions.iter())
                    .map(|p| (p.partition_index, p.committed_offset))
                    .collect(),
            ),
            RequestKind::JoinGroup(_) => Asked::Join,
            RequestKind::SyncGroup(r) => Asked::Sync {
                generation: r.generation_id,
                member: r.member_id.to_string(),
            },
            RequestKind::Heartbeat(_) => Asked::Heartbeat,
            RequestKind::LeaveGroup(_) => Asked::Leave,
            _ => return Ok(true),
        };
        let key = ApiKey::try_from(header.request_api_key).unwrap_or(ApiKey::ApiVersions);
        self.asked.insert(
            header.correlation_id,
            (key, header.request_api_version, asked),
        );
        Ok(true)
    }

    /// One whole answer frame: appends to `forward` what goes on to the worker; true when a
    /// `received` kill fired for a delivery in it (then nothing of it is forwarded).
    fn answer(&mut self, whole: Bytes, payload: Bytes, forward: &mut Vec<u8>) -> bool {
        let Some((key, version, asked)) = self.asked.remove(&correlation_id(&payload)) else {
            forward.extend_from_slice(&whole);
            return false;
        };
        let Ok((header, mut body)) = read_response(payload, key, version) else {
            forward.extend_from_slice(&whole);
            return false;
        };
        let killed = self.observe(&asked, &body);
        if killed {
            return true;
        }
        let addr = self
            .run
            .listeners
            .get()
            .and_then(|l| l.get((self.worker as usize).wrapping_sub(1)).copied());
        let rewritten = addr.is_some_and(|a| rewrite::to_proxy(&mut body, a));
        match rewritten.then(|| write_response(&header, &body, key, version)) {
            Some(Ok(frame)) => forward.extend_from_slice(&frame),
            _ => forward.extend_from_slice(&whole),
        }
        false
    }

    /// Reports what an answer says; true when a `received` kill fired.
    fn observe(&mut self, asked: &Asked, body: &ResponseKind) -> bool {
        let run = self.run.clone();
        let now = run.now();
        match (asked, body) {
            (Asked::Addresses, ResponseKind::Metadata(m)) => {
                let named = m
                    .topics
                    .iter()
                    .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == run.topic));
                if let Some(t) = named.filter(|t| !t.topic_id.is_nil()) {
                    *run.topic_id.lock().unwrap_or_else(PoisonError::into_inner) = Some(t.topic_id);
                }
                false
            }
            (Asked::Fetch, ResponseKind::Fetch(f)) => self.fetched(f),
            (Asked::Commit(asked), ResponseKind::OffsetCommit(c)) => {
                let answers = c
                    .topics
                    .iter()
                    .filter(|t| run.is_topic(&t.name, t.topic_id))
                    .flat_map(|t| t.partitions.iter());
                let mut fenced = None;
                let mut rejoin = false;
                let mut covered = Vec::new();
                let mut accepted = true;
                for p in answers {
                    let Some(&(_, next)) = asked.iter().find(|(i, _)| *i == p.partition_index)
                    else {
                        continue;
                    };
                    let outcome = |seq, delivery| match p.error_code {
                        // Past a record whose handler produced it again: removes that copy.
                        0 if run.state.replaced(seq, delivery) => AckOutcome::Superseded,
                        0 => AckOutcome::Deleted,
                        _ => AckOutcome::StaleRejected,
                    };
                    fenced = fenced.or(code::fences(p.error_code).then_some(p.error_code));
                    rejoin |= p.error_code == code::REBALANCE_IN_PROGRESS;
                    accepted &= p.error_code == 0;
                    for h in run.records.committed(self.worker, p.partition_index, next) {
                        covered.push(h);
                        let outcome = outcome(h.seq, h.delivery);
                        run.state
                            .observed_ack(self.worker, h.seq, h.delivery, outcome);
                        if code::fences(p.error_code) {
                            run.state.record(EventKind::CommitFenced {
                                seq: h.seq,
                                worker: self.worker,
                            });
                        }
                    }
                }
                if accepted {
                    run.handlers.committed(self.worker, &covered, now);
                }
                if let Some(error) = fenced {
                    run.group
                        .add(now, self.worker, Happened::CommitFenced { error });
                }
                if rejoin {
                    run.group.add(now, self.worker, Happened::AskedToRejoin);
                }
                false
            }
            (Asked::Join, ResponseKind::JoinGroup(j)) if j.error_code == 0 => {
                let generation = j.generation_id;
                run.group
                    .add(now, self.worker, Happened::Joined { generation });
                false
            }
            (Asked::Sync { generation, member }, ResponseKind::SyncGroup(r)) => {
                if r.error_code == code::REBALANCE_IN_PROGRESS {
                    run.group.add(now, self.worker, Happened::AskedToRejoin);
                } else if r.error_code == 0 {
                    let partitions = super::group::assigned(&r.assignment, &run.topic);
                    let (generation, member) = (*generation, member.clone());
                    run.group.add(
                        now,
                        self.worker,
                        Happened::Assigned {
                            generation,
                            member,
                            partitions,
                        },
                    );
                }
                false
            }
            (Asked::Heartbeat, ResponseKind::Heartbeat(r))
                if r.error_code == code::REBALANCE_IN_PROGRESS =>
            {
                run.group.add(now, self.worker, Happened::AskedToRejoin);
                false
            }
            (Asked::Leave, ResponseKind::LeaveGroup(r)) if r.error_code == 0 => {
                run.group.add(now, self.worker, Happened::Left);
                false
            }
            _ => false,
        }
    }

    /// The records of the run's topic in a Fetch answer: each one at or after the offset asked
    /// is a delivery. True when a `received` kill fired for one of them.
    fn fetched(&mut self, f: &kafka_protocol::messages::FetchResponse) -> bool {
        let run = self.run.clone();
        let mut killed = false;
        for t in f
            .responses
            .iter()
            .filter(|t| run.is_topic(&t.topic, t.topic_id))
        {
            for p in t.partitions.iter().filter(|p| p.error_code == 0) {
                let Some(mut raw) = p.records.clone() else {
                    continue;
                };
                let from = self
                    .fetch_from
                    .get(&p.partition_index)
                    .copied()
                    .unwrap_or(0);
                // A fetch may end in a batch cut short: the records before it are read.
                while let Ok(set) = RecordBatchDecoder::decode(&mut raw) {
                    for r in set
                        .records
                        .iter()
                        .filter(|r| r.offset >= from && !r.control)
                    {
                        super::copies::fetched_unknown(&run, &run.records, p.partition_index, r);
                        let Some(h) = run
                            .records
                            .fetched(self.worker, p.partition_index, r.offset)
                        else {
                            continue;
                        };
                        let lease_end = run.now().saturating_add(run.max_poll_interval);
                        run.handlers.fetched(self.worker, h, run.now());
                        killed |=
                            run.state
                                .observed_delivery(self.worker, h.seq, h.delivery, lease_end);
                    }
                    if raw.is_empty() {
                        break;
                    }
                }
            }
        }
        killed
    }
}

impl Connection for KafkaConnection {
    fn from_worker(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        if self.blind {
            forward.extend_from_slice(bytes);
            return Flow::Go;
        }
        self.up.extend_from_slice(bytes);
        let (frames, end) = take_frames(&mut self.up, MAX_REQUEST);
        // The bytes of the frames not read yet, and of the partial one after them.
        let mut after: usize =
            frames.iter().map(|(whole, _)| whole.len()).sum::<usize>() + self.up.len();
        for (whole, p) in frames {
            match self.request(p) {
                Ok(true) => after -= whole.len(),
                // A killed consumer speaks: its connection closes, nothing of it forwarded.
                Ok(false) => return Flow::Cut,
                Err(FrameError::NotKafka(why)) => {
                    // What came before this request in these bytes goes on; it and what
                    // follows do not.
                    forward.extend_from_slice(&bytes[..bytes.len().saturating_sub(after)]);
                    self.up.clear();
                    self.refusal = Some(Refusal {
                        why: format!("the worker sent {}", FrameError::NotKafka(why)),
                        to_worker: Vec::new(),
                    });
                    return Flow::Go;
                }
                Err(_) => {
                    forward.extend_from_slice(bytes);
                    self.go_blind();
                    return Flow::Go;
                }
            }
        }
        match end {
            Ok(()) => forward.extend_from_slice(bytes),
            // The broker closes the connection at this size, without an answer: what came
            // before it in these bytes goes on.
            Err(e @ (FrameError::OverLimit { .. } | FrameError::Length(_))) => {
                let before = bytes.len().saturating_sub(self.up.len());
                forward.extend_from_slice(&bytes[..before]);
                self.up.clear();
                self.refusal = Some(Refusal {
                    why: format!("the worker sent {e}"),
                    to_worker: Vec::new(),
                });
            }
            Err(_) => {
                forward.extend_from_slice(bytes);
                self.go_blind();
            }
        }
        Flow::Go
    }

    fn from_server(&mut self, bytes: &[u8], forward: &mut Vec<u8>) -> Flow {
        if self.blind {
            forward.append(&mut self.down);
            forward.extend_from_slice(bytes);
            return Flow::Go;
        }
        self.down.extend_from_slice(bytes);
        let (frames, end) = take_frames(&mut self.down, MAX_RESPONSE);
        for (whole, payload) in frames {
            if self.answer(whole, payload, forward) {
                return Flow::Cut;
            }
        }
        match end {
            Ok(()) => {}
            Err(e @ FrameError::OverLimit { .. }) => {
                self.down.clear();
                self.refusal = Some(Refusal {
                    why: format!("the broker sent {e}, which the proxy does not read"),
                    to_worker: Vec::new(),
                });
            }
            Err(_) => {
                forward.append(&mut self.down);
                self.go_blind();
            }
        }
        Flow::Go
    }

    fn refusal(&mut self) -> Option<Refusal> {
        self.refusal.take()
    }
}

impl KafkaConnection {
    fn go_blind(&mut self) {
        self.blind = true;
        self.up.clear();
        self.asked.clear();
    }
}

#[cfg(test)]
#[path = "proxy_tests.rs"]
mod tests;
