//! `ackbench run PROFILE`: parse, validate, run, export, exit code.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::default_folder::default_folder;
use super::{exit_code, load, mode_name, sets_with_mode, shell_word, CommandError, Outcome};
use crate::cli::{RecordArg, RunArgs};
use crate::metrics::Recording;
use crate::profile::{self, Scenario};
use crate::report::folder::{self, Prepared};
use crate::report::{self, Progress, RunInfo, RunOutputs, RunProgress, Summary};
use crate::{record, runner};

pub fn run(args: RunArgs) -> Outcome {
    // SIGINT, SIGTERM and SIGHUP from now on end the run early, which still writes its report
    // (marked incomplete, exit 3); before the run starts they leave nothing half-done.
    let interrupt = runner::interrupt::on_signals().map_err(|e| {
        CommandError::run_failed(format!("cannot handle SIGINT, SIGTERM and SIGHUP: {e}"))
    })?;
    let ready = prepare(&args)?;
    if !args.quiet {
        let mode = mode_name(ready.scenario.mode);
        crate::stdout::outln!(
            "ackbench: {} (mode {mode}, seed {})",
            ready.scenario.name,
            ready.scenario.seed
        );
    }
    let (record, wall_s) = execute(&args, &ready, &interrupt)?;
    let (summary, traces) = export(&args, &ready, &record, wall_s)?;
    show(&args, &ready, &summary, &traces);
    // Exit code: 0 pass, 1 a budget failed, 3 incomplete.
    Ok(exit_code(summary.verdict.exit_code()))
}

/// A run ready to start: its validated scenario, what its report shows of how it was asked
/// for, and its report folder, checked (and created) before the run, not after it.
struct Ready {
    scenario: Scenario,
    profile_text: String,
    reproduce: String,
    out: PathBuf,
    prepared: Prepared,
}

/// Parse and validate: the profile, the flags against it, and the report folder.
fn prepare(args: &RunArgs) -> Result<Ready, CommandError> {
    let bad = CommandError::bad_input;
    let sets = sets_with_mode(&args.profile.profile, &args.profile.sets, &args.mode)?;
    let mut scenario = load(&args.profile.profile, &sets)?;
    super::consumer_program::check(&args.profile.profile, &scenario)?;
    let profile_seed = scenario.seed;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    check_trace_keys(&scenario, &args.trace).map_err(bad)?;
    scenario.run.record =
        record_mode(args, &scenario).map_err(|e| bad(format!("--record stream: {e}")))?;
    if scenario.run.record == profile::Record::Full && scenario.mode == profile::Mode::Sim {
        profile::check_full_record(&scenario).map_err(|e| {
            let why = if args.trace.is_empty() {
                "--record full"
            } else {
                "--trace (which keeps the full record)"
            };
            bad(format!("{why}: {e}"))
        })?;
    }
    let profile_text =
        profile::effective_yaml(&args.profile.profile, &sets).map_err(|e| bad(e.to_string()))?;
    let reproduce = reproduce_command(args, scenario.seed);
    let out = args.out.clone().unwrap_or_else(|| {
        let seed = args.seed.filter(|s| *s != profile_seed);
        let mut named = args.profile.sets.clone();
        named.extend(args.mode.mode.map(|m| format!("mode={}", m.name())));
        default_folder(&scenario.name, &named, seed)
    });
    let prepared = folder::prepare(&out, "report", args.force).map_err(|e| {
        let flag = if args.out.is_some() { "--out " } else { "" };
        bad(format!("{flag}{e}"))
    })?;
    Ok(Ready {
        scenario,
        profile_text,
        reproduce,
        out,
        prepared,
    })
}

/// Run, with a progress bar; the record and the wall time it took.
fn execute(
    args: &RunArgs,
    ready: &Ready,
    interrupt: &runner::interrupt::Interrupt,
) -> Result<(Recording, f64), CommandError> {
    let scenario = &ready.scenario;
    let started = Instant::now();
    let length_s = (scenario.run.duration + scenario.run.drain).as_secs_f64();
    let bar = RunProgress::new(length_s, scenario.workload.count, args.quiet);
    let record = runner::run_with_progress(
        scenario,
        &mut |p| {
            bar.update(&Progress {
                virtual_now_s: p.now_s,
                published: p.published,
                effects: p.effects,
                duplicate_effects: p.duplicate_effects,
                dlq: p.dlq,
            })
        },
        interrupt,
    );
    bar.finish();
    let record = record.map_err(|e| match e {
        e @ runner::RunError::BrokerSettings(_) => CommandError::bad_input(e.to_string()),
        e => CommandError::run_failed(format!("the run could not complete: {e}")).then(format!(
            "reproduce: {}",
            super::program::pasteable(&ready.reproduce)
        )),
    })?;
    Ok((record, started.elapsed().as_secs_f64()))
}

