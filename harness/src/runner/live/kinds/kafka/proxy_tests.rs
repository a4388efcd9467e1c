//! The proxy on frames built as librdkafka and Tansu send them: requests of the versions
//! confluent-kafka 2.16 sends (Fetch with topic names up to v12 and ids from v13), answers with
//! uncompressed record batches.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_commit_response::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use kafka_protocol::messages::{
    ConsumerProtocolAssignment, FetchRequest, FetchResponse, JoinGroupRequest, JoinGroupResponse,
    MetadataRequest, MetadataResponse, OffsetCommitRequest, OffsetCommitResponse, RequestHeader,
    ResponseHeader, SyncGroupRequest, SyncGroupResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};

use super::super::frames::{write_request, write_response};
use super::*;
use crate::chaos::kill_worker::KillSchedule;
use crate::profile::{ChaosRule, KillPoint, KillRule, KillTrigger};
use crate::provider::http::LiveClock;
use crate::runner::live::state::Handle;

const TOPIC: &str = "t";

fn name(s: &'static str) -> TopicName {
    TopicName(StrBytes::from_static_str(s))
}

/// One uncompressed batch holding a record per offset, keyed `k<offset>`.
fn batch(offsets: &[i64]) -> Bytes {
    let records: Vec<Record> = offsets
        .iter()
        .map(|&offset| Record {
            transactional: false,
            control: false,
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: -1,
            producer_epoch: -1,
            timestamp_type: TimestampType::Creation,
            offset,
            sequence: -1,
            timestamp: 0,
            key: Some(Bytes::from(format!("k{offset}"))),
            value: Some(Bytes::from_static(b"v")),
            headers: Default::default(),
        })
        .collect();
    let mut buf = BytesMut::new();
    let options = RecordEncodeOptions {
        version: 2,
        compression: Compression::None,
    };
    RecordBatchEncoder::encode(&mut buf, &records, &options).unwrap();
    buf.freeze()
}

fn header(key: ApiKey, version: i16, correlation: i32) -> RequestHeader {
    RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation)
}

/// Worker sends `request`; the broker answers `answer`: what reached the worker, and the flow.
fn exchange(
    c: &mut dyn Connection,
    (key, version, correlation): (ApiKey, i16, i32),
    request: RequestKind,
    answer: ResponseKind,
) -> (Vec<u8>, Flow) {
    let frame = write_request(&header(key, version, correlation), &request).unwrap();
    let mut up = Vec::new();
    assert_eq!(c.from_worker(&frame, &mut up), Flow::Go);
    assert_eq!(up, frame.to_vec(), "requests pass on unchanged");
    let h = ResponseHeader::default().with_correlation_id(correlation);
    let back = write_response(&h, &answer, key, version).unwrap();
    let mut down = Vec::new();
    let flow = c.from_server(&back, &mut down);
    (down, flow)
}

fn fetch(partition: i32, from: i64) -> RequestKind {
    RequestKind::Fetch(
        FetchRequest::default().with_topics(vec![FetchTopic::default()
            .with_topic(name(TOPIC))
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_fetch_offset(from)])]),
    )
}

fn fetched(partition: i32, records: Bytes) -> ResponseKind {
    ResponseKind::Fetch(FetchResponse::default().with_responses(vec![
        FetchableTopicResponse::default()
            .with_topic(name(TOPIC))
            .with_partitions(vec![PartitionData::default()
                .with_partition_index(partition)
                .with_records(Some(records))]),
    ]))
}

fn commit(partition: i32, next: i64) -> RequestKind {
    RequestKind::OffsetCommit(OffsetCommitRequest::default().with_topics(vec![
        OffsetCommitRequestTopic::default()
            .with_name(name(TOPIC))
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_partition_index(partition)
                .with_committed_offset(next)]),
    ]))
}

fn commit_answer(partition: i32, error: i16) -> ResponseKind {
    ResponseKind::OffsetCommit(OffsetCommitResponse::default().with_topics(vec![
        OffsetCommitResponseTopic::default()
            .with_name(name(TOPIC))
            .with_partitions(vec![OffsetCommitResponsePartition::default()
                .with_partition_index(partition)
                .with_error_code(error)]),
    ]))
}

