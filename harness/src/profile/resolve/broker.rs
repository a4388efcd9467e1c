//! `broker`: the broker kind and the keys of that kind, each named as the broker names it. A key
//! of another kind is an error naming the chosen kind's keys.

use std::time::Duration;

use crate::profile::defaults;
use crate::profile::duration::format_duration;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{BrokerKindName, ObserveName, QueueTypeName, RawBroker, StaleAckName};
use crate::profile::scenario::{
    BrokerKind, BrokerSpec, FifoSpec, Mode, NatsSpec, Observe, QueueName, RabbitMqSpec,
    RabbitQueueType, RedisStreamsSpec, StaleAck,
};

use super::checks::{at_least_one, positive};

/// The keys of each kind, as a profile writes them (besides `kind`).
pub const SQS_KEYS: &[&str] = &[
    "endpoint",
    "visibility_timeout",
    "max_receives",
    "stale_ack",
    "fifo",
    "dedup_window",
];
pub const RABBITMQ_KEYS: &[&str] = &[
    "url",
    "queue_type",
    "consumer_timeout",
    "timeout_check_every",
    "delivery_limit",
    "prefetch",
    "dead_letter",
    "arguments",
];
pub const NATS_KEYS: &[&str] = &[
    "url",
    "ack_wait",
    "max_deliver",
    "backoff",
    "max_ack_pending",
];
pub const REDIS_STREAMS_KEYS: &[&str] = &["url", "min_idle", "claim_every", "max_deliveries"];

/// Every kind: its name and its keys.
pub const KINDS: &[(&str, &[&str])] = &[
    ("sqs", SQS_KEYS),
    ("rabbitmq", RABBITMQ_KEYS),
    ("nats", NATS_KEYS),
    ("redis-streams", REDIS_STREAMS_KEYS),
];

pub fn resolve(mut raw: RawBroker, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let kind = raw.kind.unwrap_or(BrokerKindName::Sqs);
    check_keys(&raw, kind, path)?;
    let observe = match raw.observe {
        None | Some(ObserveName::Proxy) => Observe::Proxy,
        Some(ObserveName::None) => Observe::Direct,
    };
    let queue = queue_name(raw.queue.take(), raw.reuse.take(), path)?;
    let mut spec = match kind {
        BrokerKindName::Sqs => sqs(raw, path),
        BrokerKindName::RabbitMq => rabbitmq(raw, path),
        BrokerKindName::Nats => nats(raw, path),
        BrokerKindName::RedisStreams => redis_streams(raw, path),
    }?;
    if queue.reuse && !matches!(spec.kind, BrokerKind::RabbitMq(_)) {
        return Err(Problem::at_key(
            path.key("reuse"),
            format!(
                "reuse is for RabbitMQ queues (a framework that declares its queue itself); on \
                 {} a run creates its own queue or stream with the profile's settings and \
                 deletes it at the end",
                spec.kind.name()
            ),
        ));
    }
    spec.observe = observe;
    spec.queue = queue;
    Ok(spec)
}

/// `queue` and `reuse`: a name a broker takes for a queue, stream or subject token.
fn queue_name(
    name: Option<crate::profile::scalar::Text>,
    reuse: Option<bool>,
    path: &FieldPath,
) -> Result<QueueName, Problem> {
    let Some(name) = name.map(|n| n.0) else {
        if reuse.is_some() {
            return Err(Problem::at_key(
                path.key("reuse"),
                "goes with broker.queue: the name of an existing queue to use",
            ));
        }
        return Ok(QueueName::default());
    };
    let ok = !name.is_empty()
        && name.len() <= 80
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(Problem::new(
            path.key("queue"),
            format!(
                "a queue name is 1 to 80 characters of letters, digits, -, _ and . (a name every \
                 kind takes: SQS queue, RabbitMQ queue, NATS stream, Redis key), got {name:?}"
            ),
        ));
    }
    Ok(QueueName {
        name: Some(name),
        reuse: reuse.unwrap_or(false),
    })
}

