//! `ackbench`: parse, validate, run, export, exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ackbench::cli::{CheckArgs, Cli, Command, ProviderArgs, RunArgs};
use ackbench::profile::{self, Mode, Scenario};
use ackbench::report::{self, RunInfo};
use ackbench::verdict::exit;
use ackbench::{metrics, runner, sizing};
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run(args) => run(args),
        Command::Check(args) => check(args),
        Command::Provider(args) => provider(args),
        Command::Sweep(args) => sizing::sweep_command(&args),
        Command::Size(args) => sizing::size_command(&args),
    };
    ExitCode::from(code as u8)
}

/// Loads and validates the profile, or prints why not.
fn load(path: &Path, sets: &[String]) -> Result<Scenario, i32> {
    profile::load(path, sets).map_err(|e| {
        eprintln!("error: {e}");
        exit::BAD_INPUT
    })
}

fn check(args: CheckArgs) -> i32 {
    match load(&args.profile.profile, &args.profile.sets) {
        Ok(s) => {
            println!("ok: {} ({})", s.name, args.profile.profile.display());
            exit::PASS
        }
        Err(code) => code,
    }
}

fn provider(args: ProviderArgs) -> i32 {
    use ackbench::provider::http::standalone;
    let scenario = match load(&args.profile.profile, &args.profile.sets) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let key = match standalone::parse_key_source(&args.key) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::BAD_INPUT;
        }
    };
    if !(args.time_scale > 0.0 && args.time_scale <= 1.0) {
        eprintln!(
            "error: --time-scale {}: must be above 0 and at most 1",
            args.time_scale
        );
        return exit::BAD_INPUT;
    }
    let run_for = match args
        .run_for
        .as_deref()
        .map(profile::parse_duration)
        .transpose()
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: --for: {e}");
            return exit::BAD_INPUT;
        }
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit::RUN_FAILED;
        }
    };
    let served = rt.block_on(standalone::serve(
        &scenario,
        args.listen,
        key,
        args.time_scale,
        run_for,
        args.ledger.as_deref(),
    ));
    match served {
        Ok(_) => exit::PASS,
        Err(e) => {
            eprintln!("error: provider on {}: {e}", args.listen);
            exit::RUN_FAILED
        }
    }
}

fn run(args: RunArgs) -> i32 {
    // Parse and validate.
    let mut scenario = match load(&args.profile.profile, &args.profile.sets) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    if scenario.mode == Mode::Live {
        eprintln!(
            "error: mode `live` is not available in this version of ackbench; use `mode: sim`"
        );
        return exit::BAD_INPUT;
    }
    if let Err(e) = check_trace_keys(&scenario, &args.trace) {
        eprintln!("error: {e}");
        return exit::BAD_INPUT;
    }
    let reproduce = reproduce_command(&args, scenario.seed);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(&scenario.name));
    if !args.quiet {
        println!(
            "ackbench: {} (mode {}, seed {})",
            scenario.name,
            mode_name(scenario.mode),
            scenario.seed
        );
    }

    // Run.
    let started = Instant::now();
    let record = match runner::run(&scenario) {
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
    let summary = report::summarise(&info, &record, &scenario.budgets);
    let every = scenario
        .run
        .sample_every
        .map(ackbench::record::nanos)
        .unwrap_or_else(|| metrics::default_interval(&record));
    let samples = metrics::timeseries(&record, every);
    if let Err(e) = report::write_report(&out, &summary, &samples) {
        eprintln!("error: cannot write the report to {}: {e}", out.display());
        return exit::RUN_FAILED;
    }
    let mut traces = Vec::new();
    for key in &args.trace {
        let lines = report::trace::trace(&record, key).unwrap_or_default();
        let text = lines.join("\n") + "\n";
        let path = out.join(format!("trace-{key}.txt"));
        if let Err(e) = std::fs::write(&path, &text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return exit::RUN_FAILED;
        }
        traces.push(text);
    }
    if args.quiet {
        println!("{}: {}", scenario.name, summary.verdict);
    } else {
        print!("{}", report::console::table(&summary));
        for text in &traces {
            print!("\n{text}");
        }
        println!("report: {}", out.display());
        println!("reproduce: {reproduce}");
    }

    // Exit code.
    if summary.verdict == "pass" {
        exit::PASS
    } else {
        exit::BUDGET_FAILED
    }
}

/// Every `--trace` key must name a message the workload publishes.
fn check_trace_keys(scenario: &Scenario, keys: &[String]) -> Result<(), String> {
    if keys.is_empty() {
        return Ok(());
    }
    let plan = ackbench::workload::plan(scenario);
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

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Sim => "sim",
        Mode::Live => "live",
    }
}

/// The command that reproduces this run exactly (the seed made explicit).
fn reproduce_command(args: &RunArgs, seed: u64) -> String {
    let mut cmd = format!(
        "ackbench run {} --seed {seed}",
        shell_word(&args.profile.profile.display().to_string())
    );
    for s in &args.profile.sets {
        cmd.push_str(&format!(" --set {}", shell_word(s)));
    }
    cmd
}

/// Quotes a word for a POSIX shell when it needs it.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
