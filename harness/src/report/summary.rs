//! summary.json: one object per run, the contract users' CI scripts read (docs/summary.md; its
//! JSON Schema is docs/summary.schema.json, which `tests_schema.rs` checks summaries against).
//!
//! Field names, their order and their units are fixed: times in seconds, latencies in
//! milliseconds. Fields are only ever added; renaming or dropping one bumps
//! [`SCHEMA_VERSION`]. The same record gives the same bytes: counts are integers, times are
//! rounded to the microsecond (seconds with 6 decimals, milliseconds with 3), and ratios are
//! computed from those integers the same way every time.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::Exporter;
use crate::metrics::anomalies::Anomaly;
use crate::metrics::attribution::UnattributedCalls;
use crate::metrics::{
    analyse, seconds, Crash, HandlerLeases, IngressSummary, LatencySummary, Metrics, RuleFires,
    Sample,
};
use crate::profile::{kinds, Budgets};
use crate::record::nanos;
use crate::verdict::{evaluate, BudgetResult, Verdict};

/// Version of the summary.json layout.
pub const SCHEMA_VERSION: u32 = 1;

/// What the caller knows about a run that the record does not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct RunInfo {
    /// The profile's name.
    pub profile: String,
    /// `sim` or `live`.
    pub mode: String,
    pub seed: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
}

