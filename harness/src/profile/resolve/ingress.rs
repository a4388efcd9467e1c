//! `workload.ingress`: the system's own HTTP endpoint that publishes to the queue, driven by
//! goose users (live mode only; [`check_mode`] says so).
//!
//! Pace: `rate_per_s` starts requests on a uniform schedule (and replaces `workload.arrival`);
//! without it they follow `workload.arrival`; `users` alone drops the schedule: each user sends
//! its next request as soon as its previous one is answered, `count` requests in all.

use std::time::Duration;

use crate::profile::key_path::KeyPath;
use crate::profile::path::FieldPath;
use crate::profile::problem::Problem;
use crate::profile::raw::{MethodName, RawIngress};
use crate::profile::scenario::{Arrival, IngressMethod, IngressSpec, Mode, WorkloadSpec};
use crate::profile::template::{Fill, Slot, Template};

use super::checks::{at_least_one, positive, required};

/// How long one ingress request may take by default (wall time).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The JSON pointer to a published message's key by default.
pub const DEFAULT_MESSAGE_KEY: &str = "/key";
/// Default users keep up with the schedule while answers take up to this long.
const DEFAULT_USERS_COVER: f64 = 1.0;
const MIN_DEFAULT_USERS: u32 = 4;
const MAX_DEFAULT_USERS: u32 = 512;

/// What the ingress section decides about the arrival of messages.
pub struct Pace {
    /// The arrival to plan with (`rate_per_s` as a uniform rate, `Closed` for `users` alone).
    pub arrival: Option<Arrival>,
    pub scheduled: bool,
}

/// The pace part, read before the rest of the workload: `arrival` is what the profile says.
pub fn pace(
    raw: &RawIngress,
    arrival: Option<&Arrival>,
    path: &FieldPath,
) -> Result<Pace, Problem> {
    match (raw.rate_per_s, arrival, raw.users) {
        (Some(_), Some(_), _) => Err(Problem::at_key(
            path.key("rate_per_s"),
            "workload.arrival already says when messages are published: give arrival or \
             ingress.rate_per_s, not both",
        )),
        (Some(rate), None, _) => {
            if !rate.is_finite() || rate <= 0.0 {
                return Err(Problem::new(
                    path.key("rate_per_s"),
                    format!("must be a positive number of requests per second, got {rate}"),
                ));
            }
            Ok(Pace {
                arrival: Some(Arrival::Rate {
                    rate_per_s: rate,
                    process: crate::profile::RateProcess::Uniform,
                }),
                scheduled: true,
            })
        }
        (None, Some(a), _) => Ok(Pace {
            arrival: Some(a.clone()),
            scheduled: true,
        }),
        (None, None, Some(_)) => Ok(Pace {
            arrival: Some(Arrival::Closed),
            scheduled: false,
        }),
        (None, None, None) => Ok(Pace {
            arrival: None,
            scheduled: true,
        }),
    }
}

/// The rest of the section, once the workload's arrival and count are known.
pub fn resolve(
    raw: RawIngress,
    pace: &Pace,
    workload: &WorkloadSpec,
    time_scale: f64,
    run_duration: Duration,
    path: &FieldPath,
) -> Result<IngressSpec, Problem> {
    if !pace.scheduled && workload.count.is_none() && workload.keys.is_none() {
        return Err(Problem::new(
            path.parent().key("count"),
            "required: with workload.ingress.users alone the load has no schedule, so count (or \
             keys) says how many requests to send",
        ));
    }
    let command = command(raw.command, path)?;
    let env: Vec<(String, String)> = raw
        .env
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    let url = url(raw.url.map(|t| t.0), path)?;
    let method = match raw.method {
        None | Some(MethodName::POST) => IngressMethod::Post,
        Some(MethodName::GET) => IngressMethod::Get,
        Some(MethodName::PUT) => IngressMethod::Put,
        Some(MethodName::PATCH) => IngressMethod::Patch,
        Some(MethodName::DELETE) => IngressMethod::Delete,
    };
    let fields = [Slot::Key, Slot::Seq, Slot::Body];
    let body = match raw.body {
        Some(t) => Some(template(&t.0, &fields, &path.key("body"))?),
        None if matches!(method, IngressMethod::Get | IngressMethod::Delete) => None,
        None => Some(Template::parse("{body}", &fields).expect("a valid template")),
    };
    let mut headers = Vec::new();
    for (name, value) in raw.headers.unwrap_or_default() {
        let at = path.key("headers").key(&name);
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(Problem::at_key(
                at,
                format!("`{name}` is not a valid HTTP header name"),
            ));
        }
        headers.push((name, template(&value.0, &fields, &at)?));
    }
    let message_key = match raw.message_key {
        Some(p) => KeyPath::parse(&p.0).map_err(|e| {
            Problem::new(
                path.key("message_key"),
                format!(
                    "a JSON pointer into the published message's body, such as /key or \
                     /order/id (\"\" for the whole body), or steps through its encodings: \
                     {e}"
                ),
            )
        })?,
        None => KeyPath::parse(DEFAULT_MESSAGE_KEY).expect("the default parses"),
    };
    let timeout = match raw.timeout {
        Some(d) => positive(d.0, &path.key("timeout"))?,
        None => DEFAULT_TIMEOUT,
    };
    let users = match raw.users {
        Some(u) => at_least_one(u, &path.key("users"), "a load needs one user at least")?,
        None => default_users(workload, time_scale, run_duration),
    };
    Ok(IngressSpec {
        command,
        env,
        url,
        method,
        body,
        headers,
        users,
        scheduled: pace.scheduled,
        message_key,
        timeout,
    })
}