fn run(kills: &[ChaosRule]) -> (Arc<LiveState>, Arc<Observed>) {
    let state = LiveState::new(LiveClock::new(1.0), TOPIC, 2, KillSchedule::new(kills, 1));
    for w in 1..=2 {
        state.started(w, Handle::Task(tokio::spawn(async {}).abort_handle()));
    }
    let records = Arc::new(Records::default());
    // Partition 0 holds messages 1, 2, 3 at offsets 0, 1, 2.
    for (offset, seq) in [(0, 1), (1, 2), (2, 3)] {
        records.published(0, offset, seq);
    }
    let run = Arc::new(Observed {
        state: state.clone(),
        records,
        group: Arc::new(GroupLog::default()),
        topic: TOPIC.into(),
        topic_id: Mutex::new(None),
        listeners: OnceLock::new(),
        max_poll_interval: 8_000_000_000,
        handlers: Default::default(),
    });
    (state, run)
}

fn outcomes(state: &LiveState) -> Vec<String> {
    crate::runner::live::proxy::observed_lines(&state.take_events())
}

#[tokio::test]
async fn a_removed_members_commit_is_fenced_and_its_records_go_to_the_next_owner() {
    let (state, run) = run(&[]);
    let proto = KafkaProtocol(run.clone());
    let (mut a, mut b) = (proto.connection(1), proto.connection(2));
    // Worker 1 joins generation 1 and fetches partition 0 from offset 0: messages 1, 2, 3.
    let join = (ApiKey::JoinGroup, 7, 1);
    let joined = ResponseKind::JoinGroup(JoinGroupResponse::default().with_generation_id(1));
    exchange(
        &mut *a,
        join,
        RequestKind::JoinGroup(JoinGroupRequest::default()),
        joined,
    );
    let (fwd, flow) = exchange(
        &mut *a,
        (ApiKey::Fetch, 12, 2),
        fetch(0, 0),
        fetched(0, batch(&[0, 1, 2])),
    );
    assert_eq!(flow, Flow::Go);
    assert!(!fwd.is_empty());
    // It commits 1 (message 1 done): accepted.
    exchange(
        &mut *a,
        (ApiKey::OffsetCommit, 8, 3),
        commit(0, 1),
        commit_answer(0, 0),
    );
    // Removed past max.poll.interval.ms: worker 2 fetches from the committed offset 1; the
    // broker's batch starts at offset 0, which was not asked for and is no delivery.
    exchange(
        &mut *b,
        (ApiKey::Fetch, 12, 1),
        fetch(0, 1),
        fetched(0, batch(&[0, 1, 2])),
    );
    // Worker 1's late commit of 3 is refused: UNKNOWN_MEMBER_ID (25).
    exchange(
        &mut *a,
        (ApiKey::OffsetCommit, 8, 4),
        commit(0, 3),
        commit_answer(0, 25),
    );
    // Worker 2 commits 3: its deliveries of messages 2 and 3 are acked.
    exchange(
        &mut *b,
        (ApiKey::OffsetCommit, 8, 2),
        commit(0, 3),
        commit_answer(0, 0),
    );
    assert_eq!(
        outcomes(&state),
        [
            "deliver 1.1 to 1",
            "deliver 2.1 to 1",
            "deliver 3.1 to 1",
            "ack 1.1 by 1: Deleted",
            "deliver 2.2 to 2",
            "deliver 3.2 to 2",
            "ack 2.1 by 1: StaleRejected",
            "commit of 2 by 1 fenced",
            "ack 3.1 by 1: StaleRejected",
            "commit of 3 by 1 fenced",
            "ack 2.2 by 2: Deleted",
            "ack 3.2 by 2: Deleted",
        ]
    );
    // One generation joined; the fenced commit is on the group's record.
    assert_eq!(
        run.group.notes(),
        [
            "consumer group: 1 generation(s) joined (0 rebalance(s) after the first), 0 answer(s) \
          REBALANCE_IN_PROGRESS, 0 LeaveGroup, 1 commit(s) fenced"
        ]
    );
}

#[tokio::test]
async fn a_received_kill_cuts_the_connection_before_the_fetch_answer_reaches_the_worker() {
    let (state, run) = run(&[ChaosRule::new(KillRule::new(KillTrigger::Point(
        KillPoint::Received,
    )))]);
    let mut a = KafkaProtocol(run).connection(1);
    let (fwd, flow) = exchange(
        &mut *a,
        (ApiKey::Fetch, 12, 1),
        fetch(0, 0),
        fetched(0, batch(&[0])),
    );
    assert_eq!(flow, Flow::Cut);
    assert!(fwd.is_empty(), "the delivery never reaches the worker");
    assert_eq!(outcomes(&state), ["deliver 1.1 to 1"]);
}

