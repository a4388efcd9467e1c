//! `broker`: the broker kind and the keys of that kind, each named as the broker names it. A key
//! of another kind is an error naming the chosen kind's keys.

use crate::profile::kinds;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{ObserveName, RawBroker};
use crate::profile::scenario::{BrokerSpec, Mode, Observe, QueueName};

pub fn resolve(mut raw: RawBroker, path: &FieldPath) -> Result<BrokerSpec, Problem> {
    let kind = raw.kind.map_or(kinds::DEFAULT, |k| k.0);
    super::broker_keys::check(&raw, kind, path)?;
    let observe = match raw.observe {
        None | Some(ObserveName::Proxy) => Observe::Proxy,
        Some(ObserveName::None) => Observe::Direct,
    };
    let queue = queue_name(raw.queue.take(), raw.reuse.take(), path)?;
    // What is left besides the kind's own keys is another kind's key set to nothing.
    let mut own = std::mem::take(&mut raw.own);
    own.retain(|k, _| k.as_str().is_some_and(|k| kind.keys.contains(&k)));
    let own = yaml_serde::Value::Mapping(own);
    let mut spec = (kind.resolve)(&own, path)?;
    if queue.reuse && !kind.can.reuse_queue {
        return Err(Problem::at_key(
            path.key("reuse"),
            format!(
                "reuse is for the queues of {} (a framework that declares its queue itself); \
                 on {} a run creates its own queue or stream with the profile's settings and \
                 deletes it at the end",
                kinds::names_where(|k| k.can.reuse_queue),
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
