//! Metrics: pure functions of a [`RunRecord`].
//!
//! - [`accounting`]: effects per message key against what was published: duplicate, lost,
//!   unfinished and late messages, DLQ entries with and without effect, stale acks, busy time,
//!   age of the oldest message.
//! - [`latency`]: HDR histograms of handler and end-to-end latency.
//! - [`mod@timeseries`]: the run sampled on a fixed virtual interval.
//! - [`place`]: where each message is, replayed from the broker's events.
//! - [`handlers`]: handler spans, from a delivery to the end of its handler.
//! - [`ingress`]: an HTTP ingress load's requests joined with the published messages by key.
//! - [`leases`]: each handler against the lease it actually held, and what it did with it.
//! - [`mod@chaos`]: how often each chaos rule fired.
//! - [`groups`]: a FIFO queue's message groups: backlog and head-of-line blocking time.
//! - [`broker_counts`]: the broker's own DLQ depth, backlog and in-flight count over a live
//!   run, as it answered them.
//! - [`attribution`]: a live run's provider calls that could not be matched to one delivery
//!   their worker held.
//! - [`capacity`]: a capacity run's steps, and the rate the consumer sustained.
//! - [`harness_cpu`]: a live run's ackbench CPU share, its own headroom.
//! - [`publisher`]: how a live run's own producer kept the plan's schedule (each send's lag,
//!   the broker's push-back).
//! - [`rebalances`]: a consumer group's rebalances over time, with the records processed twice
//!   in each generation (Kafka).
//! - [`copies`]: a key published more than once (a retrying producer), and what its sends
//!   came to at the broker (duplicate publishes, sends dropped by deduplication).

pub(crate) mod accounting;
pub(crate) mod anomalies;
pub(crate) mod attribution;
pub(crate) mod autoscale;
pub(crate) mod broken_connections;
pub(crate) mod broker_counts;
pub(crate) mod capacity;
pub(crate) mod chaos;
pub(crate) mod copies;
pub(crate) mod crashes;
pub(crate) mod deploys;
pub(crate) mod groups;
pub(crate) mod handlers;
pub(crate) mod harness_cpu;
pub(crate) mod ingress;
pub(crate) mod late_group;
pub(crate) mod latency;
pub(crate) mod leases;
pub(crate) mod place;
pub mod publisher;
pub(crate) mod rebalances;
pub mod recording;
pub(crate) mod redrive;
pub mod stream;
pub(crate) mod timeseries;

#[cfg(test)]
pub(crate) mod testkit;

pub use accounting::Accounting;
pub use chaos::RuleFires;
pub use crashes::Crash;
pub use ingress::IngressSummary;
pub use latency::{Latencies, LatencySummary};
pub use leases::HandlerLeases;
pub use recording::{Recording, View};
pub use timeseries::{default_interval, timeseries, Sample};

use crate::record::{Nanos, RunRecord};