#[tokio::test]
async fn metadata_answers_name_the_workers_proxy_port_and_a_split_answer_waits() {
    let (_, run) = run(&[]);
    let addr: std::net::SocketAddr = "127.0.0.1:40002".parse().unwrap();
    run.listeners
        .set(vec!["127.0.0.1:40001".parse().unwrap(), addr])
        .unwrap();
    let mut b = KafkaProtocol(run).connection(2);
    let request = write_request(
        &header(ApiKey::Metadata, 12, 9),
        &RequestKind::Metadata(MetadataRequest::default()),
    )
    .unwrap();
    b.from_worker(&request, &mut Vec::new());
    let answer = ResponseKind::Metadata(MetadataResponse::default().with_brokers(vec![
        MetadataResponseBroker::default()
            .with_host(StrBytes::from_static_str("localhost"))
            .with_port(9092),
    ]));
    let h = ResponseHeader::default().with_correlation_id(9);
    let back = write_response(&h, &answer, ApiKey::Metadata, 12).unwrap();
    // The first 10 bytes alone are no whole frame: nothing is forwarded yet.
    let mut down = Vec::new();
    b.from_server(&back[..10], &mut down);
    assert!(down.is_empty());
    b.from_server(&back[10..], &mut down);
    let (_, body) = read_response(Bytes::from(down).slice(4..), ApiKey::Metadata, 12).unwrap();
    let ResponseKind::Metadata(m) = body else {
        panic!("not a metadata answer")
    };
    assert_eq!(
        (m.brokers[0].host.as_str(), m.brokers[0].port),
        ("127.0.0.1", 40002)
    );
}

/// A SyncGroup answer giving the member partitions `partitions` of the run's topic and
/// partition 9 of another topic, as the consumer protocol writes an assignment (version 3).
fn assignment(partitions: &[i32]) -> Bytes {
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition;
    use kafka_protocol::protocol::Encodable;
    let a = ConsumerProtocolAssignment::default().with_assigned_partitions(vec![
        TopicPartition::default()
            .with_topic(name(TOPIC))
            .with_partitions(partitions.to_vec()),
        TopicPartition::default()
            .with_topic(name("other"))
            .with_partitions(vec![9]),
    ]);
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&3i16.to_be_bytes());
    a.encode(&mut buf, 3).unwrap();
    buf.freeze()
}

#[tokio::test]
async fn a_sync_group_answer_names_the_members_partitions_of_the_run_s_topic() {
    let (_state, run) = run(&[]);
    let proto = KafkaProtocol(run.clone());
    let mut a = proto.connection(1);
    let sync = RequestKind::SyncGroup(
        SyncGroupRequest::default()
            .with_generation_id(4)
            .with_member_id(StrBytes::from_static_str("m-1")),
    );
    let answer =
        ResponseKind::SyncGroup(SyncGroupResponse::default().with_assignment(assignment(&[1, 0])));
    exchange(&mut *a, (ApiKey::SyncGroup, 5, 1), sync, answer);
    // Partitions 0 and 1 of the run's topic, in order; the other topic's partition 9 is not
    // the run's.
    let entries: Vec<(WorkerId, Happened)> = run
        .group
        .entries()
        .into_iter()
        .map(|(_, w, h)| (w, h))
        .collect();
    assert_eq!(
        entries,
        vec![(
            1,
            Happened::Assigned {
                generation: 4,
                member: "m-1".into(),
                partitions: vec![0, 1],
            }
        )]
    );
}

/// A LeaveGroup of the consumer whose `client.id` is `client`: what the proxy forwards, and
/// the flow.
fn leave(c: &mut dyn Connection, client: &str) -> (Vec<u8>, Flow) {
    let h = header(ApiKey::LeaveGroup, 4, 1)
        .with_client_id(Some(StrBytes::from_string(client.to_string())));
    let frame = write_request(&h, &RequestKind::LeaveGroup(Default::default())).unwrap();
    let mut up = Vec::new();
    let flow = c.from_worker(&frame, &mut up);
    (up, flow)
}

