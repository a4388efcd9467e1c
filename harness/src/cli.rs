//! The command line: what a user types, parsed by clap. Validation of the profile itself is the
//! profile module's job; this only names the inputs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::profile::kinds;
use crate::report::Format;

/// Load-test and chaos harness for message-queue consumers.
///
/// ackbench drives a consumer against a broker with real lease semantics (visibility timeout,
/// receive count, dead-letter queue) and a fake downstream provider, injects faults, and counts
/// effects per message key: duplicate, lost and late effects, DLQ entries with and without
/// effect, handler latency against the visibility timeout. Budgets turn that into a verdict.
///
/// Exit codes: 0 all budgets pass; 1 a budget failed; 2 bad usage or invalid profile;
/// 3 the run itself could not complete.
#[derive(Debug, Parser)]
#[command(name = "ackbench", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one scenario, print a summary table and write a report folder.
    ///
    /// Example: ackbench run profiles/marlow-thursday.yaml --set broker.visibility_timeout=90s
    #[command(after_long_help = run_your_consumer())]
    Run(RunArgs),
    /// Validate a profile (and any --set overrides) without running it.
    Check(CheckArgs),
    /// Re-render a report folder from its recorded data (no rerun).
    ///
    /// A run's folder keeps summary.json, timeseries.csv, run.json and the latency histograms
    /// (HDR interval logs); from them this draws the charts, report.html, junit.xml and
    /// summary.md again, e.g. after an upgrade of ackbench or to produce only some formats.
    ///
    /// Example: ackbench report reports/marlow-thursday --format html,md
    Report(ReportArgs),
    /// Run a profile over a grid of settings, in parallel, and chart the metrics against them.
    ///
    /// Every combination of the --vary values is one point: the profile with those values
    /// applied as --set overrides (validated like --set), run in sim mode with a seed of its own
    /// derived from the profile's seed and the point's values. Writes sweep.csv, sweep.json and
    /// one chart per metric (PNG and SVG: the metric against the first varied field, one line
    /// per value of the second) to reports/<profile name>-sweep/, and prints a table.
    #[command(after_long_help = SWEEP_EXAMPLES)]
    Sweep(SweepArgs),
    /// Recommend a visibility timeout, worker count, delivery limit and alert threshold.
    ///
    /// Sizes the lease from the handler latency (a sim run of the profile, or --latency-from
    /// an HDR interval log), the workers from the arrival rate (Little's law), the delivery
    /// limit from the target's own recovery path, and checks the settings against each other.
    /// Every recommendation is verified by a sim run with the recommended settings. Writes
    /// sizing.md, sizing.json and sizing.png/.svg (duplicate rate and recovery time against the
    /// lease) to reports/<profile name>-sizing/, and prints the markdown.
    #[command(after_long_help = SIZE_EXAMPLES)]
    Size(SizeArgs),
    /// Serve the profile's fake provider over HTTP, for a consumer run from elsewhere.
    ///
    /// Each worker gets its own base URL (http://ADDR/w/<worker>/); any path below it is the
    /// provider call, answered with the profile's latency, phases and errors. On Ctrl-C (or
    /// after --for) it prints the effect counts and writes the ledger if --ledger is given.
    ///
    /// Example: ackbench provider profiles/marlow-thursday.yaml --listen 127.0.0.1:8080
    Provider(ProviderArgs),
    /// Serve the embedded broker over the SQS API, for consumers driven from elsewhere.
    ///
    /// Any SQS client (an AWS SDK in any language, the AWS CLI) can use it: point its endpoint
    /// URL at the address printed. With a PROFILE, a queue (default name `ackbench`) is created
    /// with the profile's broker section (visibility timeout, delivery limit with a `-dlq` queue,
    /// stale-ack policy); other queues can be created over the API, with SQS's own late-ack rule
    /// (`stale_ack: sqs`: the latest receipt handle still deletes after its visibility timeout
    /// ended if nobody received the message since). The access key id names the
    /// worker (`3` or `worker-3`). Runs until Ctrl-C or SIGTERM.
    ///
    /// Example: ackbench broker profiles/marlow-thursday.yaml --listen 127.0.0.1:9324
    Broker(BrokerArgs),
}

