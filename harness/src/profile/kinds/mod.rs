//! The broker kinds: one [`KindDescriptor`] per kind, in a file of its own (`sqs.rs`,
//! `rabbitmq.rs`, `nats.rs`, `redis_streams.rs`, `kafka.rs`, `kafka_share.rs`), with the code that reads the
//! kind's keys.
//!
//! A descriptor says everything the profile, the reports and sizing need to know of a kind without
//! naming it: its name in a profile, its keys, its lease and delivery limit (the key, the kind's
//! words for it, how it counts), what it calls a message it gave up on, what it can do (extend a
//! lease, release with a delay, how it settles), whether a consumer on it can run on the scaled
//! clock, the run variables its workers are told, and KEDA's scaler for it. Code outside a kind's
//! own files reads the descriptor ([`super::BrokerKind::descriptor`]); it never compares a kind's
//! name (`tests.rs` checks it, and ARCHITECTURE.md's "Add a broker kind" against the code).

use super::message::Carrier;
use super::message_action::MessageAction;
use super::path::FieldPath;
use super::problem::Problem;

pub mod kafka;
pub mod kafka_share;
pub mod keda;
mod kind_name;
pub mod nats;
pub mod rabbitmq;
mod read;
pub mod redis_streams;
pub mod spec;
pub mod sqs;
pub mod words;

pub use kind_name::KindName;
use spec::BrokerSpec;
pub use words::KindWords;

#[cfg(test)]
pub(in crate::profile) mod tests;

/// Every kind, in the order messages list them.
pub const KINDS: &[&KindDescriptor] = &[
    &sqs::KIND,
    &rabbitmq::KIND,
    &nats::KIND,
    &redis_streams::KIND,
    &kafka::KIND,
    &kafka_share::KIND,
];

/// The kind of a profile that names none, and of a record or summary.json that has no
/// `broker_kind` (written before there were kinds).
pub const DEFAULT: &KindDescriptor = &sqs::KIND;

/// What the profile, the reports and sizing know of one broker kind.
#[derive(Debug)]
pub struct KindDescriptor {
    /// `broker.kind` as a profile writes it, and as run.json's and summary.json's
    /// `broker_kind` name it.
    pub name: &'static str,
    /// Other names a profile may give it.
    pub aliases: &'static [&'static str],
    /// Its keys under `broker` (besides `kind` and the keys of every kind: `observe`, `queue`,
    /// `reuse`), in the order messages list them.
    pub keys: &'static [&'static str],
    pub lease: Lease,
    /// `None`: the kind has no delivery limit (Kafka: a record is fetched again for as long as
    /// its offset is not committed).
    pub limit: Option<Limit>,
    /// `None`: the kind hands a consumer one message at a time. `Some`: a poll returns a batch
    /// of records, all handled one by one before the next poll, so the lease (a
    /// [`LeaseRole::PollInterval`]) must cover the whole batch, not one record.
    pub batch: Option<Batch>,
    pub dlq: Dlq,
    pub can: Capabilities,
    pub scaled_clock: ScaledClock,
    pub live: Live,
    /// The `message` faults (`chaos[].message`) a live run of the kind applies.
    pub live_message: LiveMessageFaults,
    pub connections: Connections,
    /// How it carries a message besides its body (`workload.message`).
    pub carrier: Carrier,
    /// `Some`: a framework preset may declare the kind's queue itself ([`QueueByFramework`]).
    pub queue_by_framework: Option<QueueByFramework>,
    /// The run variables it tells its workers besides every kind's
    /// ([`super::run_variables::EVERY_KIND`]).
    pub run_variables: &'static [&'static str],
    /// What the reports call its messages, its settling, its lease's end and a stale ack
    /// ([`words::QUEUE`] for a queue).
    pub words: KindWords,
    /// KEDA's scaler for it, for the `ScaledObject` sizing writes; `None` when KEDA has none.
    pub keda: Option<keda::KedaScaler>,
    /// Reads the kind's own keys under `broker` (a mapping of them, already checked to be the
    /// kind's) into a [`BrokerSpec`]; `broker.observe`, `broker.queue` and `broker.reuse` are
    /// filled in after.
    pub(in crate::profile) resolve:
        fn(&yaml_serde::Value, &FieldPath) -> Result<BrokerSpec, Problem>,
}

impl PartialEq for KindDescriptor {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for KindDescriptor {}

/// The keys under `broker` of every kind, besides a kind's own: `kind` first, then these
/// (`reuse` only where the kind can take an existing queue, [`Capabilities::reuse_queue`]).
pub const EVERY_KIND_KEYS: &[&str] = &["observe", "queue"];

impl KindDescriptor {
    /// Every key a profile of this kind may write under `broker`, in the order messages list
    /// them: `kind`, the kind's own keys, then every kind's (`observe`, `queue`, and `reuse`
    /// where the kind takes it).
    pub fn every_key(&self) -> Vec<&'static str> {
        let mut keys = vec!["kind"];
        keys.extend_from_slice(self.keys);
        keys.extend_from_slice(EVERY_KIND_KEYS);
        if self.can.reuse_queue {
            keys.push("reuse");
        }
        keys
    }