/// The run's summary, in summary.json's field order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    pub profile: String,
    pub mode: String,
    pub seed: u64,
    pub verdict: Verdict,
    /// False for a run that stopped before its end (interrupted): everything below is what was
    /// recorded up to then, and the verdict is `incomplete`. Folders written before this field
    /// existed read back as complete.
    #[serde(default = "complete_by_default")]
    pub complete: bool,
    /// Why the run is incomplete; absent for a complete run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete_reason: Option<String>,
    /// Virtual (sim) or wall (live) seconds from the start of the run to its stop.
    pub virtual_s: f64,
    pub wall_s: f64,
    pub messages: u64,
    pub deliveries: u64,
    pub redeliveries: u64,
    pub effects: u64,
    pub messages_with_effect: u64,
    pub duplicate_effects: u64,
    pub duplicate_rate: f64,
    pub lost: u64,
    pub unfinished: u64,
    pub late: u64,
    pub dlq: u64,
    pub dlq_with_effect: u64,
    pub dlq_without_effect: u64,
    pub stale_acks: u64,
    pub worker_kills: u64,
    pub worker_busy_s: f64,
    pub last_handler_end_s: f64,
    pub max_oldest_age_s: f64,
    pub visibility_timeout_s: f64,
    pub handler_latency_ms: LatencySummary,
    /// Why handler latency cannot be measured on this run (live Kafka: the consumers
    /// auto-commit, or commits covered several records); `handler_latency_ms` is then all 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler_latency_unmeasured: Option<String>,
    pub end_to_end_ms: LatencySummary,
    /// p99 over the handlers of (time holding the message before settling it) / (lease held).
    pub p99_over_visibility: f64,
    // Added to schema 1 (absent from summaries written before them, read back as zero).
    /// The lease each handler held: its delivery's, moved by its visibility changes.
    #[serde(default)]
    pub effective_lease_ms: LatencySummary,
    /// What the handlers did with their leases: acked in time, extended, outlived (and then
    /// redelivered or dead-lettered).
    #[serde(default)]
    pub handler_leases: HandlerLeases,
    /// From publish to done: the effect happened and an ack deleted the message.
    #[serde(default)]
    pub time_to_done_ms: LatencySummary,
    /// Messages that were done (the count behind `time_to_done_ms`).
    #[serde(default)]
    pub messages_done: u64,
    /// Every chaos rule and how often it fired.
    #[serde(default)]
    pub chaos_rules: Vec<RuleFires>,
    pub budgets: Vec<BudgetResult>,
    // Added after schema 1's first fields; new fields go below.
    pub worker_crashes: u64,
    pub rejected: u64,
    pub handler_retries: u64,
    pub unknown_key_effects: u64,
    /// DLQ entries an operator's redrive moved back (`redrive: {at}`).
    pub redriven: u64,
    /// Duplicate effects the redrive itself caused: replaying a DLQ with effect repeats the work.
    pub redrive_duplicate_effects: u64,
    /// Every worker crash, named: worker, instant, how it ended (`worker_crashes` of them).
    #[serde(default)]
    pub crashes: Vec<Crash>,
    /// The broker kind the run modelled; left out for `sqs`, so a run on the SQS model writes
    /// the same bytes as before kinds existed (and an absent field reads as `sqs`).
    #[serde(default, skip_serializing_if = "kinds::KindName::is_default")]
    pub broker_kind: kinds::KindName,
    /// The HTTP ingress load (`workload.ingress`); absent for runs without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress: Option<IngressSummary>,
    /// Sends the broker accepted beyond the first of their key, summed over the keys (a
    /// retrying producer's retry that became a second message); absent for a run that does not
    /// model the producer's sends (`workload.producer`, `broker.fifo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_publishes: Option<u64>,
    /// Kafka: rebalances the group completed (a join, `max.poll.interval.ms` exceeded, a
    /// session timeout); absent for a run that had none (every other kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebalances: Option<u64>,
    /// Kafka: commits the coordinator fenced (a removed member's: counted in `stale_acks`
    /// too); absent as `rebalances`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fenced_commits: Option<u64>,
    /// Kafka: `duplicate_effects / rebalances`, the records processed twice per rebalance;
    /// absent as `rebalances`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicates_per_rebalance: Option<f64>,
    /// Kafka: every rebalance, in time order: when (`at_s`), its `generation`, `members`,
    /// partitions `moved`, `why` (`join`, `max_poll_interval`, `session_timeout`) and the
    /// records `processed_twice` in its generation (duplicate effects from it up to the next);
    /// absent as `rebalances`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rebalance_log: Vec<crate::metrics::rebalances::Rebalance>,
    /// Kafka, live: the consumer group formed (`formed_s`) after the first record was published
    /// (`first_publish_s`) and never read one of the `unread` records published before it:
    /// its consumers started at the log's end (`auto.offset.reset=latest`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_group: Option<crate::metrics::late_group::LateGroup>,
    /// Sends a FIFO queue dropped inside its deduplication window; absent as above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publishes_deduplicated: Option<u64>,
    /// A FIFO queue's message groups (`workload.groups`): messages, largest backlog and
    /// head-of-line blocking time of each; absent without groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_groups: Vec<crate::metrics::groups::GroupSummary>,
    /// Steps no broker should take (a delivery after a confirmed ack, a delivery count that
    /// went down, an ack accepted for a settled message), found in the run's history.
    #[serde(default)]
    pub broker_anomalies: u64,
    /// Each of them: what, which message, when, which worker and delivery.
    #[serde(default)]
    pub anomalies: Vec<Anomaly>,
    /// Effects whose key names no published message (the same count as
    /// `unknown_key_effects`): while there are any, the verdict fails on them (the run is
    /// misconfigured) and no message counts as lost.
    #[serde(default)]
    pub unmatched_effects: u64,
    /// Messages deleted with no effect matched to their key while effects were unmatched:
    /// whether their work was done cannot be told (counted here instead of `lost`).
    #[serde(default)]
    pub unverifiable_keys: u64,
    /// Deliveries made while an earlier handler of the same message was still running: one
    /// message handled by two workers at once (budget `overlapping_executions`).
    #[serde(default)]
    pub overlapping_executions: u64,
    /// What a live run on a real broker read from the broker itself every `run.sample_every`:
    /// the last and peak DLQ depth, backlog and in-flight count, `null` (with the reason) for a
    /// figure the kind cannot give; absent for sim runs and the embedded broker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker_counts: Option<crate::metrics::broker_counts::BrokerCounts>,
    /// The clock a live run's consumer programs ran on (`scaled` or `real`), the speed asked and
    /// measured; absent for sim runs and built-in targets (they run on the run's own clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_clock: Option<crate::record::ConsumerClockRecord>,
    /// Where a live run's worker processes wrote (`folder`), and the last lines of each
    /// worker's stderr that has any (up to its last crash, if it crashed); absent for sim runs
    /// and built-in targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_logs: Option<crate::record::WorkerLogsRecord>,
    /// A live run's provider calls that could not be matched to one delivery their worker held,
    /// by reason; absent when every call was matched (and in sim runs).
    #[serde(default, skip_serializing_if = "UnattributedCalls::is_none")]
    pub unattributed_calls: UnattributedCalls,
    /// A capacity run (`workload.arrival: ramp`): each step's offered and completed rate and
    /// backlog age, the sustainable rate and the first rate that fell behind
    /// ([`crate::metrics::capacity`]); absent for every other arrival.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::metrics::capacity::Capacity>,
    /// A live run: how much CPU ackbench's own process used (cores' worth, its worker
    /// processes not counted), its headroom; absent for sim runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_cpu: Option<crate::metrics::harness_cpu::HarnessCpuSummary>,
    /// How a live run's own producer kept the plan's schedule: sends, the rate offered and
    /// confirmed, each send's lag behind its planned instant, the broker's push-back; absent
    /// for sim runs and a run whose ingress load published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<crate::metrics::publisher::PublisherSummary>,
    /// What each rollout of a `deploy` chaos rule cost: workers told to stop, stopped in their
    /// grace, killed at its end, the deliveries those kills cut and of their messages the
    /// duplicates, lost and late; absent for a run without a deploy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deploys: Vec<crate::metrics::deploys::DeployCost>,
    /// What an `autoscale` chaos rule did to the fleet: each change of the replica count (when,
    /// by KEDA or the HPA, on what queue length) with each scale-in's cost, the most workers
    /// running at once, and the worker-seconds; absent for a run without one that scaled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<crate::metrics::autoscale::Autoscaling>,
    /// Times a handler published its message again for another try (a framework's retry
    /// through a delay queue, Celery's `retry`); counted in `handler_retries` too. Absent when
    /// none did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub consumer_retries: u64,
    /// Unfinished messages that were waiting for a consumer's retry when the run stopped (in a
    /// delay queue, or held by the framework until the retry was due); counted in `unfinished`
    /// too. Absent when none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unfinished_delayed: u64,
    /// Messages deleted without an effect by a consumer that tried the work, failed and gave
    /// up (a framework's "task failed" out of retries, acked): its failure is in its own log,
    /// so not counted in `lost`. Absent when none were.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: u64,
    /// A live run: the queues it removed at its end that still held messages (`queue`,
    /// `messages`), each message counted first (unfinished, or in the DLQ). Absent when every
    /// queue it removed was empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_at_end: Vec<crate::record::RemovedQueue>,
    /// A live run: what the broker's side says of the run that its counts do not (NATS: how its
    /// lease expiries and dead-lettering were recorded; Kafka: its group's joins, rejoins and
    /// fenced commits). Absent when it says nothing (always, in a sim run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broker_notes: Vec<String>,
    /// A live run: the worker connections its proxy closed because they broke (`worker`,
    /// `at_s`, `why`: a frame over the broker's limits, bytes that are no frame of its
    /// protocol, a panic of the proxy's reader); the run went on. Absent when none broke.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken_connections: Vec<crate::metrics::broken_connections::BrokenConnection>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Summary {
    /// The summary of analysed metrics and their budget results.
    pub fn new(info: &RunInfo, m: &Metrics, budgets: Vec<BudgetResult>) -> Self {
        Summary {
            schema_version: SCHEMA_VERSION,
            profile: info.profile.clone(),
            mode: info.mode.clone(),
            seed: info.seed,
            verdict: Verdict::of_run(&budgets, m.incomplete.is_none()),
            complete: m.incomplete.is_none(),
            incomplete_reason: m.incomplete.clone(),
            virtual_s: seconds(m.end),
            wall_s: round_secs(info.wall_s),
            messages: m.messages,
            deliveries: m.deliveries,
            redeliveries: m.redeliveries,
            effects: m.effects,
            messages_with_effect: m.messages_with_effect,
            duplicate_effects: m.duplicate_effects,
            duplicate_rate: m.duplicate_rate,
            lost: m.lost,
            unfinished: m.unfinished,
            late: m.late,
            dlq: m.dlq,
            dlq_with_effect: m.dlq_with_effect,
            dlq_without_effect: m.dlq_without_effect,
            stale_acks: m.stale_acks,
            worker_kills: m.worker_kills,
            worker_busy_s: seconds(m.worker_busy),
            last_handler_end_s: seconds(m.last_handler_end),
            max_oldest_age_s: seconds(m.max_oldest_age),
            visibility_timeout_s: seconds(m.lease),
            handler_latency_ms: m.handler,
            handler_latency_unmeasured: m.handler_unmeasured.clone(),
            end_to_end_ms: m.end_to_end,
            p99_over_visibility: m.p99_over_visibility,
            effective_lease_ms: m.effective_lease,
            handler_leases: m.handler_leases,
            overlapping_executions: m.overlapping_executions,
            time_to_done_ms: m.time_to_done,
            messages_done: m.messages_done,
            chaos_rules: m.chaos.clone(),
            budgets,
            worker_crashes: m.worker_crashes,
            rejected: m.rejected,
            handler_retries: m.handler_retries,
            unknown_key_effects: m.unknown_key_effects,
            redriven: m.redriven,
            redrive_duplicate_effects: m.redrive_duplicate_effects,
            crashes: m.crashes.clone(),
            broker_kind: m.broker_kind.clone(),
            ingress: m.ingress.clone(),
            duplicate_publishes: m.duplicate_publishes,
            rebalances: (m.rebalances > 0).then_some(m.rebalances),
            fenced_commits: (m.rebalances > 0).then_some(m.fenced_commits),
            duplicates_per_rebalance: (m.rebalances > 0)
                .then(|| m.duplicate_effects as f64 / m.rebalances as f64),
            rebalance_log: m.rebalance_log.clone(),
            // A sim model reads its log from the start: only a live client starts at its end.
            late_group: m.late_group.clone().filter(|_| info.mode == "live"),
            publishes_deduplicated: m.publishes_deduplicated,
            message_groups: m.groups.iter().map(Into::into).collect(),
            broker_anomalies: m.anomalies.len() as u64,
            anomalies: m.anomalies.clone(),
            unmatched_effects: m.unmatched_effects,
            unverifiable_keys: m.unverifiable_keys,
            broker_counts: m.broker_counts.clone(),
            consumer_clock: m.consumer_clock.clone(),
            worker_logs: m.worker_logs.clone(),
            unattributed_calls: m.unattributed_calls,
            capacity: m.capacity.clone(),
            harness_cpu: m.harness_cpu.clone(),
            publisher: m.publisher.clone(),
            deploys: m.deploys.clone(),
            autoscaling: m.autoscaling.clone(),
            consumer_retries: m.consumer_retries,
            unfinished_delayed: m.unfinished_delayed,
            failed: m.failed,
            removed_at_end: m.removed.clone(),
            broker_notes: m.broker_notes.clone(),
            broken_connections: m.broken_connections.clone(),
        }
    }
}