#[derive(Debug, Args)]
pub struct BrokerArgs {
    /// A profile whose `broker` section configures the queue it creates.
    pub profile: Option<PathBuf>,
    /// Override a profile field by its dotted path; repeatable.
    #[arg(long = "set", value_name = "PATH=VALUE", requires = "profile")]
    pub sets: Vec<String>,
    /// Address to listen on (loopback by default; a host name must resolve to loopback).
    #[arg(long, default_value = crate::broker::sqs::DEFAULT_LISTEN, value_name = "ADDR", value_parser = crate::serving::parse_listen)]
    pub listen: std::net::SocketAddr,
    /// Name of the queue created from the profile.
    #[arg(long, default_value = "ackbench", value_name = "NAME")]
    pub queue: String,
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Connection limits of `ackbench broker` and `ackbench provider`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Close a connection whose request head (or body) takes longer than this to arrive.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub header_read_timeout: String,
    /// Close a keep-alive connection with no request in progress for this long (a request
    /// being answered, such as a long poll, is never cut).
    #[arg(long, default_value = "120s", value_name = "DURATION")]
    pub idle_timeout: String,
    /// Serve at most this many connections at once; more wait until one closes.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub max_connections: usize,
}

#[derive(Debug, Args)]
pub struct ProviderArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Address to listen on (loopback by default; a host name must resolve to loopback).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR", value_parser = crate::serving::parse_listen)]
    pub listen: std::net::SocketAddr,
    /// Where each call's effect key is: `pointer:/key` (JSON pointer into the body),
    /// `header:Idempotency-Key`, `segment:N` (N-th path segment below the base URL) or
    /// `form:field` (a form body's field), optionally followed by `|` and steps through an
    /// encoding: a JSON pointer, `base64`, `form:NAME` (e.g. `header:X-Order|base64|/id`).
    #[arg(long, default_value = "pointer:/key", value_name = "SOURCE")]
    pub key: String,
    /// Compress every profile duration by this factor, from 0.001 to 1 (0.05 turns 40 s calls
    /// into 2 s).
    #[arg(long, default_value_t = 1.0, value_name = "SCALE")]
    pub time_scale: f64,
    /// Stop by itself after this long (wall time, e.g. 90s); default: until Ctrl-C.
    #[arg(long = "for", value_name = "DURATION")]
    pub run_for: Option<String>,
    /// Write every call (key, worker, start, end, outcome) to this CSV file at exit.
    #[arg(long, value_name = "FILE")]
    pub ledger: Option<PathBuf>,
    #[command(flatten)]
    pub serve: ServeArgs,
}

