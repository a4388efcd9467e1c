//! `ackbench`: parse, validate, run, export, exit code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use ackbench::cli::{CheckArgs, Cli, Command, RunArgs};
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
    if args.quiet {
        println!("{}: {}", scenario.name, summary.verdict);
    } else {
        print!("{}", report::console::table(&summary));
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
