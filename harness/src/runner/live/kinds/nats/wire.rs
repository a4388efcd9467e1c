//! A scaled consumer's durations on the NATS wire. A consumer on the scaled clock
//! (`consumer.clock: scaled`) writes every duration in profile time, while the server runs on
//! wall time: the worker's proxy multiplies each by the run's time scale on the way to the
//! server, and divides each the server sends back by it. All are nanoseconds.
//!
//! To the server:
//! - a pull request (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`, or the JSON after an
//!   ack's `+NXT`): `expires`, `idle_heartbeat`;
//! - a NAK's redelivery delay: `-NAK {"delay": ns}`, or `-NAK <duration>` (Go's form, `5s`),
//!   which reaches the server as `-NAK {"delay": ns}`;
//! - a consumer create (`$JS.API.CONSUMER.CREATE.…`, `$JS.API.CONSUMER.DURABLE.CREATE.…`):
//!   its `config`'s `ack_wait`, `backoff`, `idle_heartbeat`, `inactive_threshold`,
//!   `max_expires`;
//! - a stream create or update (`$JS.API.STREAM.CREATE.…`, `$JS.API.STREAM.UPDATE.…`): the
//!   config's `max_age`, `duplicate_window`, `subject_delete_marker_ttl`,
//!   `consumer_limits.inactive_threshold`.
//!
//! Back to the consumer, in the answer to any `$JS.API.CONSUMER.…` or `$JS.API.STREAM.…`
//! request: the same config durations of a consumer or stream info, one by one in a list's
//! `consumers` or `streams`, and the `active` of each `cluster.replicas` entry (and of a
//! stream's `mirror` and `sources`): how long ago a peer was heard from.
//!
//! Not converted: timestamps (the `created` and `ts` of an info, a delivery's timestamp in its
//! ack subject: the server's own clock), counts and sizes, headers (`Nats-Expected-…`,
//! `Nats-Msg-Id` and the status headers of a pull carry none; `Nats-TTL`, a per-message age
//! limit on publishes of server 2.11, is passed on as written), and any text (the description
//! of an error such as `Exceeded MaxRequestExpires of 5s`). A JetStream domain's API
//! (`$JS.<domain>.API.…`) is read as `$JS.API.…`; an API imported under another prefix is not
//! recognised.

use serde_json::Value;

/// The run's time scale, for a consumer on the scaled clock (wall seconds per profile second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wire {
    time_scale: f64,
}

/// A JetStream API request whose answer holds durations: about a consumer or a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Consumer,
    Stream,
}

/// What a publish from the worker is, for the conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Publish {
    /// A pull request.
    Pull,
    /// An ack reply subject's payload.
    Ack,
    /// A JetStream API request: `config` says whether it carries a config (a create).
    Api {
        api: Api,
        config: bool,
    },
    Other,
}

/// The durations of a consumer's config, as paths in its JSON (`[]`: each element).
const CONSUMER_CONFIG: &[&str] = &[
    "ack_wait",
    "backoff[]",
    "idle_heartbeat",
    "inactive_threshold",
    "max_expires",
];
/// The durations of a stream's config.
const STREAM_CONFIG: &[&str] = &[
    "max_age",
    "duplicate_window",
    "subject_delete_marker_ttl",
    "consumer_limits.inactive_threshold",
];
/// The durations of a pull request.
const PULL: &[&str] = &["expires", "idle_heartbeat"];
/// The durations of an info besides its config: how long ago each peer was heard from.
const CONSUMER_INFO: &[&str] = &["cluster.replicas[].active"];
const STREAM_INFO: &[&str] = &[
    "cluster.replicas[].active",
    "mirror.active",
    "sources[].active",
];

impl Wire {
    /// `time_scale`: wall seconds per profile second (0 < `time_scale` <= 1).
    pub fn new(time_scale: f64) -> Wire {
        Wire { time_scale }
    }

