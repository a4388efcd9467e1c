//! A consumer's own retries in the Kafka proxy: a Produce to the run's topic whose record value
//! names a message of the run is that message's next life (a handler producing the record again,
//! to the back of a partition), a copy at an offset of its own. The copy is counted when the
//! Produce passes ([`Records::copy_sent`]) and found by its value when a worker fetches it
//! ([`Records::copy_found`]); the commit past the record it replaced removes that copy
//! (`Superseded`).

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, ProduceRequest, RequestHeader};
use kafka_protocol::protocol::Decodable;
use kafka_protocol::records::{Record, RecordBatchDecoder};

use super::proxy::Observed;
use super::records::Records;
use crate::record::{Republish, WorkerId};

/// A request frame's Produce, if it is one the proxy can read (one it cannot is passed on as it
/// is: only its copies go unseen).
pub fn produce_request(payload: &Bytes) -> Option<ProduceRequest> {
    let mut buf = payload.clone();
    let key = i16::from_be_bytes([*buf.first()?, *buf.get(1)?]);
    if key != ApiKey::Produce as i16 {
        return None;
    }
    let version = i16::from_be_bytes([*buf.get(2)?, *buf.get(3)?]);
    RequestHeader::decode(&mut buf, ApiKey::Produce.request_header_version(version)).ok()?;
    ProduceRequest::decode(&mut buf, version).ok()
}

/// The worker's Produce: each record of the run's topic naming a message of the run is a retry
/// of it, from the delivery the worker holds.
pub fn produced(run: &Observed, worker: WorkerId, p: &ProduceRequest) {
    let state = &run.state;
    for t in (p.topic_data.iter()).filter(|t| run.is_topic(&t.name, t.topic_id)) {
        for part in &t.partition_data {
            let Some(mut raw) = part.records.clone() else {
                continue;
            };
            while let Ok(set) = RecordBatchDecoder::decode(&mut raw) {
                for seq in set.records.iter().filter_map(|r| named(run, r)) {
                    let delivery = state.retiring(worker, seq, Republish::Queue);
                    run.records.copy_sent(part.index, seq);
                    state.observed_republish(worker, seq, delivery, Republish::Queue);
                }
                if raw.is_empty() {
                    break;
                }
            }
        }
    }
}

/// A fetched record at `offset` of `partition` the run does not know: a copy, if its value
/// names a message of which one was produced.
pub fn fetched_unknown(run: &Observed, records: &Records, partition: i32, r: &Record) {
    if records.knows(partition, r.offset) {
        return;
    }
    if let Some(seq) = named(run, r) {
        records.copy_found(partition, r.offset, seq);
    }
}

/// The message of the run a record's value names.
fn named(run: &Observed, r: &Record) -> Option<crate::record::Seq> {
    run.state.seq_of_body(r.value.as_deref()?)
}