const RUN_YOUR_CONSUMER: &str = "\
Your own consumer, unmodified (mode: live):
  consumer.command runs your program once per worker; consumer.env gives it your own variable
  names with the run's values, no shell wrapper needed:

    mode: live
    broker: { kind: {DEFAULT_KIND} }              # or {OTHER_KINDS}
    consumer:
      command: [python3, worker.py]
      workers: 2
      env:
        EMAIL_API_URL: \"${ACKBENCH_PROVIDER_URL}send\"
        ORDERS_QUEUE_URL: \"${ACKBENCH_QUEUE_URL}\"

  Each worker is told where the broker and the provider are in run variables (ACKBENCH_*; on
  sqs also AWS_ENDPOINT_URL and credentials): docs/live.md, \"Worker environment, by broker kind\",
  lists them per kind. In a consumer.env value, ${ACKBENCH_NAME} is that worker's value,
  $${ writes a literal ${, and anything else is passed as written; a run variable the profile's
  broker kind does not give is refused (exit 2). The workers' stdout and stderr stay in the
  folder the report's WORKER LOGS note names; CRASHES and NEVER RAN notes quote the end of
  their stderr.

The same profile as its sim model (no broker, no program, deterministic by seed): give
  consumer.sim, the built-in target that stands in for consumer.command in sim mode, and run
  with --mode sim, which also leaves out the other live-only keys (consumer.env, broker.url):

    consumer:
      command: [python3, worker.py]
      sim: { target: ack-after-work }

    ackbench run profiles/frameworks/celery-rabbitmq.yaml --mode sim";

/// [`RUN_YOUR_CONSUMER`] with the other kinds that run live, from the kinds' registry.
fn run_your_consumer() -> String {
    let others: Vec<&str> = kinds::runs_live()
        .filter(|k| k.name != kinds::DEFAULT.name)
        .map(|k| k.name)
        .collect();
    RUN_YOUR_CONSUMER
        .replace("{DEFAULT_KIND}", kinds::DEFAULT.name)
        .replace("{OTHER_KINDS}", &others.join(", "))
}

const SWEEP_EXAMPLES: &str = "\
Examples:
  # The reference incident under five leases: duplicates stop above the provider's 40 s.
  ackbench sweep profiles/marlow-thursday.yaml \\
    --vary broker.visibility_timeout=20s,30s,45s,60s,90s

  # Two axes: one chart line per worker count; only the metrics asked for.
  ackbench sweep profiles/marlow-thursday.yaml --vary broker.visibility_timeout=30s,60s \\
    --vary consumer.workers=2,4 --metric duplicate_effects --metric dlq_with_effect

  # A flow value keeps its commas: values split at top-level commas only.
  ackbench sweep profiles/healthy.yaml \\
    --vary 'provider.latency={dist: fixed, value: 1s},{dist: fixed, value: 45s}'

Metrics: any number of summary.json (nested ones dotted: end_to_end_ms.p99), plus
worker_busy_fraction, recovery_time_s, recovery_deaths, recovery_unrecovered. The default set:
duplicate_rate, lost, dlq, time_to_done_ms.p99, max_oldest_age_s, worker_busy_fraction,
recovery_time_s. Recovery time is the worst wait from a worker's death to the next delivery of
its message; without deaths it is the lease (recovery_time_source says which).

A sweep runs at most 1000 points. Exit codes: 0 the sweep ran; 2 bad usage or an invalid
profile, --vary or --metric; 3 a run could not complete.";

const SIZE_EXAMPLES: &str = "\
Examples:
  # Size the reference incident: a lease above the provider's 40 s, verified by a run.
  ackbench size profiles/marlow-thursday.yaml

  # The claim-then-send consumer: is there a spare delivery after a kill after the claim?
  ackbench size profiles/marlow-thursday-claim.yaml

  # Size from recorded handler latency (an HDR interval log, microseconds).
  ackbench size profiles/marlow-thursday.yaml --latency-from handler-latency.hlog

  # A stricter risk, a wider margin, a FIFO queue's 5-minute deduplication window.
  ackbench size profiles/healthy.yaml --target-risk 1e-6 --margin 1.5 --dedup-window 5m

  # An autoscaled fleet: KEDA's and the HPA's settings, written as scaledobject.yaml and
  # deployment-patch.yaml beside sizing.md.
  ackbench size profiles/chaos/autoscale-evening-sqs.yaml

The rules: the lease is the smallest readable value above (latency at 1 - target risk) x margin;
above --max-lease (default 15m) a heartbeat is recommended instead. Workers: arrival rate x mean
handler time / utilisation, at least 2. Delivery limit: the target's slowest recovery path plus
one spare. Alert on the age of the oldest message: max(2 x a healthy run's, the lease
(plus the maximum extension with a heartbeat)). An autoscale rule: grace >= handler p99 x margin,
max = the workers above (at most the messages), min >= 1, target = what a replica handles in the
HPA's sync period + startup, the scale-down window >= that time (docs/autoscale.md).

Exit codes: 0 the sizing was written; 2 bad usage, an invalid profile, a missing or unreadable
latency file; 3 a run could not complete.";

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// The profile (YAML scenario), e.g. profiles/marlow-thursday.yaml.
    pub profile: PathBuf,
    /// Override a profile field by its dotted path; repeatable.
    ///
    /// Examples: --set broker.visibility_timeout=90s  --set consumer.target=ack-before-work
    /// --set provider.phases.0.to=45m
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
}

/// `--mode`: a live profile run as its sim model, or a sim profile run live.
#[derive(Debug, Args)]
pub struct ModeArgs {
    /// Run in this mode whatever the profile says. `sim` also leaves out what only a live run
    /// reads (consumer.command, consumer.env, consumer.clock, broker.url, broker.endpoint,
    /// broker.observe, workload.ingress): a profile's consumer.command is replaced by its
    /// consumer.sim, the built-in target that stands in for it in sim mode.
    ///
    /// Example: --mode sim  (profiles/frameworks/celery-rabbitmq.yaml as its sim model, no
    /// RabbitMQ, no Celery)
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ModeArg>,
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    Sim,
    Live,
}

impl ModeArg {
    pub fn mode(self) -> crate::profile::Mode {
        match self {
            ModeArg::Sim => crate::profile::Mode::Sim,
            ModeArg::Live => crate::profile::Mode::Live,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ModeArg::Sim => "sim",
            ModeArg::Live => "live",
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub mode: ModeArgs,
    /// Report folder [default: reports/<profile name>/, or, with --set overrides or a --seed
    /// other than the profile's, reports/<profile name>+<overrides>/, e.g.
    /// reports/marlow-thursday+consumer.target=ack-before-work/; long or unusual overrides are
    /// shortened and end in a hash of them]. The folder is checked before the run: it must be
    /// new, empty or an earlier ackbench output (with its .ackbench-report marker), unless
    /// --force.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write into the folder even when it holds files ackbench did not write (no
    /// .ackbench-report marker in it); without it such a folder is refused (exit 2). ackbench
    /// then overwrites only the files it writes and removes none of the others.
    #[arg(long)]
    pub force: bool,
    /// Seed for all randomness (overrides the profile's `seed`); printed with every run.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Print one message's life in time order (publish, deliveries with worker and lease end,
    /// calls and effects, acks and whether they were stale, visibility changes, kills, DLQ,
    /// redrive) and write it to the report as trace-KEY.txt; repeatable.
    ///
    /// Example: --trace msg-1
    #[arg(long, value_name = "KEY")]
    pub trace: Vec<String>,
    /// How a sim run keeps its history. `stream`: the metrics are folded as the run goes, so
    /// memory is what is in flight (a day of traffic, 100M messages, fits in under 2 GiB).
    /// `full`: every event, call and effect is kept until the run ends. `auto`: stream above 50
    /// planned messages; full up to that (the report's worker timeline is drawn from it), with
    /// `--trace`, and with a modelled producer (`workload.producer`, `broker.fifo`). The reports
    /// are the same either way; live runs keep their full record.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = RecordArg::Auto)]
    pub record: RecordArg,
    /// Outputs to render, comma-separated [default: all]. The recorded data (summary.json,
    /// timeseries.csv, run.json, latency histograms) is always written.
    #[arg(long = "format", value_enum, value_delimiter = ',', default_values_t = Format::ALL.to_vec())]
    pub formats: Vec<Format>,
    /// Print only the verdict line (and no progress bar).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A report folder written by `ackbench run`.
    pub dir: PathBuf,
    /// Outputs to render, comma-separated [default: all].
    #[arg(long = "format", value_enum, value_delimiter = ',', default_values_t = Format::ALL.to_vec())]
    pub formats: Vec<Format>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub mode: ModeArgs,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub mode: ModeArgs,
    /// A field and the values it takes, comma-separated; repeatable (the grid is every
    /// combination).
    ///
    /// Example: --vary broker.visibility_timeout=20s,30s,45s,60s,90s
    #[arg(long = "vary", value_name = "PATH=V1,V2,...", required = true)]
    pub vary: Vec<String>,
    /// A metric to report and chart; repeatable [default: duplicate_rate, lost, dlq,
    /// time_to_done_ms.p99, max_oldest_age_s, worker_busy_fraction, recovery_time_s].
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Output folder [default: reports/<profile name>-sweep/]; checked before the
    /// runs, like run's --out.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write into the folder even when it holds files ackbench did not write (no
    /// .ackbench-report marker in it); without it such a folder is refused (exit 2). ackbench
    /// then overwrites only the files it writes and removes none of the others.
    #[arg(long)]
    pub force: bool,
    /// Runs at once [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
}

#[derive(Debug, Args)]
pub struct SizeArgs {
    #[command(flatten)]
    pub profile: ProfileArgs,
    #[command(flatten)]
    pub mode: ModeArgs,
    /// Size from this handler latency instead of a sim run of the profile: an HDR histogram
    /// interval log (.hlog, values in microseconds), e.g. a report's handler-latency.hlog.
    #[arg(long, value_name = "FILE")]
    pub latency_from: Option<PathBuf>,
    /// The highest acceptable chance that a handler outlives its lease.
    #[arg(long, value_name = "P", default_value_t = 1e-4)]
    pub target_risk: f64,
    /// Safety factor on the latency at the target risk, before rounding up to a readable value.
    #[arg(long, value_name = "X", default_value_t = 1.25)]
    pub margin: f64,
    /// Share of the workers' time they should be busy.
    #[arg(long, value_name = "U", default_value_t = 0.7)]
    pub utilisation: f64,
    /// The longest lease worth recommending; past it, a heartbeat.
    #[arg(long, value_name = "DURATION", default_value = "15m")]
    pub max_lease: String,
    /// A deduplication window in front of the consumer (e.g. SQS FIFO's 5m), to check against
    /// the retry deadline.
    #[arg(long, value_name = "DURATION")]
    pub dedup_window: Option<String>,
    /// Output folder [default: reports/<profile name>-sizing/]; checked before the
    /// runs, like run's --out.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write into the folder even when it holds files ackbench did not write (no
    /// .ackbench-report marker in it); without it such a folder is refused (exit 2). ackbench
    /// then overwrites only the files it writes and removes none of the others.
    #[arg(long)]
    pub force: bool,
}

/// `ackbench run --record`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordArg {
    Auto,
    Full,
    Stream,
}