    /// Wall nanoseconds for `ns` profile nanoseconds; a duration that was not 0 stays not 0
    /// (a pull's `expires` of 0 would wait for ever).
    fn to_server(self, ns: u64) -> u64 {
        let wall = (ns as f64 * self.time_scale).round() as u64;
        if ns > 0 {
            wall.max(1)
        } else {
            0
        }
    }

    /// Profile nanoseconds for `ns` wall nanoseconds.
    fn to_consumer(self, ns: u64) -> u64 {
        (ns as f64 / self.time_scale).round() as u64
    }

    /// The payload a worker's publish to `subject` reaches the server with (`None`: as it is),
    /// and the kind of answer to convert when the server answers on the publish's reply inbox.
    pub fn publish(self, subject: &str, payload: &[u8]) -> (Option<Vec<u8>>, Option<Api>) {
        let to = |ns| self.to_server(ns);
        match classify(subject) {
            Publish::Pull => (json(payload, &[PULL], to), None),
            Publish::Ack => (self.ack(payload), None),
            Publish::Api { api, config } => {
                let payload = match (config, api) {
                    (false, _) => None,
                    (true, Api::Consumer) => {
                        json(payload, &[&prefixed("config.", CONSUMER_CONFIG)[..]], to)
                    }
                    (true, Api::Stream) => json(payload, &[STREAM_CONFIG], to),
                };
                (payload, Some(api))
            }
            Publish::Other => (None, None),
        }
    }

    /// The payload of the server's answer to an `api` request, in the consumer's time (`None`:
    /// as it is).
    pub fn answer(self, api: Api, payload: &[u8]) -> Option<Vec<u8>> {
        let (config, info, list) = match api {
            Api::Consumer => (CONSUMER_CONFIG, CONSUMER_INFO, "consumers[]."),
            Api::Stream => (STREAM_CONFIG, STREAM_INFO, "streams[]."),
        };
        let one: Vec<String> = prefixed("config.", config)
            .into_iter()
            .chain(info.iter().map(|p| p.to_string()))
            .collect();
        let each = prefixed(list, &one.iter().map(String::as_str).collect::<Vec<_>>());
        json(payload, &[&one[..], &each[..]], |ns| self.to_consumer(ns))
    }

    /// An ack's payload with its durations in wall time: a NAK's delay, a `+NXT`'s pull request.
    fn ack(self, payload: &[u8]) -> Option<Vec<u8>> {
        // The server reads an ack by its first bytes, as sent.
        let text = std::str::from_utf8(payload).ok()?;
        if let Some(rest) = text.strip_prefix("+NXT") {
            let request = json(rest.trim().as_bytes(), &[PULL], |ns| self.to_server(ns))?;
            return Some([b"+NXT ".as_slice(), &request].concat());
        }
        let arg = text.strip_prefix("-NAK")?.trim();
        if arg.is_empty() {
            return None;
        }
        if arg.starts_with('{') {
            let delay = json(arg.as_bytes(), &[&["delay"]], |ns| self.to_server(ns))?;
            return Some([b"-NAK ".as_slice(), &delay].concat());
        }
        // The server reads any other argument as Go's duration form (`5s`, `1m30s`).
        let delay = crate::profile::parse_duration(arg).ok()?;
        let wall = self.to_server(crate::record::nanos(delay));
        Some(format!("-NAK {{\"delay\":{wall}}}").into_bytes())
    }
}

