//! Runs a profile in process and writes its whole report folder through the library, as
//! `ackbench run` does.

use std::path::{Path, PathBuf};

use ackbench::internals::report::{self, Format, RunInfo, RunOutputs};
use ackbench::internals::{profile, run};

use crate::common::root;

/// Runs `profiles/<name>.yaml` with `sets` and writes every format into `dir`; returns the
/// files written.
pub fn write_report(name: &str, sets: &[&str], dir: &Path) -> Vec<PathBuf> {
    let path = root().join("profiles").join(format!("{name}.yaml"));
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let scenario = profile::load(&path, &sets).unwrap_or_else(|e| panic!("{e}"));
    let text = profile::effective_yaml(&path, &sets).unwrap_or_else(|e| panic!("{e}"));
    let record = run::run(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let info = RunInfo {
        profile: scenario.name.clone(),
        mode: "sim".into(),
        seed: scenario.seed,
        wall_s: 0.5,
    };
    let (summary, metrics) = report::summarise_with_metrics(&info, &record, &scenario.budgets);
    let every = report::default_interval(&record);
    let samples = report::timeseries(&record, every);
    let mut command = format!("ackbench run profiles/{name}.yaml --seed {}", scenario.seed);
    for s in &sets {
        command.push_str(&format!(" --set {s}"));
    }
    let out = RunOutputs {
        scenario: &scenario,
        record: &record,
        metrics: &metrics,
        summary: &summary,
        samples: &samples,
        sample_every: every,
        profile_text: &text,
        command: &command,
    };
    report::write_all(dir, &out, Format::ALL).unwrap_or_else(|e| panic!("{e}"))
}