    /// The value of the kind's delivery-limit key that allows `deliveries` deliveries (0 = no
    /// limit, which stays 0; always 0 for a kind with no limit).
    pub fn limit_value(&self, deliveries: u32) -> u32 {
        self.limit.as_ref().map_or(0, |l| l.value(deliveries))
    }
}

/// A kind whose consumers' frameworks declare the queue themselves (Celery's and Dramatiq's on
/// RabbitMQ: a classic queue with their own arguments): a run with the framework's message
/// format declares it the same way, unless the profile says how with one of `keys`.
#[derive(Debug)]
pub struct QueueByFramework {
    /// The kind's keys that say how the queue is declared.
    pub keys: &'static [&'static str],
    /// Declares the queue as the framework does, with the framework's queue arguments.
    pub declare: fn(&mut BrokerSpec, &[(String, super::message::Node)]),
}

/// Whether a live run can use this kind on this machine.
#[derive(Debug)]
pub enum Live {
    Runs,
    /// Refused with exit 2 at `broker.kind`, saying why.
    Refused {
        why: &'static str,
    },
}

/// Which `message` fault actions a live run applies on a kind (its proxy, or its embedded
/// endpoint, sees each delivery and ack); the others are refused with exit 2 and `why_not`.
#[derive(Debug)]
pub struct LiveMessageFaults {
    pub actions: &'static [MessageAction],
    /// Why the others are refused (empty when `actions` has them all).
    pub why_not: &'static str,
    /// With an external server of the kind (`broker.endpoint`): none is applied, for this
    /// reason.
    pub external: Option<&'static str>,
}

/// Whether a live run can act on its workers' connections to the broker (`chaos[].connection`);
/// a sim run models them on every kind.
#[derive(Debug)]
pub enum Connections {
    /// ackbench is on each worker's path to the broker (the embedded endpoint, or the kind's
    /// protocol proxy with `broker.observe: proxy`) and acts on it.
    Seen,
    /// As `Seen` on the embedded broker; on an external server (`broker.endpoint`) not, for
    /// this reason.
    Embedded { external: &'static str },
    /// A live run on this kind does not act on them, for this reason.
    Unseen { why: &'static str },
}

/// [`Connections::Unseen`]'s reason while a kind's live path has no connection faults.
pub const CONNECTIONS_SIM_ONLY: &str =
    "ackbench's live path to this broker does not cut, delay or hold a worker's frames; \
     connection faults are modelled in sim mode (mode: sim)";

/// The lease, by meaning: how long a delivery may stay unsettled before the broker lets another
/// consumer have the message ([`BrokerSpec::lease`]).
#[derive(Debug)]
pub struct Lease {
    /// The profile key that sets it.
    pub key: &'static str,
    /// The kind's words for it, in reports (`visibility timeout`, `AckWait`, ...).
    pub words: &'static str,
    pub role: LeaseRole,
}

/// What the kind's lease is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseRole {
    /// A lease: the message is the holder's until it runs out, a dead holder's too (its message
    /// waits for it), so it is the recovery time after a death.
    Lease,
    /// A guard against a consumer that is alive but stuck (RabbitMQ's counted in minutes): a
    /// consumer that dies hands its messages back at once (its connection closes). `--vary broker.kind` does
    /// not carry a lease into it, and sizing prices it as the stuck consumer's hold only.
    StuckConsumerGuard,
    /// A guard against a consumer that is alive but stuck between two polls (Kafka's
    /// `max.poll.interval.ms`): a consumer that dies hands its messages back after a session
    /// timeout of the kind's own (it stops heartbeating), not after this. `--vary broker.kind`
    /// does not carry a lease into it.
    PollInterval,
}

/// The delivery limit, by meaning: how many deliveries a message gets before the broker gives
/// up on it ([`BrokerSpec::max_deliveries`], 0 = no limit).
#[derive(Debug)]
pub struct Limit {
    /// The profile key that sets it.
    pub key: &'static str,
    /// The kind's words for it (`maxReceiveCount`, `MaxDeliver`, ...).
    pub words: &'static str,
    pub counts: LimitCounts,
}

/// What the kind's delivery-limit key counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitCounts {
    /// Deliveries: the key is the number of deliveries allowed.
    Deliveries,
    /// Returns (RabbitMQ's `delivery_limit`): one fewer than the deliveries allowed.
    Returns,
}

impl Limit {
    /// The value of the key that allows `deliveries` deliveries (0 = no limit, which stays 0).
    pub fn value(&self, deliveries: u32) -> u32 {
        match self.counts {
            LimitCounts::Deliveries => deliveries,
            LimitCounts::Returns => deliveries.saturating_sub(1),
        }
    }
}