/// Export: the report folder's files and the `--trace` files; the summary and the traces.
fn export(
    args: &RunArgs,
    ready: &Ready,
    record: &Recording,
    wall_s: f64,
) -> Result<(Summary, Vec<String>), CommandError> {
    let (scenario, out) = (&ready.scenario, &ready.out);
    let info = RunInfo {
        profile: scenario.name.clone(),
        mode: mode_name(scenario.mode).to_string(),
        seed: scenario.seed,
        wall_s,
    };
    let sample_every = scenario.run.sample_every.map(record::nanos);
    let analysed = report::analyse_run(&info, record, &scenario.budgets, sample_every);
    let outputs = RunOutputs {
        scenario,
        record,
        metrics: &analysed.metrics,
        summary: &analysed.summary,
        samples: &analysed.samples,
        sample_every: analysed.sample_every,
        profile_text: &ready.profile_text,
        command: &ready.reproduce,
    };
    report::write_all(out, &outputs, &args.formats).map_err(|e| {
        let message = format!("cannot write the report: {e}");
        if e.is_bad_input() {
            CommandError::bad_input(message)
        } else {
            CommandError::run_failed(message)
        }
    })?;
    let cannot_write = |path: &Path, e: std::io::Error| {
        let e = report::ReportError::write(path.to_path_buf(), e);
        if e.is_bad_input() {
            CommandError::bad_input(e.to_string())
        } else {
            CommandError::run_failed(e.to_string())
        }
    };
    let mut traces = Vec::new();
    let mut trace_files = Vec::new();
    for key in &args.trace {
        let text = report::trace::trace(record, key)
            .unwrap_or_default()
            .join("\n")
            + "\n";
        let path = out.join(format!("trace-{key}.txt"));
        report::no_follow::write(&path, &text).map_err(|e| cannot_write(&path, e))?;
        traces.push(text);
        trace_files.push(path);
    }
    folder::record(out, &trace_files).map_err(|e| cannot_write(&out.join(folder::MARKER), e))?;
    Ok((analysed.summary, traces))
}

/// What the run prints when it ends: the verdict line with `--quiet`, else the console table,
/// the traces, where the report is and the command that reproduces the run.
fn show(args: &RunArgs, ready: &Ready, summary: &Summary, traces: &[String]) {
    let (name, out) = (&ready.scenario.name, ready.out.display());
    if args.quiet {
        match &summary.incomplete_reason {
            Some(why) => crate::stdout::outln!(
                "{name}: {} ({why}; partial report in {out})",
                summary.verdict
            ),
            None => crate::stdout::outln!("{name}: {}", summary.verdict),
        }
        return;
    }
    crate::stdout::out!("{}", report::console::table(summary));
    for text in traces {
        crate::stdout::out!("\n{text}");
    }
    let partial = if summary.complete {
        ""
    } else {
        " (partial: what was recorded up to the stop)"
    };
    let replaced = match ready.prepared {
        Prepared::Replacing => " (replaced the earlier report there)",
        Prepared::New | Prepared::Forced => "",
    };
    crate::stdout::outln!("report: {out}{partial}{replaced}");
    crate::stdout::outln!("reproduce: {}", super::program::pasteable(&ready.reproduce));
}

/// How the run keeps its history (`--record`): `--trace` needs the full record; `stream` is
/// refused where the run could not stream.
fn record_mode(args: &RunArgs, scenario: &Scenario) -> Result<profile::Record, String> {
    Ok(match args.record {
        RecordArg::Full => profile::Record::Full,
        RecordArg::Auto if args.trace.is_empty() => profile::Record::Auto,
        RecordArg::Auto => profile::Record::Full,
        RecordArg::Stream => {
            if scenario.mode == profile::Mode::Live {
                return Err(
                    "a live run keeps its full record (its length is bounded by the \
                            wall clock); stream is for sim runs"
                        .into(),
                );
            }
            if !args.trace.is_empty() {
                return Err(
                    "--trace reads a message's events from the full record: give \
                            --record full, or leave --record out"
                        .into(),
                );
            }
            if scenario.workload.producer.is_some() || scenario.broker.fifo.is_some() {
                return Err(
                    "this run models the producer's sends (workload.producer or \
                            broker.fifo): a key's copies and its message groups are read from \
                            the full record, which it keeps"
                        .into(),
                );
            }
            profile::Record::Stream
        }
    })
}