impl Summary {
    /// The kind's word for the lease (`visibility timeout`, `AckWait`, `consumer timeout`,
    /// `min idle`).
    pub fn lease_words(&self) -> &'static str {
        self.broker_kind.lease_words()
    }

    /// What the kind's lease is for (a lease, a stuck consumer's guard, a poll interval).
    pub fn lease_role(&self) -> kinds::LeaseRole {
        self.broker_kind.lease_role()
    }

    /// What happened to a message the kind gave up on, after "had its message" (`dlq` counts
    /// them whatever the kind calls it).
    pub fn dlq_words(&self) -> &'static str {
        self.broker_kind.dlq_words()
    }

    /// The DLQ row's note: what the kind calls it.
    pub fn dlq_row_words(&self) -> &'static str {
        self.broker_kind.dlq_row_words()
    }

    /// What the kind calls its messages, its settling, its lease's end and a stale ack.
    pub fn words(&self) -> &'static kinds::KindWords {
        self.broker_kind.words()
    }
}

fn complete_by_default() -> bool {
    true
}

/// Analyses the record, checks the budgets and sums the run up.
pub fn summarise<'a>(
    info: &RunInfo,
    record: impl Into<crate::metrics::View<'a>>,
    budgets: &Budgets,
) -> Summary {
    summarise_with_metrics(info, record, budgets).0
}