/// A poll's batch, by meaning: at most how many records one poll returns.
#[derive(Debug)]
pub struct Batch {
    /// The profile key that sets it.
    pub key: &'static str,
    /// The kind's words for it (`max.poll.records`).
    pub words: &'static str,
}

/// What the kind calls a message it gave up on (summary.json's `dlq` counts them all).
#[derive(Debug)]
pub struct Dlq {
    /// What happened to it, after "had its message".
    pub gave_up: &'static str,
    /// The note of the DLQ row in the console and the pages ("" when the row says it already).
    pub row: &'static str,
}

/// What a consumer can do with a delivery on this kind, and how it settles.
#[derive(Debug)]
pub struct Capabilities {
    /// Extend its lease while it works (a heartbeat).
    pub extend: bool,
    /// Hand a message back to be delivered again after a delay of its choosing (not only at
    /// once).
    pub release_with_delay: bool,
    pub settle: Settle,
    /// Take an existing queue of the consumer's framework (`broker.reuse`).
    pub reuse_queue: bool,
}

/// How a consumer tells the broker a message is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// One ack per message (or delivery): every kind so far.
    PerMessage,
    /// A committed offset, which settles every record before it in its partition.
    Offsets,
}

/// Whether a consumer program on this kind can run on the scaled clock, and why not where it
/// cannot (`consumer.clock: scaled`).
#[derive(Debug)]
pub enum ScaledClock {
    /// The embedded broker converts the durations a consumer sends; an external server of the
    /// kind (`broker.endpoint`) cannot, for this reason.
    Embedded { external: &'static str },
    /// The kind's protocol proxy converts them (`runner/live/kinds/<kind>/`); with
    /// `broker.observe: none` the workers reach `server` directly, and only the proxy's
    /// `converts`.
    Proxy {
        server: &'static str,
        converts: &'static str,
    },
    /// Nothing on the kind's live path converts them, for this reason: its consumers run on
    /// the real clock and are told their durations in wall time.
    Unconverted { why: &'static str },
}

/// The kind a profile (or a record) names `name`, by its name or an alias.
pub fn named(name: &str) -> Option<&'static KindDescriptor> {
    KINDS
        .iter()
        .copied()
        .find(|k| k.name == name || k.aliases.contains(&name))
}

/// Every name a profile may give a kind, each kind's aliases before its name: what an unknown
/// `broker.kind` is told.
pub fn names() -> &'static [&'static str] {
    static NAMES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    NAMES.get_or_init(|| {
        KINDS
            .iter()
            .flat_map(|k| k.aliases.iter().copied().chain([k.name]))
            .collect()
    })
}

/// The kinds a live run drives on a real broker, as help and messages list them ("a, b, or c"):
/// every kind that runs live, one whose live runs default to its embedded broker said `with an
/// endpoint`.
pub fn real_brokers() -> String {
    let names: Vec<String> = runs_live()
        .map(|k| match k.connections {
            Connections::Embedded { .. } => format!("{} with an endpoint", k.name),
            _ => k.name.to_string(),
        })
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{}, or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

/// The names of the kinds for which `pred` holds, in the table's order, as a sentence lists
/// them ("a, b and c"; empty when none).
pub fn names_where(pred: impl Fn(&KindDescriptor) -> bool) -> String {
    let names: Vec<&str> = KINDS.iter().filter(|k| pred(k)).map(|k| k.name).collect();
    sentence(&names)
}

/// Words as a sentence lists them: "a, b and c".
pub fn sentence(words: &[&str]) -> String {
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => words.concat(),
    }
}

/// The kinds a live run takes ([`Live::Runs`]), in the order messages list them.
pub fn runs_live() -> impl Iterator<Item = &'static KindDescriptor> {
    KINDS
        .iter()
        .copied()
        .filter(|k| matches!(k.live, Live::Runs))
}

/// Whether live runs of `kind` default to ackbench's embedded broker of the kind (no
/// `broker.url`), which sees its workers itself.
pub fn embedded(kind: &KindDescriptor) -> bool {
    matches!(kind.connections, Connections::Embedded { .. })
}

/// The kinds whose live runs default to ackbench's embedded broker, by name, joined by "or".
#[cfg_attr(not(feature = "live"), allow(dead_code))] // a live run's message
pub fn embedded_names() -> String {
    let names: Vec<&str> = KINDS
        .iter()
        .filter(|k| embedded(k))
        .map(|k| k.name)
        .collect();
    names.join(" or ")
}

/// The kinds whose workers are told `name`, by name; empty when no kind's are.
pub fn telling(name: &str) -> Vec<&'static str> {
    KINDS
        .iter()
        .filter(|k| k.run_variables.contains(&name))
        .map(|k| k.name)
        .collect()
}