/// Everything the verdict and the report need from a run. Times are exact virtual nanoseconds;
/// latencies are in milliseconds (microsecond resolution). The counts are the run's
/// [`Accounting`], read through this value (`m.lost`, `m.dlq`, ...).
#[derive(Debug, Clone)]
pub struct Metrics {
    /// Messages, deliveries, effects, duplicates, lost, DLQ, stale acks, kills, busy time...
    pub counts: Accounting,
    /// DLQ entries an operator's redrive moved back to the main queue.
    pub redriven: u64,
    /// Duplicate effects the redrive itself caused.
    pub redrive_duplicate_effects: u64,
    /// The kind's lease, as the record has it.
    pub lease: Nanos,
    pub workers: u32,
    /// When the run stopped.
    pub end: Nanos,
    /// Handler latency (delivery to end of handler), ms; on live Kafka, from each record's
    /// hand-over to the commit that covered it alone ([`crate::record::CommitHandlers`]), and
    /// all zero when [`Metrics::handler_unmeasured`] says why it cannot be measured.
    pub handler: LatencySummary,
    /// Why the run's handler latency cannot be measured (live Kafka, auto-commit or commits
    /// covering several records); `None` when `handler` measures it.
    pub handler_unmeasured: Option<String>,
    /// Publish to first effect, ms.
    pub end_to_end: LatencySummary,
    /// p99 over the handlers of the time each held its message over the lease it held
    /// ([`leases`]).
    pub p99_over_visibility: f64,
    /// The lease each handler held (extensions and per-receive timeouts included), ms.
    pub effective_lease: LatencySummary,
    /// What the handlers did with their leases.
    pub handler_leases: HandlerLeases,
    /// Deliveries made while an earlier handler of the same message still ran
    /// ([`leases::LeaseAnalysis::overlapping`]).
    pub overlapping_executions: u64,
    /// Publish to done (effect happened and an ack deleted the message), ms.
    pub time_to_done: LatencySummary,
    /// Messages that were done.
    pub messages_done: u64,
    /// Every chaos rule with how often it fired.
    pub chaos: Vec<RuleFires>,
    /// What each rollout of a `deploy` rule cost (empty without one).
    pub deploys: Vec<deploys::DeployCost>,
    /// What an `autoscale` rule did to the fleet (`None` without one that scaled).
    pub autoscaling: Option<autoscale::Autoscaling>,
    /// The raw histograms behind `handler`, `end_to_end` and `time_to_done`.
    pub latencies: Latencies,
    /// The HTTP ingress load against what reached the queue, if the run had one.
    pub ingress: Option<IngressSummary>,
    /// How a live run's own producer kept the schedule, if it published itself.
    pub publisher: Option<publisher::PublisherSummary>,
    /// Every worker crash, named (`worker_crashes` counts them).
    pub crashes: Vec<Crash>,
    /// A consumer group's rebalances over time (Kafka; `rebalances` counts them).
    pub rebalance_log: Vec<rebalances::Rebalance>,
    /// A consumer group that formed after records were published and never read one of them
    /// (Kafka; [`late_group`]); `None` for a streamed run (sim mode, which reads its log from
    /// the start).
    pub late_group: Option<late_group::LateGroup>,
    /// Why the run stopped before its end, if it did ([`RunRecord::incomplete`]).
    pub incomplete: Option<String>,
    /// The broker kind of the run ([`RunRecord::broker_kind`]; `sqs` when the record has none).
    pub broker_kind: crate::profile::kinds::KindName,
    /// Steps no broker should take, found in the history ([`anomalies`]).
    pub anomalies: Vec<anomalies::Anomaly>,
    /// A FIFO queue's message groups (`workload.groups`); empty without.
    pub groups: Vec<groups::GroupAccount>,
    /// The broker's own counts over a live run on a real broker; `None` otherwise.
    pub broker_counts: Option<broker_counts::BrokerCounts>,
    /// The clock a live run's consumer programs ran on, as recorded.
    pub consumer_clock: Option<crate::record::ConsumerClockRecord>,
    /// Where a live run's worker processes wrote, as recorded.
    pub worker_logs: Option<crate::record::WorkerLogsRecord>,
    /// The queues a live run removed at its end that still held messages.
    pub removed: Vec<crate::record::RemovedQueue>,
    /// What a live run's broker side says of the run that its counts do not.
    pub broker_notes: Vec<String>,
    /// The worker connections a live run's proxy closed because they broke.
    pub broken_connections: Vec<broken_connections::BrokenConnection>,
    /// A live run's provider calls not matched to one delivery their worker held.
    pub unattributed_calls: attribution::UnattributedCalls,
    /// A capacity run's steps and the rate the consumer sustained (`workload.arrival: ramp`).
    pub capacity: Option<capacity::Capacity>,
    /// A live run's ackbench CPU share (its own process, not the workers').
    pub harness_cpu: Option<harness_cpu::HarnessCpuSummary>,
}

impl std::ops::Deref for Metrics {
    type Target = Accounting;

    fn deref(&self) -> &Accounting {
        &self.counts
    }
}

impl Metrics {
    /// Share of the workers' time spent handling: busy time / (workers x run length), or / the
    /// worker-seconds of a fleet an `autoscale` rule scaled; 0 for a run without workers or
    /// length.
    pub fn worker_busy_fraction(&self) -> f64 {
        // An autoscaled fleet's capacity is the time its workers ran, not the starting count's.
        let capacity = match &self.autoscaling {
            Some(a) => a.worker_seconds * 1e9,
            None => f64::from(self.workers) * self.end as f64,
        };
        if capacity > 0.0 {
            self.worker_busy as f64 / capacity
        } else {
            0.0
        }
    }
}

/// Nanoseconds to seconds at microsecond resolution (rounded to the nearest microsecond), the
/// precision every report shows times in.
pub fn seconds(n: Nanos) -> f64 {
    (n.saturating_add(500) / 1000) as f64 / 1e6
}

/// Analyses a run: accounting and latency. `late_after` is the bound past which a first effect is
/// late (`budgets.late_after`). A streamed run ([`Recording::folded`]) was folded as it ran,
/// with the same bound: its folded counts are read, not recomputed.
pub fn analyse<'a>(run: impl Into<View<'a>>, late_after: Nanos) -> Metrics {
    let run = run.into();
    let folded = match run.folded {
        Some(f) => {
            debug_assert_eq!(
                f.counts.late_after, late_after,
                "the bound it was folded with"
            );
            f.clone()
        }
        None => fold_record(run.record, late_after),
    };
    let mut m = assemble(run, folded);
    m.deploys = deploys::costs(run.record, late_after);
    m.autoscaling = autoscale::autoscaling(run.record, late_after);
    m
}