/// `observe: none` (workers straight to the broker, no proxy) is for a live run on a real
/// broker without chaos: the embedded broker has no proxy to leave out, and kill rules need the
/// deliveries only the proxy sees.
pub fn check_observe(
    broker: &BrokerSpec,
    mode: Mode,
    chaos: usize,
    path: &FieldPath,
) -> Result<(), Problem> {
    if broker.observe == Observe::Proxy {
        return Ok(());
    }
    let embedded = broker.kind == BrokerKind::Sqs && broker.url.is_none();
    let why = if mode != Mode::Live {
        "observe: none is for live runs (mode: live): a sim run has no proxy"
    } else if embedded {
        "observe: none needs a real broker (rabbitmq, nats, redis-streams, or sqs with an \
         endpoint): the embedded SQS endpoint sees its workers itself, with no proxy"
    } else if chaos > 0 {
        "observe: none runs without chaos rules: a kill needs the deliveries only the proxy \
         sees (its point, its delivery number); remove chaos or use observe: proxy"
    } else {
        return Ok(());
    };
    Err(Problem::new(path.key("observe"), why))
}

/// What live runs cannot do with the broker. A FIFO queue runs live on the embedded SQS broker,
/// whose deduplication interval is the profile's window on the run's clock; not on an external
/// endpoint, whose interval is its own 5 minutes of wall time (SQS's, not settable), which a
/// scaled run's window does not match; nor with an ingress load, whose sends (their groups and
/// deduplication ids) are the system's own, not the run's. Every kind runs live otherwise.
pub fn check_mode(
    broker: &BrokerSpec,
    mode: Mode,
    ingress: bool,
    path: &FieldPath,
) -> Result<(), Problem> {
    if mode != Mode::Live || broker.fifo.is_none() {
        return Ok(());
    }
    let why = if broker.url.is_some() {
        "a FIFO queue runs live on the embedded SQS broker only (leave broker.endpoint out): an \
         external SQS endpoint deduplicates for its own fixed 5 minutes of wall time, which \
         neither broker.dedup_window nor run.time_scale changes"
    } else if ingress {
        "a FIFO queue runs live with ackbench's own producer only (leave workload.ingress out): \
         an ingress service's sends carry its own message groups and deduplication ids"
    } else {
        return Ok(());
    };
    Err(Problem::new(path.key("fifo"), why))
}

fn kind_name(kind: BrokerKindName) -> &'static str {
    match kind {
        BrokerKindName::Sqs => "sqs",
        BrokerKindName::RabbitMq => "rabbitmq",
        BrokerKindName::Nats => "nats",
        BrokerKindName::RedisStreams => "redis-streams",
    }
}

/// The keys set in `raw`, in the order [`KINDS`] lists them.
fn keys_set(raw: &RawBroker) -> Vec<&'static str> {
    let set = [
        raw.endpoint.is_some(),
        raw.visibility_timeout.is_some(),
        raw.max_receives.is_some(),
        raw.stale_ack.is_some(),
        raw.fifo.is_some(),
        raw.dedup_window.is_some(),
        raw.url.is_some(),
        raw.queue_type.is_some(),
        raw.consumer_timeout.is_some(),
        raw.timeout_check_every.is_some(),
        raw.delivery_limit.is_some(),
        raw.prefetch.is_some(),
        raw.dead_letter.is_some(),
        raw.arguments.is_some(),
        raw.url.is_some(),
        raw.ack_wait.is_some(),
        raw.max_deliver.is_some(),
        raw.backoff.is_some(),
        raw.max_ack_pending.is_some(),
        raw.url.is_some(),
        raw.min_idle.is_some(),
        raw.claim_every.is_some(),
        raw.max_deliveries.is_some(),
    ];
    KINDS
        .iter()
        .flat_map(|(_, keys)| keys.iter().copied())
        .zip(set)
        .filter_map(|(k, s)| s.then_some(k))
        .collect()
}

/// Refuses the first key that belongs to another kind.
fn check_keys(raw: &RawBroker, kind: BrokerKindName, path: &FieldPath) -> Result<(), Problem> {
    let name = kind_name(kind);
    let own = KINDS
        .iter()
        .find(|(k, _)| *k == name)
        .map_or(&[][..], |(_, keys)| keys);
    let Some(foreign) = keys_set(raw).into_iter().find(|k| !own.contains(k)) else {
        return Ok(());
    };
    let owners: Vec<&str> = KINDS
        .iter()
        .filter(|(_, keys)| keys.contains(&foreign))
        .map(|(k, _)| *k)
        .collect();
    let owner = match owners.as_slice() {
        [one] => format!("broker kind {one}"),
        many => format!("broker kinds {}", many.join(", ")),
    };
    Err(Problem::at_key(
        path.key(foreign),
        format!(
            "`{foreign}` is a key of {owner}, not of {name}; the keys of {name} are: {}",
            own.join(", ")
        ),
    ))
}