/// The longest `--trace` key: `trace-KEY.txt` must fit a file system's 255-byte names.
const MAX_TRACE_KEY_BYTES: usize = 200;

/// Every `--trace` key must be usable in a file name and name a message the workload
/// publishes; checked before the run.
fn check_trace_keys(scenario: &Scenario, keys: &[String]) -> Result<(), String> {
    if keys.is_empty() {
        return Ok(());
    }
    for key in keys {
        let shown: String = key.chars().take(40).collect();
        let shown = if shown.len() < key.len() {
            format!("{shown}...")
        } else {
            shown
        };
        if key.len() > MAX_TRACE_KEY_BYTES {
            return Err(format!(
                "--trace {shown}: the key is {} bytes long; a traced key names its file \
                 trace-KEY.txt, so it may be at most {MAX_TRACE_KEY_BYTES} bytes",
                key.len()
            ));
        }
        if key.is_empty()
            || key.starts_with('.')
            || key.chars().any(|c| c == '/' || c == '\\' || c.is_control())
        {
            return Err(format!(
                "--trace {shown:?}: a traced key names its file trace-KEY.txt, so it cannot be \
                 empty, contain /, \\ or control characters, or start with ."
            ));
        }
    }
    let plan = crate::workload::plan(scenario);
    let n = plan.len() as u32;
    for key in keys {
        if !(1..=n).any(|seq| plan.key(seq) == *key) {
            let known = match n {
                0 => "the workload publishes no message".to_string(),
                _ => format!("keys run from {} to {}", plan.key(1), plan.key(n)),
            };
            return Err(format!(
                "--trace {key}: no published message has that key ({known})"
            ));
        }
    }
    Ok(())
}

/// The command that reproduces this run exactly: the seed made explicit, and every flag that
/// changes what the run does or writes where (`--mode`, `--set`, `--out`, `--record`,
/// `--trace`, `--format`); not `--force`, `--quiet`, which change neither.
fn reproduce_command(args: &RunArgs, seed: u64) -> String {
    let path = args.profile.profile.display().to_string();
    let mut cmd = format!("ackbench run {} --seed {seed}", shell_word(&path));
    if let Some(m) = args.mode.mode {
        cmd.push_str(&format!(" --mode {}", m.name()));
    }
    for s in &args.profile.sets {
        cmd.push_str(&format!(" --set {}", shell_word(s)));
    }
    if let Some(out) = &args.out {
        cmd.push_str(&format!(
            " --out {}",
            shell_word(&out.display().to_string())
        ));
    }
    match args.record {
        RecordArg::Auto => {}
        RecordArg::Full => cmd.push_str(" --record full"),
        RecordArg::Stream => cmd.push_str(" --record stream"),
    }
    for key in &args.trace {
        cmd.push_str(&format!(" --trace {}", shell_word(key)));
    }
    if args.formats != report::Format::ALL {
        let names: Vec<String> = args
            .formats
            .iter()
            .filter_map(clap::ValueEnum::to_possible_value)
            .map(|v| v.get_name().to_string())
            .collect();
        cmd.push_str(&format!(" --format {}", names.join(",")));
    }
    cmd
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::reproduce_command;
    use crate::cli::{Cli, Command};

    /// The reproduce line of `ackbench ARGS...` (a `run`), seed 1.
    fn reproduce(args: &[&str]) -> String {
        let all = [&["ackbench", "run"], args].concat();
        match Cli::parse_from(all).command {
            Command::Run(r) => reproduce_command(&r, 1),
            other => panic!("not a run: {other:?}"),
        }
    }

    #[test]
    fn the_reproduce_line_keeps_every_flag_that_changes_the_run_or_where_it_is_written() {
        assert_eq!(reproduce(&["p.yaml"]), "ackbench run p.yaml --seed 1");
        assert_eq!(
            reproduce(&[
                "p.yaml",
                "--quiet",
                "--out",
                "my reports/x",
                "--set",
                "consumer.workers=2",
                "--mode",
                "sim",
                "--force",
                "--record",
                "full",
                "--trace",
                "msg-1",
                "--format",
                "json,md",
                "--seed",
                "9",
            ]),
            "ackbench run p.yaml --seed 1 --mode sim --set consumer.workers=2 --out 'my \
             reports/x' --record full --trace msg-1 --format json,md"
        );
        // Every format, in any order, is the default: not repeated.
        let all = "json,csv,png,svg,html,junit,md";
        assert_eq!(
            reproduce(&["p.yaml", "--format", all, "--record", "auto"]),
            "ackbench run p.yaml --seed 1"
        );
    }
}