/// The batch analysis of a full record: what a streamed run folds as it goes.
fn fold_record(record: &RunRecord, late_after: Nanos) -> stream::Folded {
    let accounts = accounting::per_message(record);
    // Counting, the latency histograms and the leases read the same record independently: side
    // by side.
    let (counts, latencies, leases) = std::thread::scope(|s| {
        let latencies = s.spawn(|| Latencies::of(record, &accounts));
        let leases = s.spawn(|| leases::analyse(record));
        let a = accounting::account(record, &accounts, late_after);
        (
            a,
            latencies.join().expect("latency histograms do not panic"),
            leases.join().expect("measuring leases does not panic"),
        )
    });
    let mut chaos_fired = vec![0; record.chaos.len()];
    for e in &record.events {
        chaos::count_kill(&mut chaos_fired, &e.kind);
    }
    stream::Folded {
        counts,
        latencies,
        leases,
        redrive: redrive::account(record),
        chaos_fired,
        crashes: crashes::crashes(record),
        anomalies: anomalies::anomalies(record),
        series: stream::SampleGrid::default(),
        rebalances: rebalances::log(record),
    }
}

/// A live Kafka run's handler latency from its commits ([`crate::record::CommitHandlers`]):
/// `handler` becomes the histogram of the handlers the commits timed, or empty with the reason
/// they cannot be timed (the spans from one fetch to the next are no handler's time).
fn commit_timed(
    c: &crate::record::CommitHandlers,
    handler: &mut latency::LatencyHistogram,
) -> Option<String> {
    *handler = latency::LatencyHistogram::new();
    let why = c.unmeasurable();
    if why.is_none() {
        for &t in &c.timed {
            handler.record(t);
        }
    }
    why
}

/// The metrics of a run from what was folded of its history and the record's description.
fn assemble(run: View<'_>, mut f: stream::Folded) -> Metrics {
    let record = run.record;
    let handler_unmeasured = record
        .commit_handlers
        .as_ref()
        .and_then(|c| commit_timed(c, &mut f.latencies.handler));
    let capacity = record.ramp.as_ref().map(|ramp| {
        // The boundaries of the steps: exact in a full record's series every `hold`; a
        // streamed run's grid, as fine as it was kept.
        let samples = match run.folded {
            Some(_) => f.series.samples(f.series.step().max(1)),
            None => timeseries(record, ramp.hold),
        };
        capacity::capacity(
            ramp,
            &samples,
            f.latencies.handler.summary().p99,
            record.harness_cpu.as_ref(),
        )
    });
    Metrics {
        capacity,
        harness_cpu: record.harness_cpu.as_ref().and_then(harness_cpu::summarise),
        redriven: f.redrive.redriven,
        redrive_duplicate_effects: f.redrive.duplicate_effects,
        lease: record.lease,
        workers: record.workers,
        end: record.end,
        handler: f.latencies.handler.summary(),
        handler_unmeasured,
        end_to_end: f.latencies.end_to_end.summary(),
        p99_over_visibility: f.leases.p99_hold_over_lease,
        effective_lease: f.leases.effective_lease.summary(),
        handler_leases: f.leases.counts,
        overlapping_executions: f.leases.overlapping,
        time_to_done: f.latencies.time_to_done.summary(),
        messages_done: f.latencies.time_to_done.len(),
        chaos: chaos::named(&record.chaos, f.chaos_fired),
        deploys: Vec::new(),
        autoscaling: None,
        latencies: f.latencies,
        counts: f.counts,
        ingress: ingress::account(record),
        publisher: publisher::summarise(record),
        crashes: f.crashes,
        rebalance_log: f.rebalances,
        late_group: match run.folded {
            Some(_) => None,
            None => late_group::late_group(record),
        },
        incomplete: record.incomplete.clone(),
        groups: groups::groups(record),
        broker_kind: record.broker_kind.named_or_default(),
        anomalies: f.anomalies,
        broker_counts: record.broker_samples.as_ref().map(broker_counts::summarise),
        consumer_clock: record.consumer_clock.clone(),
        worker_logs: record.worker_logs.clone(),
        removed: record.removed.clone(),
        broker_notes: record.broker_notes.clone(),
        broken_connections: broken_connections::named(record),
        unattributed_calls: attribution::UnattributedCalls::of(record),
    }
}

#[cfg(test)]
mod tests;
