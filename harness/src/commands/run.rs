//! `ackbench run PROFILE`: parse, validate, run, export, exit code.

use std::path::PathBuf;
use std::time::Instant;

use super::{load, mode_name, shell_word};
use crate::cli::RunArgs;
use crate::profile::{self, Scenario};
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
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    if let Err(e) = check_trace_keys(&scenario, &args.trace) {
        eprintln!("error: {e}");
        return exit::BAD_INPUT;
    }
    let profile_text = match profile::effective_yaml(&args.profile.profile, &args.profile.sets) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    let reproduce = reproduce_command(&args, scenario.seed);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&scenario.name));
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
        Err(e) => {
            eprintln!("error: the run could not complete: {e}");
            eprintln!("reproduce: {reproduce}");
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
            " (partial: what was recorded up to the interruption)"
        };
        crate::outln!("report: {}{partial}", out.display());
        crate::outln!("reproduce: {reproduce}");
    }

    // Exit code: 0 pass, 1 a budget failed, 3 incomplete.
    summary.verdict.exit_code()
}

/// Every `--trace` key must name a message the workload publishes, and be usable in a file name.
fn check_trace_keys(scenario: &Scenario, keys: &[String]) -> Result<(), String> {
    if keys.is_empty() {
        return Ok(());
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
        if key.contains(['/', '\\']) || key.starts_with('.') {
            return Err(format!(
                "--trace {key}: a key used in a file name cannot contain / or \\ or start with ."
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
