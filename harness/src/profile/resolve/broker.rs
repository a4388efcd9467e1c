//! `broker`: the broker kind and the keys of that kind, each named as the broker names it. A key
//! of another kind is an error naming the chosen kind's keys.

use std::time::Duration;

use crate::profile::kinds::{self, KindDescriptor};
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{ObserveName, RawBroker};
use crate::profile::scenario::{BrokerSpec, Mode, Observe, QueueName};

pub fn resolve(mut raw: RawBroker, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let kind = raw.kind.map_or(kinds::DEFAULT, |k| k.0);
    check_keys(&raw, kind, path)?;
    let observe = match raw.observe {
        None | Some(ObserveName::Proxy) => Observe::Proxy,
        Some(ObserveName::None) => Observe::Direct,
    };
    let queue = queue_name(raw.queue.take(), raw.reuse.take(), path)?;
    let mut spec = (kind.resolve)(raw, path)?;
    if queue.reuse && !kind.can.reuse_queue {
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
    let embedded = kinds::embedded(broker.kind.descriptor()) && broker.url.is_none();
    let why = if mode != Mode::Live {
        "observe: none is for live runs (mode: live): a sim run has no proxy".to_string()
    } else if embedded {
        format!(
            "observe: none needs a real broker ({}): the embedded broker sees its workers \
             itself, with no proxy",
            kinds::real_brokers()
        )
    } else if chaos > 0 {
        "observe: none runs without chaos rules: a kill needs the deliveries only the proxy \
         sees (its point, its delivery number); remove chaos or use observe: proxy"
            .to_string()
    } else {
        return Ok(());
    };
    Err(Problem::new(path.key("observe"), why))
}

/// What live runs cannot do with the broker. A kind no broker on this machine runs
/// ([`kinds::Live::Refused`]) is refused at `broker.kind`. A FIFO queue runs live on the embedded SQS broker,
/// whose deduplication interval is the profile's window on the run's clock; not on an external
/// endpoint, whose interval is its own 5 minutes of wall time (SQS's, not settable), which a
/// scaled run's window does not match; nor with an ingress load, whose sends (their groups and
/// deduplication ids) are the system's own, not the run's.
pub fn check_mode(
    broker: &BrokerSpec,
    mode: Mode,
    ingress: bool,
    path: &FieldPath,
) -> Result<(), Problem> {
    if mode != Mode::Live {
        return Ok(());
    }
    let kind = broker.kind.descriptor();
    if let kinds::Live::Refused { why } = kind.live {
        return Err(Problem::new(
            path.key("kind"),
            format!("live mode cannot run broker.kind: {}: {why}", kind.name),
        ));
    }
    if broker.fifo.is_none() {
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

/// Refuses the first key that belongs to another kind.
fn check_keys(raw: &RawBroker, kind: &KindDescriptor, path: &FieldPath) -> Result<(), Problem> {
    let name = kind.name;
    let own = kind.keys;
    let set = raw.keys_set();
    let is_set = |key: &str| set.iter().any(|(k, s)| *k == key && *s);
    let Some(foreign) = kinds::KINDS
        .iter()
        .flat_map(|k| k.keys.iter().copied())
        .filter(|k| is_set(k))
        .find(|k| !own.contains(k))
    else {
        return Ok(());
    };
    let owners: Vec<&str> = kinds::KINDS
        .iter()
        .filter(|k| k.keys.contains(&foreign))
        .map(|k| k.name)
        .collect();
    let owner = match owners.as_slice() {
        [one] => format!("broker kind {one}"),
        many => format!("broker kinds {}", many.join(", ")),
    };
    Err(Problem::at_key(
        path.key(foreign),
        format!(
            "`{foreign}` is a key of {owner}, not of {name}; the keys of {name} are: {}",
            kind.every_key().join(", ")
        ),
    ))
}

pub(in crate::profile) fn duration_or(
    d: Option<crate::profile::scalar::DurationText>,
    default: Duration,
) -> Duration {
    d.map_or(default, |d| d.0)
}

/// `broker.url` of a real-server kind, or the kind's local default.
pub(in crate::profile) fn kind_url(
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
pub(in crate::profile) fn server_url(
    text: &str,
    schemes: &[&str],
    path: &FieldPath,
) -> Result<String, Problem> {
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