fn duration_or(d: Option<crate::profile::scalar::DurationText>, default: Duration) -> Duration {
    d.map_or(default, |d| d.0)
}

fn sqs(raw: RawBroker, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let vt_path = path.key("visibility_timeout");
    let visibility_timeout = positive(
        duration_or(raw.visibility_timeout, defaults::VISIBILITY_TIMEOUT),
        &vt_path,
    )?;
    if visibility_timeout > defaults::MAX_VISIBILITY_TIMEOUT {
        return Err(Problem::new(
            vt_path,
            format!(
                "must be at most 12h (SQS's maximum), got {}",
                format_duration(visibility_timeout)
            ),
        ));
    }
    let url = match raw.endpoint {
        None => None,
        Some(u) => Some(server_url(&u, &["http", "https"], &path.key("endpoint"))?),
    };
    let fifo = fifo(raw.fifo, raw.dedup_window, path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        kind: BrokerKind::Sqs,
        url,
        visibility_timeout,
        max_receives: raw.max_receives.unwrap_or(0),
        stale_ack: match raw.stale_ack {
            None | Some(StaleAckName::Reject) => StaleAck::Reject,
            Some(StaleAckName::Delete) => StaleAck::Delete,
            Some(StaleAckName::Ignore) => StaleAck::Ignore,
            Some(StaleAckName::Sqs) => StaleAck::Sqs,
        },
        fifo,
    })
}

/// `fifo` and `dedup_window`: a deduplication window belongs to a FIFO queue only (a standard
/// queue deduplicates nothing).
fn fifo(
    fifo: Option<bool>,
    window: Option<crate::profile::scalar::DurationText>,
    path: &FieldPath,
) -> Result<Option<FifoSpec>, Problem> {
    match (fifo.unwrap_or(false), window) {
        (false, Some(_)) => Err(Problem::at_key(
            path.key("dedup_window"),
            "a deduplication window belongs to a FIFO queue: set fifo: true (a standard queue \
             deduplicates nothing)",
        )),
        (false, None) => Ok(None),
        (true, window) => Ok(Some(FifoSpec {
            dedup_window: positive(
                duration_or(window, defaults::DEDUP_WINDOW),
                &path.key("dedup_window"),
            )?,
        })),
    }
}