/// What a publish to `subject` is. The API is `$JS.API.…`, or `$JS.<domain>.API.…`.
fn classify(subject: &str) -> Publish {
    if subject.starts_with("$JS.ACK.") {
        return Publish::Ack;
    }
    let Some(rest) = subject.strip_prefix("$JS.") else {
        return Publish::Other;
    };
    let api = match rest.strip_prefix("API.") {
        Some(api) => api,
        None => match rest.split_once(".API.") {
            Some((domain, api)) if !domain.contains('.') => api,
            _ => return Publish::Other,
        },
    };
    if api.starts_with("CONSUMER.MSG.NEXT.") {
        return Publish::Pull;
    }
    let create = |tail: &str, names: &[&str]| names.iter().any(|n| tail.starts_with(n));
    if let Some(tail) = api.strip_prefix("CONSUMER.") {
        return Publish::Api {
            api: Api::Consumer,
            config: create(tail, &["CREATE.", "DURABLE.CREATE."]),
        };
    }
    if let Some(tail) = api.strip_prefix("STREAM.") {
        return Publish::Api {
            api: Api::Stream,
            config: create(tail, &["CREATE.", "UPDATE."]),
        };
    }
    Publish::Other
}

/// `paths` each after `prefix`.
fn prefixed(prefix: &str, paths: &[&str]) -> Vec<String> {
    paths.iter().map(|p| format!("{prefix}{p}")).collect()
}

/// `payload` as JSON with `f` applied to the number at each of `paths` (`a.b[].c`); `None` when
/// it is not JSON or no number there changed.
fn json<P: AsRef<str>>(payload: &[u8], paths: &[&[P]], f: impl Fn(u64) -> u64) -> Option<Vec<u8>> {
    let mut v: Value = serde_json::from_slice(payload).ok()?;
    let mut changed = false;
    for path in paths.iter().flat_map(|ps| ps.iter()) {
        let segments: Vec<&str> = path.as_ref().split('.').collect();
        changed |= convert(&mut v, &segments, &f);
    }
    changed.then(|| serde_json::to_vec(&v).ok()).flatten()
}

