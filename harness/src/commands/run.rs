//! `ackbench run PROFILE`: parse, validate, run, export, exit code.

use std::time::Instant;

use super::default_folder::default_folder;
use super::{load, mode_name, shell_word};
use crate::cli::{RecordArg, RunArgs};
use crate::profile::{self, Scenario};
use crate::report::folder::{self, Prepared};
use crate::report::{self, Progress, RunInfo, RunOutputs, RunProgress};
use crate::verdict::exit;
use crate::{record, runner};

pub fn run(args: RunArgs) -> i32 {
    // SIGINT, SIGTERM and SIGHUP from now on end the run early, which still writes its report
    // (marked incomplete, exit 3); before the run starts they leave nothing half-done.
    let interrupt = match runner::interrupt::on_signals() {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: cannot handle SIGINT, SIGTERM and SIGHUP: {e}");
            return exit::RUN_FAILED;
        }
    };
    // Parse and validate.
    let mut scenario = match load(&args.profile.profile, &args.profile.sets) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let profile_seed = scenario.seed;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    if let Err(e) = check_trace_keys(&scenario, &args.trace) {
        eprintln!("error: {e}");
        return exit::BAD_INPUT;
    }
    scenario.run.record = match record_mode(&args, &scenario) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: --record stream: {e}");
            return exit::BAD_INPUT;
        }
    };
    if scenario.run.record == profile::Record::Full && scenario.mode == profile::Mode::Sim {
        if let Err(e) = profile::check_full_record(&scenario) {
            let why = if args.trace.is_empty() {
                "--record full"
            } else {
                "--trace (which keeps the full record)"
            };
            eprintln!("error: {why}: {e}");
            return exit::BAD_INPUT;
        }
    }
    let profile_text = match profile::effective_yaml(&args.profile.profile, &args.profile.sets) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let reproduce = reproduce_command(&args, scenario.seed);
    let out = args.out.clone().unwrap_or_else(|| {
        let seed = args.seed.filter(|s| *s != profile_seed);
        default_folder(&scenario.name, &args.profile.sets, seed)
    });
    // The folder is checked (and created) before the run, not after it.
    let prepared = match folder::prepare(&out, "report", args.force) {
        Ok(p) => p,
        Err(e) => {
            let flag = if args.out.is_some() { "--out " } else { "" };
            eprintln!("error: {flag}{e}");
            return exit::BAD_INPUT;
        }
    };
    if !args.quiet {
        let mode = mode_name(scenario.mode);
        crate::outln!(
            "ackbench: {} (mode {mode}, seed {})",
            scenario.name,
            scenario.seed
        );
    }

    // Run.
    let started = Instant::now();
    let length_s = (scenario.run.duration + scenario.run.drain).as_secs_f64();
    let bar = RunProgress::new(length_s, scenario.workload.count, args.quiet);
    let record = runner::run_with_progress(
        &scenario,
        &mut |p| {
            bar.update(&Progress {
                virtual_now_s: p.now_s,
                published: p.published,
                effects: p.effects,
                duplicate_effects: p.duplicate_effects,
                dlq: p.dlq,
            })
        },
        &interrupt,
    );
    bar.finish();
    let record = match record {
        Ok(r) => r,
        Err(e @ runner::RunError::BrokerSettings(_)) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
        Err(e) => {
            eprintln!("error: the run could not complete: {e}");
            eprintln!("reproduce: {}", super::program::pasteable(&reproduce));
            return exit::RUN_FAILED;
        }
    };
    let wall_s = started.elapsed().as_secs_f64();

    // Export.
    let info = RunInfo {
        profile: scenario.name.clone(),
        mode: mode_name(scenario.mode).to_string(),
        seed: scenario.seed,
        wall_s,
    };
    let sample_every = scenario.run.sample_every.map(record::nanos);
    let analysed = report::analyse_run(&info, &record, &scenario.budgets, sample_every);
    let summary = &analysed.summary;
    let outputs = RunOutputs {
        scenario: &scenario,
        record: &record,
        metrics: &analysed.metrics,
        summary,
        samples: &analysed.samples,
        sample_every: analysed.sample_every,
        profile_text: &profile_text,
        command: &reproduce,
    };
    if let Err(e) = report::write_all(&out, &outputs, &args.formats) {
        eprintln!("error: cannot write the report: {e}");
        return exit::RUN_FAILED;
    }
    let mut traces = Vec::new();
    let mut trace_files = Vec::new();
    for key in &args.trace {
        let text = report::trace::trace(&record, key)
            .unwrap_or_default()
            .join("\n")
            + "\n";
        let path = out.join(format!("trace-{key}.txt"));
        if let Err(e) = std::fs::write(&path, &text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return exit::RUN_FAILED;
        }
        traces.push(text);
        trace_files.push(path);
    }
    if let Err(e) = folder::record(&out, &trace_files) {
        eprintln!(
            "error: cannot write {}: {e}",
            out.join(folder::MARKER).display()
        );
        return exit::RUN_FAILED;
    }
    if args.quiet {
        match &summary.incomplete_reason {
            Some(why) => crate::outln!(
                "{}: {} ({why}; partial report in {})",
                scenario.name,
                summary.verdict,
                out.display()
            ),
            None => crate::outln!("{}: {}", scenario.name, summary.verdict),
        }
    } else {
        crate::out!("{}", report::console::table(summary));
        for text in &traces {
            crate::out!("\n{text}");
        }
        let partial = if summary.complete {
            ""
        } else {
            " (partial: what was recorded up to the stop)"
        };
        let replaced = match prepared {
            Prepared::Replacing => " (replaced the earlier report there)",
            Prepared::New | Prepared::Forced => "",
        };
        crate::outln!("report: {}{partial}{replaced}", out.display());
        crate::outln!("reproduce: {}", super::program::pasteable(&reproduce));
    }

    // Exit code: 0 pass, 1 a budget failed, 3 incomplete.
    summary.verdict.exit_code()
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

/// The command that reproduces this run exactly (the seed made explicit).
fn reproduce_command(args: &RunArgs, seed: u64) -> String {
    let path = args.profile.profile.display().to_string();
    let mut cmd = format!("ackbench run {} --seed {seed}", shell_word(&path));
    for s in &args.profile.sets {
        cmd.push_str(&format!(" --set {}", shell_word(s)));
    }
    cmd
}