/// Enough users to keep the schedule while answers take up to a second, at least 4.
fn default_users(workload: &WorkloadSpec, time_scale: f64, run_duration: Duration) -> u32 {
    let rate = workload.arrival_rate(run_duration) / time_scale;
    let users = (rate * DEFAULT_USERS_COVER).ceil() as u32;
    let cap = workload
        .count
        .into_iter()
        .chain(workload.keys.as_ref().map(|k| k.len() as u64))
        .min()
        .unwrap_or(u64::MAX)
        .max(1);
    (users.clamp(MIN_DEFAULT_USERS, MAX_DEFAULT_USERS) as u64).min(cap) as u32
}

fn command(
    argv: Option<Vec<crate::profile::scalar::Text>>,
    path: &FieldPath,
) -> Result<Vec<String>, Problem> {
    let at = path.key("command");
    let argv = required(
        argv,
        &at,
        "the ingress service ackbench starts, as [program, args...]: it must publish to this \
         run's SQS endpoint, which it learns from its environment",
    )?;
    let argv: Vec<String> = argv.into_iter().map(|t| t.0).collect();
    if argv.first().is_none_or(|p| p.trim().is_empty()) {
        return Err(Problem::new(
            at,
            "a program and its arguments, e.g. [python3, targets/python/ingress.py]",
        ));
    }
    Ok(argv)
}

pub(super) fn template(text: &str, allowed: &[Slot], at: &FieldPath) -> Result<Template, Problem> {
    Template::parse(text, allowed).map_err(|e| Problem::new(at.clone(), e.to_string()))
}

/// The URL template: http(s) on loopback only (ackbench reaches no other host).
fn url(text: Option<String>, path: &FieldPath) -> Result<Template, Problem> {
    let at = path.key("url");
    let text = required(
        text,
        &at,
        "where each request goes, e.g. http://127.0.0.1:{port}/orders",
    )?;
    let t = template(&text, &[Slot::Port, Slot::Key, Slot::Seq], &at)?;
    let sample = t.render(&Fill {
        key: "k",
        seq: 1,
        body: "",
        port: 1,
        ..Fill::default()
    });
    let parsed = url::Url::parse(&sample)
        .map_err(|e| Problem::new(at.clone(), format!("not a URL ({e}): {text}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Problem::new(
            at,
            format!("must be an http:// or https:// URL, got {text}"),
        ));
    }
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return Err(Problem::new(
            at,
            format!(
                "must point at this machine (127.0.0.1, ::1 or localhost): ackbench sends load \
                 only over loopback, got {text}"
            ),
        ));
    }
    if parsed.port_or_known_default().is_none() {
        return Err(Problem::new(at, format!("needs a port, got {text}")));
    }
    Ok(t)
}