/// Applies `f` to the number at `path` under `v`; true if one changed.
fn convert(v: &mut Value, path: &[&str], f: &impl Fn(u64) -> u64) -> bool {
    let Some((first, rest)) = path.split_first() else {
        let Some(n) = v.as_u64() else {
            return false;
        };
        let m = f(n);
        *v = Value::from(m);
        return m != n;
    };
    let (name, each) = match first.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (*first, false),
    };
    let Some(child) = v.get_mut(name) else {
        return false;
    };
    match (each, child.as_array_mut()) {
        (true, Some(items)) => items
            .iter_mut()
            .fold(false, |changed, item| convert(item, rest, f) | changed),
        (true, None) => false,
        (false, _) => convert(child, rest, f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Thursday's scale in the tests below: 1 profile second is 20 ms of wall time.
    const W: Wire = Wire { time_scale: 0.02 };

    fn text(bytes: Option<Vec<u8>>) -> Option<String> {
        bytes.map(|b| String::from_utf8(b).unwrap())
    }

    fn json_of(bytes: Option<Vec<u8>>) -> Value {
        serde_json::from_slice(&bytes.expect("converted")).unwrap()
    }

    #[test]
    fn a_pull_requests_expiry_and_heartbeat_reach_the_server_in_wall_time() {
        // nats-py's fetch(1, timeout=5): expires 5 s - 0.1 ms = 4_999_900_000 ns of profile
        // time; x 0.02 = 99_998_000 ns. The heartbeat 1 s: 20_000_000 ns. The batch is a count.
        let (payload, answer) = W.publish(
            "$JS.API.CONSUMER.MSG.NEXT.orders.workers",
            br#"{"batch":1,"expires":4999900000,"idle_heartbeat":1000000000}"#,
        );
        assert_eq!(
            json_of(payload),
            serde_json::json!({"batch": 1, "expires": 99_998_000u64, "idle_heartbeat": 20_000_000u64})
        );
        // The deliveries that answer it are not API answers.
        assert_eq!(answer, None);
        // A request without durations (no_wait) or as a bare count is passed on as it is.
        let (p, _) = W.publish(
            "$JS.API.CONSUMER.MSG.NEXT.o.w",
            br#"{"batch":1,"no_wait":true}"#,
        );
        assert_eq!(p, None);
        assert_eq!(W.publish("$JS.API.CONSUMER.MSG.NEXT.o.w", b"1").0, None);
        // Through a JetStream domain: the same request.
        let (p, _) = W.publish("$JS.hub.API.CONSUMER.MSG.NEXT.o.w", br#"{"expires":1000}"#);
        // 1000 ns x 0.02 = 20 ns.
        assert_eq!(json_of(p), serde_json::json!({"expires": 20}));
    }

    #[test]
    fn a_nak_delay_reaches_the_server_in_wall_time_in_either_form() {
        let ack = "$JS.ACK.orders.workers.1.5.5.1700000000000000000.0";
        // 10 s of profile time x 0.02 = 200 ms = 200_000_000 ns.
        assert_eq!(
            text(W.publish(ack, br#"-NAK {"delay": 10000000000}"#).0).as_deref(),
            Some(r#"-NAK {"delay":200000000}"#)
        );
        // Go's form, 1m30s = 90 s x 0.02 = 1.8 s, sent as JSON.
        assert_eq!(
            text(W.publish(ack, b"-NAK 1m30s").0).as_deref(),
            Some(r#"-NAK {"delay":1800000000}"#)
        );
        // No delay, an ack, progress, a term: nothing to convert.
        for p in [&b"-NAK"[..], b"+ACK", b"", b"+WPI", b"+TERM too old"] {
            assert_eq!(W.publish(ack, p), (None, None), "{p:?}");
        }
        // +NXT's pull request: expires 5 s -> 100 ms.
        assert_eq!(
            text(
                W.publish(ack, br#"+NXT {"batch":1,"expires":5000000000}"#)
                    .0
            )
            .as_deref(),
            Some(r#"+NXT {"batch":1,"expires":100000000}"#)
        );
    }

    #[test]
    fn a_consumer_create_converts_its_config_and_its_answer_comes_back_in_profile_time() {
        // AckWait 30 s -> 600 ms; BackOff [1 s, 5 s] -> [20 ms, 100 ms]; inactive 1 h -> 72 s.
        let (p, answer) = W.publish(
            "$JS.API.CONSUMER.DURABLE.CREATE.orders.workers",
            br#"{"stream_name":"orders","config":{"durable_name":"workers","ack_wait":30000000000,
                "backoff":[1000000000,5000000000],"inactive_threshold":3600000000000,"max_deliver":3}}"#,
        );
        let v = json_of(p);
        assert_eq!(v["config"]["ack_wait"], 600_000_000u64);
        assert_eq!(
            v["config"]["backoff"],
            serde_json::json!([20_000_000, 100_000_000])
        );
        assert_eq!(v["config"]["inactive_threshold"], 72_000_000_000u64);
        // Counts are not durations.
        assert_eq!(v["config"]["max_deliver"], 3);
        assert_eq!(answer, Some(Api::Consumer));
        // The info the server answers with: 600 ms / 0.02 = 30 s; a replica last heard 20 ms
        // ago, 1 s; the created timestamp and the counts as they are.
        let info = br#"{"stream_name":"orders","created":"2026-12-01T00:00:00Z","num_pending":4,
            "config":{"ack_wait":600000000,"backoff":[20000000,100000000]},
            "cluster":{"leader":"n1","replicas":[{"name":"n2","active":20000000}]}}"#;
        let v = json_of(W.answer(Api::Consumer, info));
        assert_eq!(v["config"]["ack_wait"], 30_000_000_000u64);
        assert_eq!(
            v["config"]["backoff"],
            serde_json::json!([1_000_000_000u64, 5_000_000_000u64])
        );
        assert_eq!(v["cluster"]["replicas"][0]["active"], 1_000_000_000u64);
        assert_eq!(v["created"], "2026-12-01T00:00:00Z");
        assert_eq!(v["num_pending"], 4);
    }

    #[test]
    fn infos_and_lists_are_answered_in_profile_time_and_other_answers_as_they_are() {
        // An info request carries nothing; its answer does (AckWait 1.5 s / 0.02 = 75 s).
        let (p, answer) = W.publish("$JS.API.CONSUMER.INFO.orders.workers", b"");
        assert_eq!((p, answer), (None, Some(Api::Consumer)));
        let v = json_of(W.answer(Api::Consumer, br#"{"config":{"ack_wait":1500000000}}"#));
        assert_eq!(v["config"]["ack_wait"], 75_000_000_000u64);
        // A list: each consumer's config.
        let list = br#"{"total":2,"consumers":[{"config":{"ack_wait":20000000}},{"config":{}}]}"#;
        let v = json_of(W.answer(Api::Consumer, list));
        assert_eq!(v["consumers"][0]["config"]["ack_wait"], 1_000_000_000u64);
        assert_eq!(v["total"], 2);
        // A stream: MaxAge 2 s / 0.02 = 100 s, the duplicate window 40 ms -> 2 s, a source's
        // last activity 2 ms -> 100 ms.
        let (_, answer) = W.publish("$JS.API.STREAM.INFO.orders", b"");
        assert_eq!(answer, Some(Api::Stream));
        let v = json_of(W.answer(
            Api::Stream,
            br#"{"config":{"max_age":2000000000,"duplicate_window":40000000,"max_msgs":-1},
                "sources":[{"name":"a","active":2000000}]}"#,
        ));
        assert_eq!(v["config"]["max_age"], 100_000_000_000u64);
        assert_eq!(v["config"]["duplicate_window"], 2_000_000_000u64);
        assert_eq!(v["config"]["max_msgs"], -1);
        assert_eq!(v["sources"][0]["active"], 100_000_000u64);
        // An error, or an answer without durations: as it is.
        let err = br#"{"error":{"code":404,"description":"consumer not found"}}"#;
        assert_eq!(W.answer(Api::Consumer, err), None);
        assert_eq!(W.answer(Api::Stream, b"not json"), None);
    }

    #[test]
    fn a_stream_create_converts_its_config_which_is_the_whole_request() {
        // MaxAge 1 h x 0.02 = 72 s; the consumer limit's inactive threshold 10 s -> 200 ms.
        let (p, answer) = W.publish(
            "$JS.API.STREAM.CREATE.orders",
            br#"{"name":"orders","max_age":3600000000000,"consumer_limits":{"inactive_threshold":10000000000}}"#,
        );
        let v = json_of(p);
        assert_eq!(v["max_age"], 72_000_000_000u64);
        assert_eq!(v["consumer_limits"]["inactive_threshold"], 200_000_000u64);
        assert_eq!(answer, Some(Api::Stream));
        // A stream update too; a purge request is not a config.
        assert!(W
            .publish("$JS.API.STREAM.UPDATE.orders", br#"{"max_age":1000}"#)
            .0
            .is_some());
        let purge = W.publish("$JS.API.STREAM.PURGE.orders", br#"{"max_age":1}"#);
        assert_eq!(purge, (None, Some(Api::Stream)));
    }

    #[test]
    fn other_publishes_are_passed_on_as_they_are() {
        for subject in [
            "orders.new",
            "$JS.API.INFO",
            "$JS.EVENT.ADVISORY.X",
            "$JSX.API.STREAM.INFO.s",
            "$JS.a.b.API.STREAM.INFO.s",
        ] {
            assert_eq!(
                W.publish(subject, br#"{"expires":5}"#),
                (None, None),
                "{subject}"
            );
        }
    }

    #[test]
    fn a_short_duration_stays_more_than_nothing() {
        // 10 ns x 0.02 = 0.2 ns rounds to 0, which would be no expiry at all: 1 ns.
        assert_eq!(W.to_server(10), 1);
        assert_eq!(W.to_server(0), 0);
        // And back: 600 ms / 0.02 is 30 s exactly, despite the float.
        assert_eq!(W.to_consumer(600_000_000), 30_000_000_000);
    }
}