/// [`summarise`], handing back the metrics too: their raw latency histograms feed the report's
/// latency logs and charts, so the record is analysed once.
pub fn summarise_with_metrics<'a>(
    info: &RunInfo,
    record: impl Into<crate::metrics::View<'a>>,
    budgets: &Budgets,
) -> (Summary, Metrics) {
    let m = analyse(record, nanos(budgets.late_after));
    let results = evaluate(budgets, &m);
    (Summary::new(info, &m, results), m)
}

/// Reads summary.json's text back.
pub fn from_json(text: &str) -> Result<Summary, serde_json::Error> {
    serde_json::from_str(text)
}

/// summary.json's text: pretty-printed, with a trailing newline.
pub fn to_json(summary: &Summary) -> String {
    // Only strings, integers, floats and sequences: serialising cannot fail.
    let mut json = serde_json::to_string_pretty(summary).unwrap_or_default();
    json.push('\n');
    json
}

/// Seconds rounded to the microsecond; 0 for a value that is not a finite, positive time.
fn round_secs(s: f64) -> f64 {
    if s.is_finite() && s > 0.0 {
        (s * 1e6).round() / 1e6
    } else {
        0.0
    }
}

/// Writes summary.json.
pub struct SummaryJson;

impl Exporter for SummaryJson {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }

    fn export(&self, summary: &Summary, _samples: &[Sample], w: &mut dyn Write) -> io::Result<()> {
        w.write_all(to_json(summary).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::testkit::slow_handler;
    use crate::profile::StaleAck;

    /// summary.json's fields, in the contract's order (docs/summary.md), then the added ones.
    const CONTRACT: &[&str] = &[
        "schema_version",
        "profile",
        "mode",
        "seed",
        "verdict",
        "complete",
        "virtual_s",
        "wall_s",
        "messages",
        "deliveries",
        "redeliveries",
        "effects",
        "messages_with_effect",
        "duplicate_effects",
        "duplicate_rate",
        "lost",
        "unfinished",
        "late",
        "dlq",
        "dlq_with_effect",
        "dlq_without_effect",
        "stale_acks",
        "worker_kills",
        "worker_busy_s",
        "last_handler_end_s",
        "max_oldest_age_s",
        "visibility_timeout_s",
        "handler_latency_ms",
        "end_to_end_ms",
        "p99_over_visibility",
        "effective_lease_ms",
        "handler_leases",
        "time_to_done_ms",
        "messages_done",
        "chaos_rules",
        "budgets",
        "worker_crashes",
        "rejected",
        "handler_retries",
        "unknown_key_effects",
        "redriven",
        "redrive_duplicate_effects",
        "crashes",
        "broker_anomalies",
        "anomalies",
        "unmatched_effects",
        "unverifiable_keys",
        "overlapping_executions",
    ];

    fn info() -> RunInfo {
        RunInfo {
            profile: "slow-provider".into(),
            mode: "sim".into(),
            seed: 7,
            wall_s: 0.012_345_678,
        }
    }

    fn budgets() -> Budgets {
        Budgets {
            duplicate_rate: Some(0.0),
            lost: Some(0),
            late_after: Duration::from_secs(300),
            ..Budgets::default()
        }
    }

    /// The keys of a pretty-printed object's lines at `indent` spaces, in order.
    fn keys_at(json: &str, indent: usize) -> Vec<String> {
        let prefix = format!("{}\"", " ".repeat(indent));
        json.lines()
            .filter_map(|l| l.strip_prefix(&prefix))
            .filter_map(|l| l.split_once("\":").map(|(k, _)| k.to_string()))
            .collect()
    }

    #[test]
    fn the_fields_come_in_the_contract_order() {
        let json = to_json(&summarise(
            &info(),
            &slow_handler(StaleAck::Reject),
            &budgets(),
        ));
        assert_eq!(keys_at(&json, 2), CONTRACT);
        assert!(json.contains(
            "\"handler_latency_ms\": {\n    \"p50\": 34000.0,\n    \"p90\": 34000.0,\n    \"p99\": 34000.0,\n    \"p999\": 34000.0,\n    \"max\": 34000.0\n  },"
        ));
        assert!(json.contains(
            "\"budgets\": [\n    {\n      \"name\": \"duplicate_rate\",\n      \"limit\": 0.0,\n      \"actual\": 2.0,\n      \"pass\": false\n    },"
        ));
        assert!(json.ends_with("}\n"));
    }

    #[test]
    fn the_slow_handler_summed_up() {
        let s = summarise(&info(), &slow_handler(StaleAck::Reject), &budgets());
        assert_eq!(s.verdict, Verdict::Fail);
        assert_eq!((s.virtual_s, s.wall_s), (94.0, 0.012346));
        assert_eq!(
            (s.messages, s.deliveries, s.redeliveries, s.effects),
            (1, 3, 2, 3)
        );
        assert_eq!(
            (s.duplicate_effects, s.duplicate_rate, s.stale_acks),
            (2, 2.0, 3)
        );
        assert_eq!((s.dlq, s.dlq_with_effect, s.dlq_without_effect), (1, 1, 0));
        assert_eq!(
            (s.worker_busy_s, s.last_handler_end_s, s.max_oldest_age_s),
            (102.0, 94.0, 90.0)
        );
        assert_eq!(
            (s.visibility_timeout_s, s.p99_over_visibility),
            (30.0, 34.0 / 30.0)
        );
        assert_eq!(s.budgets.len(), 2);
        let json = to_json(&s);
        assert!(json.contains("\"verdict\": \"fail\","));
        assert!(json.contains("\"p99_over_visibility\": 1.1333333333333333,"));
    }

    #[test]
    fn an_incomplete_run_says_so_right_after_the_verdict() {
        let mut r = slow_handler(StaleAck::Reject);
        let complete = to_json(&summarise(&info(), &r, &budgets()));
        assert!(complete.contains("\"verdict\": \"fail\",\n  \"complete\": true,\n  \"virtual_s\""));
        assert!(!complete.contains("incomplete_reason"));
        r.incomplete = Some("interrupted".into());
        let s = summarise(&info(), &r, &budgets());
        let json = to_json(&s);
        assert!(
            json.contains(
                "\"verdict\": \"incomplete\",\n  \"complete\": false,\n  \"incomplete_reason\": \"interrupted\",\n  \"virtual_s\""
            ),
            "{json}"
        );
        // It reads back incomplete; a folder from before the fields existed reads as complete.
        assert_eq!(from_json(&json).map(|b| b == s).ok(), Some(true));
        let old = complete.replace("  \"complete\": true,\n", "");
        assert_eq!(from_json(&old).map(|b| b.complete).ok(), Some(true));
    }

    #[test]
    fn times_are_rounded_to_the_microsecond() {
        let mut r = slow_handler(StaleAck::Reject);
        r.end = 94_000_000_499;
        r.lease = 30_000_000_500;
        let s = summarise(&info(), &r, &budgets());
        assert_eq!((s.virtual_s, s.visibility_timeout_s), (94.0, 30.000001));
        assert_eq!(round_secs(f64::NAN), 0.0);
    }

    #[test]
    fn summary_json_reads_back_to_the_same_bytes() {
        let s = summarise(&info(), &slow_handler(StaleAck::Reject), &budgets());
        let back = from_json(&to_json(&s)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, s);
        assert_eq!(to_json(&back), to_json(&s));
    }

    #[test]
    fn the_same_record_gives_the_same_bytes() {
        let a = to_json(&summarise(
            &info(),
            &slow_handler(StaleAck::Delete),
            &budgets(),
        ));
        let b = to_json(&summarise(
            &info(),
            &slow_handler(StaleAck::Delete),
            &budgets(),
        ));
        assert_eq!(a, b);
    }
}