/// The HTTP ingress runs the system's own service over real sockets: live mode only.
pub fn check_mode(workload: &WorkloadSpec, mode: Mode, path: &FieldPath) -> Result<(), Problem> {
    if workload.ingress.is_some() && mode != Mode::Live {
        return Err(Problem::at_key(
            path.clone(),
            "an ingress load drives a real HTTP service, so it runs only in live mode (mode: live)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::profile::scenario::{Arrival, IngressMethod, RateProcess};
    use crate::profile::template::Fill;
    use crate::profile::testutil::{error, scenario};

    /// A live profile whose workload is `workload` (indented under `workload:` from line 5).
    fn profile(workload: &str) -> String {
        format!(
            "name: t\nmode: live\nrun: {{ duration: 10m, time_scale: 0.1 }}\nworkload:\n{workload}\
             consumer: {{ target: ack-after-work }}\n"
        )
    }

    const INGRESS: &str = "  count: 20\n  ingress:\n    command: [python3, ingress.py]\n    \
                           url: \"http://127.0.0.1:{port}/orders\"\n";

    fn fill() -> Fill<'static> {
        Fill {
            key: "msg-3",
            seq: 3,
            body: "{\"key\":\"msg-3\"}",
            port: 9000,
            ..Fill::default()
        }
    }

    #[test]
    fn defaults_post_the_message_body_on_the_arrival_schedule() {
        let s = scenario(&profile(&format!("  arrival: {{ every: 1s }}\n{INGRESS}")));
        let i = s.workload.ingress.unwrap();
        assert_eq!(i.method, IngressMethod::Post);
        assert_eq!(i.body.unwrap().render(&fill()), "{\"key\":\"msg-3\"}");
        assert_eq!(i.url.render(&fill()), "http://127.0.0.1:9000/orders");
        assert!(i.scheduled);
        assert_eq!(i.message_key.to_string(), "/key");
        assert_eq!(i.timeout, Duration::from_secs(30));
        // 1/s at time_scale 0.1 is 10/s of wall time: 10 users cover 1 s answers.
        assert_eq!(i.users, 10);
        assert_eq!(s.workload.arrival, Arrival::Every(Duration::from_secs(1)));
    }

    #[test]
    fn rate_per_s_is_a_uniform_schedule_and_users_alone_none() {
        let s = scenario(&profile(&format!("{INGRESS}    rate_per_s: 2\n")));
        assert_eq!(
            s.workload.arrival,
            Arrival::Rate {
                rate_per_s: 2.0,
                process: RateProcess::Uniform
            }
        );
        let s = scenario(&profile(&format!(
            "{INGRESS}    users: 3\n    method: put\n"
        )));
        let i = s.workload.ingress.unwrap();
        assert_eq!((i.users, i.scheduled), (3, false));
        assert_eq!(i.method, IngressMethod::Put);
        assert_eq!(s.workload.arrival, Arrival::Closed);
        // A GET sends no body unless told to.
        let s = scenario(&profile(&format!(
            "{INGRESS}    users: 3\n    method: GET\n"
        )));
        assert_eq!(s.workload.ingress.unwrap().body, None);
    }

    #[test]
    fn default_users_are_capped_by_the_count() {
        let s = scenario(&profile(
            "  arrival: { every: 10ms }\n  count: 20\n  ingress:\n    command: [x]\n    \
             url: \"http://localhost:{port}/\"\n",
        ));
        assert_eq!(s.workload.ingress.unwrap().users, 20);
    }

    #[test]
    fn pace_conflicts_and_gaps_are_refused() {
        assert_eq!(
            error(&profile(&format!(
                "  arrival: {{ every: 1s }}\n{INGRESS}    rate_per_s: 2\n"
            ))),
            "p.yaml:10:5: workload.ingress.rate_per_s: workload.arrival already says when \
             messages are published: give arrival or ingress.rate_per_s, not both"
        );
        assert_eq!(
            error(&profile(&INGRESS.replace("  count: 20\n", ""))),
            "p.yaml:4:1: workload.arrival: required: how messages arrive: { every: 50s }, \
             { rate_per_s: 2, process: poisson }, { at: [0s, 3s] } or \
             { ramp: { from: 50, to: 500, step: 50, hold: 20s } }; or, with an ingress load, \
             workload.ingress.rate_per_s or workload.ingress.users"
        );
        assert_eq!(
            error(&profile(&format!(
                "{}    users: 2\n",
                INGRESS.replace("  count: 20\n", "")
            ))),
            "p.yaml:4:1: workload.count: required: with workload.ingress.users alone the load has \
             no schedule, so count (or keys) says how many requests to send"
        );
        assert_eq!(
            error(&profile(&format!("{INGRESS}    rate_per_s: -1\n"))),
            "p.yaml:9:17: workload.ingress.rate_per_s: must be a positive number of requests \
             per second, got -1"
        );
        assert_eq!(
            error(&profile(&format!("{INGRESS}    users: 0\n"))),
            "p.yaml:9:12: workload.ingress.users: must be at least 1, got 0 (a load needs one \
             user at least)"
        );
    }

    #[test]
    fn bad_fields_are_refused_with_what_is_allowed() {
        let cases = [
            (
                "    command: []\n    url: \"http://127.0.0.1:{port}/\"\n    rate_per_s: 1\n",
                "p.yaml:7:5: workload.ingress.command: a program and its arguments, e.g. \
                 [python3, targets/python/ingress.py]",
            ),
            (
                "    url: \"http://127.0.0.1:{port}/\"\n    rate_per_s: 1\n",
                "p.yaml:6:3: workload.ingress.command: required: the ingress service ackbench \
                 starts",
            ),
            (
                "    command: [x]\n    rate_per_s: 1\n",
                "workload.ingress.url: required: where each request goes, e.g. \
                 http://127.0.0.1:{port}/orders",
            ),
            (
                "    command: [x]\n    url: \"http://10.0.0.1:{port}/\"\n    rate_per_s: 1\n",
                "workload.ingress.url: must point at this machine (127.0.0.1, ::1 or localhost)",
            ),
            (
                "    command: [x]\n    url: \"ftp://127.0.0.1:21/\"\n    rate_per_s: 1\n",
                "workload.ingress.url: must be an http:// or https:// URL, got ftp://127.0.0.1:21/",
            ),
            (
                "    command: [x]\n    url: \"http://127.0.0.1:{prot}/\"\n    rate_per_s: 1\n",
                "workload.ingress.url: unknown placeholder {prot}: the placeholders are {port}, \
                 {key}, {seq}",
            ),
            (
                "    command: [x]\n    url: \"not a url {port}\"\n    rate_per_s: 1\n",
                "workload.ingress.url: not a URL (relative URL without a base)",
            ),
            (
                "    command: [x]\n    url: \"http://[::1]:{port}/\"\n    body: \"{port}\"\n    \
                 rate_per_s: 1\n",
                "workload.ingress.body: unknown placeholder {port}: the placeholders are {key}, \
                 {seq}, {body}",
            ),
            (
                "    command: [x]\n    url: \"http://[::1]:{port}/\"\n    headers: { \"bad name\": x }\n    \
                 rate_per_s: 1\n",
                "workload.ingress.headers.bad name: `bad name` is not a valid HTTP header name",
            ),
            (
                "    command: [x]\n    url: \"http://[::1]:{port}/\"\n    message_key: key\n    \
                 rate_per_s: 1\n",
                "workload.ingress.message_key: a JSON pointer into the published message's body",
            ),
            (
                "    command: [x]\n    url: \"http://[::1]:{port}/\"\n    timeout: 0s\n    \
                 rate_per_s: 1\n",
                "workload.ingress.timeout: must be more than 0s, got 0s",
            ),
            (
                "    command: [x]\n    url: \"http://[::1]:{port}/\"\n    method: TRACE\n    \
                 rate_per_s: 1\n",
                "workload.ingress.method: unknown variant `TRACE`, expected one of `GET`, `get`, \
                 `POST`, `post`, `PUT`, `put`, `PATCH`, `patch`, `DELETE`, `delete`",
            ),
            (
                "    command: [x]\n    url: \"http://[::1]:{port}/\"\n    rate: 1\n",
                "workload.ingress.rate: unknown field `rate`, expected one of `command`, `env`, \
                 `url`, `method`, `body`, `headers`, `rate_per_s`, `users`, `message_key`, \
                 `timeout`",
            ),
        ];
        for (section, expected) in cases {
            let e = error(&profile(&format!("  count: 5\n  ingress:\n{section}")));
            assert!(
                e.contains(expected),
                "{section}\n  gave {e}\n  wanted {expected}"
            );
        }
    }

    #[test]
    fn an_ingress_runs_only_in_live_mode() {
        let e = error(
            &profile(&format!("{INGRESS}    rate_per_s: 1\n")).replace("mode: live", "mode: sim"),
        );
        assert_eq!(
            e,
            "p.yaml:6:3: workload.ingress: an ingress load drives a real HTTP service, so it \
             runs only in live mode (mode: live)"
        );
    }
}