fn rabbitmq(mut raw: RawBroker, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let queue_type = match raw.queue_type {
        None | Some(QueueTypeName::Quorum) => RabbitQueueType::Quorum,
        Some(QueueTypeName::Classic) => RabbitQueueType::Classic,
    };
    let consumer_timeout = positive(
        duration_or(raw.consumer_timeout, defaults::RABBITMQ_CONSUMER_TIMEOUT),
        &path.key("consumer_timeout"),
    )?;
    let timeout_check_every = positive(
        duration_or(
            raw.timeout_check_every,
            defaults::RABBITMQ_TIMEOUT_CHECK_EVERY,
        ),
        &path.key("timeout_check_every"),
    )?;
    let delivery_limit =
        match (queue_type, raw.delivery_limit) {
            (RabbitQueueType::Classic, Some(_)) => return Err(Problem::at_key(
                path.key("delivery_limit"),
                "a classic queue has no delivery limit: delivery_limit needs queue_type: quorum",
            )),
            (RabbitQueueType::Classic, None) => 0,
            (RabbitQueueType::Quorum, l) => l.unwrap_or(defaults::RABBITMQ_DELIVERY_LIMIT),
        };
    let prefetch = at_least_one(
        raw.prefetch.unwrap_or(1),
        &path.key("prefetch"),
        "a consumer with no prefetch gets nothing",
    )?;
    let url = kind_url(raw.url, defaults::RABBITMQ_URL, &["amqp", "amqps"], path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url,
        kind: BrokerKind::RabbitMq(RabbitMqSpec {
            queue_type,
            timeout_check_every,
            prefetch,
            dead_letter: raw.dead_letter.unwrap_or(true),
            arguments: match raw.arguments.take() {
                Some(m) => arguments(m, &path.key("arguments"))?,
                None => Vec::new(),
            },
        }),
        visibility_timeout: consumer_timeout,
        // The (L+1)-th return dead-letters: L + 1 deliveries.
        max_receives: if delivery_limit == 0 {
            0
        } else {
            delivery_limit.saturating_add(1)
        },
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}

fn nats(raw: RawBroker, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let ack_wait = positive(
        duration_or(raw.ack_wait, defaults::NATS_ACK_WAIT),
        &path.key("ack_wait"),
    )?;
    let backoff_path = path.key("backoff");
    let mut backoff = Vec::new();
    for (i, d) in raw.backoff.unwrap_or_default().into_iter().enumerate() {
        backoff.push(positive(d.0, &backoff_path.index(i))?);
    }
    let max_deliver = raw.max_deliver.unwrap_or(0);
    if max_deliver > 0 && !backoff.is_empty() && max_deliver as usize <= backoff.len() {
        return Err(Problem::new(
            path.key("max_deliver"),
            format!(
                "must be more than the number of backoff values ({}), as the server requires, \
                 got {max_deliver}",
                backoff.len()
            ),
        ));
    }
    let max_ack_pending = at_least_one(
        raw.max_ack_pending
            .unwrap_or(defaults::NATS_MAX_ACK_PENDING),
        &path.key("max_ack_pending"),
        "a consumer allowed no pending ack gets nothing",
    )?;
    let url = kind_url(raw.url, defaults::NATS_URL, &["nats", "tls"], path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url,
        // With a backoff the server takes its first value as the AckWait.
        visibility_timeout: backoff.first().copied().unwrap_or(ack_wait),
        kind: BrokerKind::Nats(NatsSpec {
            backoff,
            max_ack_pending,
        }),
        max_receives: max_deliver,
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}

fn redis_streams(raw: RawBroker, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let min_idle = positive(
        duration_or(raw.min_idle, defaults::REDIS_MIN_IDLE),
        &path.key("min_idle"),
    )?;
    let url = kind_url(raw.url, defaults::REDIS_URL, &["redis", "rediss"], path)?;
    Ok(BrokerSpec {
        observe: Observe::Proxy,
        queue: QueueName::default(),
        url,
        kind: BrokerKind::RedisStreams(RedisStreamsSpec {
            claim_every: duration_or(raw.claim_every, Duration::ZERO),
        }),
        visibility_timeout: min_idle,
        max_receives: raw.max_deliveries.unwrap_or(0),
        stale_ack: StaleAck::Reject,
        fifo: None,
    })
}

/// `broker.url` of a real-server kind, or the kind's local default.
fn kind_url(
    url: Option<String>,
    default: &str,
    schemes: &[&str],
    path: &FieldPath,
) -> Result<Option<String>, Problem> {
    match url {
        None => Ok(Some(default.to_string())),
        Some(u) => server_url(&u, schemes, &path.key("url")).map(Some),
    }
}

/// A server URL with one of `schemes` and a host.
fn server_url(text: &str, schemes: &[&str], path: &FieldPath) -> Result<String, Problem> {
    let u = url::Url::parse(text)
        .map_err(|e| Problem::new(path.clone(), format!("is not a URL ({e}): `{text}`")))?;
    if !schemes.contains(&u.scheme()) {
        return Err(Problem::new(
            path.clone(),
            format!(
                "must be a URL with scheme {}, got `{}` in `{text}`",
                schemes.join(" or "),
                u.scheme()
            ),
        ));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(Problem::new(
            path.clone(),
            format!("names no host: `{text}`"),
        ));
    }
    Ok(text.to_string())
}

/// `arguments` (rabbitmq): queue arguments by name, each text (`{queue}` allowed), a number or
/// a boolean.
fn arguments(
    map: yaml_serde::Mapping,
    path: &FieldPath,
) -> Result<Vec<(String, crate::profile::message::Node)>, Problem> {
    use crate::profile::message::Node;
    let mut out = Vec::new();
    for (k, v) in map {
        let Some(name) = k.as_str().map(str::to_string) else {
            return Err(Problem::at_key(
                path.clone(),
                "argument names are text, e.g. x-max-priority",
            ));
        };
        let at = path.key(&name);
        let node = super::message::node(v, &at)?;
        if matches!(
            node,
            Node::List(_) | Node::Map(_) | Node::Json(_) | Node::Base64(_)
        ) {
            return Err(Problem::new(
                at,
                "a queue argument is text, a number or a boolean",
            ));
        }
        out.push((name, node));
    }
    Ok(out)
}