#[tokio::test]
async fn a_killed_incarnations_consumer_reaches_the_broker_no_more() {
    use super::super::killed::client_id;
    let (state, run) = run(&[]);
    let proto = KafkaProtocol(run.clone());
    // Both workers run incarnation 1: a LeaveGroup of each passes.
    let (up, flow) = leave(&mut *proto.connection(1), &client_id(1, 1));
    assert_eq!((up.is_empty(), flow), (false, Flow::Go));
    // Worker 1 is killed: its consumer's close (a LeaveGroup) is not forwarded and the
    // connection closes; worker 2's still passes.
    state.kill(1, 0);
    assert_eq!(
        leave(&mut *proto.connection(1), &client_id(1, 1)),
        (Vec::new(), Flow::Cut)
    );
    let (up, flow) = leave(&mut *proto.connection(2), &client_id(2, 1));
    assert_eq!((up.is_empty(), flow), (false, Flow::Go));
    // Worker 1 restarted: incarnation 2 speaks; incarnation 1 stays silenced.
    state.started(1, Handle::Task(tokio::spawn(async {}).abort_handle()));
    let (up, flow) = leave(&mut *proto.connection(1), &client_id(1, 2));
    assert_eq!((up.is_empty(), flow), (false, Flow::Go));
    assert_eq!(
        leave(&mut *proto.connection(1), &client_id(1, 1)).1,
        Flow::Cut
    );
}

/// A fetch and then `after` in one read from worker `worker`'s connection: the fetch's bytes,
/// what went on, and the connection's refusal.
fn fetch_then(run: &Arc<Observed>, worker: u32, after: &[u8]) -> (Bytes, Vec<u8>, Refusal) {
    let mut c = KafkaProtocol(run.clone()).connection(worker);
    let ok = write_request(&header(ApiKey::Fetch, 12, 1), &fetch(0, 0)).unwrap();
    let mut bytes = ok.to_vec();
    bytes.extend_from_slice(after);
    let mut out = Vec::new();
    assert_eq!(c.from_worker(&bytes, &mut out), Flow::Go);
    (ok, out, c.refusal().expect("refused"))
}

#[tokio::test]
async fn a_request_over_100_mib_or_of_negative_size_closes_the_connection_unanswered() {
    // A fetch goes on; the 2 GB frame after it in the same read is refused at its size,
    // nothing of it forwarded.
    let (_, run) = run(&[]);
    let (ok, out, r) = fetch_then(&run, 1, &[0x7F, 0xFF, 0xFF, 0xFF, 0, 12]);
    assert_eq!(out, ok);
    assert_eq!(
        r.why,
        "the worker sent a frame declaring 2147483647 bytes, over the broker's limit \
         (104857600) or negative"
    );
    assert!(r.to_worker.is_empty());
    // A negative size (0xFFFFFF00 = -256).
    let mut c = KafkaProtocol(run).connection(2);
    let mut out = Vec::new();
    c.from_worker(&[0xFF, 0xFF, 0xFF, 0x00], &mut out);
    assert!(out.is_empty());
    assert!(c.refusal().unwrap().why.contains("declaring -256 bytes"));
}

#[tokio::test]
async fn a_request_kafka_does_not_have_closes_the_connection_after_the_requests_before_it() {
    // A fetch, then a request of API key 0x7777 (30583), then another fetch, in one read: the
    // first fetch goes on; the bad request and what follows do not.
    let (_, run) = run(&[]);
    let mut after = vec![
        0, 0, 0, 12, 0x77, 0x77, 0, 0, 0, 0, 0, 2, b'g', b'a', b'r', b'b',
    ];
    after.extend_from_slice(&write_request(&header(ApiKey::Fetch, 12, 3), &fetch(0, 0)).unwrap());
    let (ok, out, r) = fetch_then(&run, 1, &after);
    assert_eq!(out, ok);
    assert_eq!(
        r.why,
        "the worker sent a request of API key 30583, which Kafka does not have: the broker \
         closes the connection"
    );
    assert!(r.to_worker.is_empty());
    // A frame of 4 bytes, too short for any request's header: refused at its size.
    let mut c = KafkaProtocol(run).connection(2);
    let mut out = Vec::new();
    c.from_worker(&[0, 0, 0, 4, 0, 3, 0, 1], &mut out);
    assert!(out.is_empty());
    assert!(c.refusal().unwrap().why.contains("frame length 4"));
}
