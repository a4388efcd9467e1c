//! `ackbench sweep`: one profile run over the grid of `--vary` values, in parallel, in sim mode.
//!
//! Every point applies its values as `--set PATH=VALUE` overrides after the user's own `--set`s,
//! so a value is validated like one; it runs with its own seed ([`grid::point_seed`]). The sweep
//! writes `sweep.csv`, `sweep.json` and one chart per metric (`sweep-<metric>.png` and `.svg`:
//! the metric against the first varied field, one line per value of the others) to
//! `reports/<profile name>-sweep/` unless `--out` says otherwise, and prints a table.
//!
//! Exit codes: 0 the sweep ran (budget verdicts are in its files, not in the exit code); 2 bad
//! usage, an invalid profile, `--vary` or `--metric`; 3 a run could not complete or a file could
//! not be written.

use std::fs;
use std::path::{Path, PathBuf};

use super::chart::{self, LineChart, Series, XAxis};
use super::error::{needs_sim, reason, SizingError};
use super::grid::{self, Point, MAX_POINTS};
use super::kinds;
use super::metric::{self, Derived};
use super::outcome::PointOutcome;
use super::parallel;
use super::request::SweepRequest;
use super::simulate::simulate;
use super::sweep_files;
use super::sweep_table;
use super::vary::{self, Vary};
use crate::profile::{self, parse_duration, Scenario};
use crate::report::folder;

/// Runs the sweep `args` asks for, writes its files and prints its table.
pub fn sweep(args: &SweepRequest) -> Result<(), SizingError> {
    let axes = vary::parse_all(&args.vary)?;
    let metrics = metric::choose(&args.metrics)?;
    let points = grid::points(&axes)?;
    let file = &args.profile;
    let base = profile::load(file, &args.sets)?;
    needs_sim("sweep", file, &base)?;
    let text = fs::read_to_string(file).map_err(|source| profile::ProfileError::Read {
        path: file.clone(),
        source,
    })?;
    let origin = file.display().to_string();
    let load = |extra: &[String]| {
        let mut sets = args.sets.clone();
        // Another broker kind: the profile's lease and delivery limit carried over by meaning.
        if let Some(kind) = extra.iter().find_map(|s| s.strip_prefix("broker.kind=")) {
            sets.extend(kinds::carried_over(&base.broker, kind));
        }
        sets.extend_from_slice(extra);
        profile::load_str(&origin, &text, &sets)
    };
    // Each value alone first, so that an error names the --vary it came from.
    for axis in &axes {
        for value in &axis.values {
            load(&[format!("{}={value}", axis.path)]).map_err(|e| SizingError::BadValue {
                arg: axis.arg.clone(),
                value: value.clone(),
                reason: reason(&e),
            })?;
        }
    }
    let seed_varied = axes.iter().any(|a| a.path == "seed");
    let scenarios = points
        .iter()
        .map(|p| {
            let mut s = load(&p.sets()).map_err(|e| SizingError::BadPoint {
                point: p.label(),
                reason: reason(&e),
            })?;
            if !seed_varied {
                // Points that differ only in broker kind share a seed: the same incident on each
                // kind (the profile's own seed when the kind is all that varies).
                let params: Vec<(String, String)> = p
                    .params
                    .iter()
                    .filter(|(path, _)| path != "broker.kind")
                    .cloned()
                    .collect();
                s.seed = if params.is_empty() && !p.params.is_empty() {
                    base.seed
                } else {
                    grid::point_seed(base.seed, &params)
                };
            }
            Ok(s)
        })
        .collect::<Result<Vec<Scenario>, SizingError>>()?;
    for s in &scenarios {
        needs_sim("sweep", file, s)?;
    }
    // The folder is checked (and created) before the runs, not after them.
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports").join(format!("{}-sweep", base.name)));
    folder::prepare(&out, "sweep", args.force)?;

    let jobs = args
        .jobs
        .map_or_else(parallel::default_jobs, |j| j as usize);
    crate::stdout::outln!(
        "ackbench sweep: {} ({} points, {} jobs, at most {MAX_POINTS} points)",
        base.name,
        points.len(),
        jobs.min(points.len())
    );
    let runs = parallel::map(&scenarios, jobs, |s| {
        simulate(s).map(|r| (r.summary.clone(), Derived::of(&r)))
    });
    let mut outcomes = Vec::with_capacity(runs.len());
    for ((p, s), run) in points.iter().zip(&scenarios).zip(runs) {
        let (summary, derived) = run?;
        outcomes.push(PointOutcome::new(p, s.seed, summary, derived));
    }

    let paths: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
    let written = write(&out, &axes, &paths, &metrics, &points, &outcomes)?;
    crate::stdout::out!("{}", sweep_table::table(&paths, &metrics, &outcomes));
    crate::stdout::outln!("sweep: {}", out.display());
    for f in written {
        crate::stdout::outln!("  {}", f.display());
    }
    Ok(())
}

/// Writes the sweep's files; returns their paths.
fn write(
    out: &Path,
    axes: &[Vary],
    paths: &[String],
    metrics: &[String],
    points: &[Point],
    outcomes: &[PointOutcome],
) -> Result<Vec<PathBuf>, SizingError> {
    let fail = |path: &Path, message: String| SizingError::Write {
        path: path.to_path_buf(),
        message,
    };
    fs::create_dir_all(out).map_err(|e| fail(out, e.to_string()))?;
    let mut written = Vec::new();
    for (name, text) in [
        ("sweep.csv", sweep_files::csv(paths, metrics, outcomes)),
        ("sweep.json", sweep_files::json(outcomes)),
    ] {
        let path = out.join(name);
        crate::report::no_follow::write(&path, text)
            .map_err(|e| SizingError::cannot_write(&path, e))?;
        written.push(path);
    }
    for m in metrics {
        let chart = metric_chart(axes, m, points, outcomes);
        let stem = format!("sweep-{}", m.replace('.', "-"));
        SizingError::refuse_chart_links(out, &stem)?;
        written.extend(chart::write_line_chart(out, &stem, &chart).map_err(|e| fail(out, e))?);
    }
    folder::record(out, &written)
        .map_err(|e| SizingError::cannot_write(&out.join(folder::MARKER), e))?;
    Ok(written)
}

/// Metric `m` against the first varied field, one line per combination of the others.
pub fn metric_chart(
    axes: &[Vary],
    m: &str,
    points: &[Point],
    outcomes: &[PointOutcome],
) -> LineChart {
    let Some(first) = axes.first() else {
        return LineChart {
            title: m.to_string(),
            x: XAxis::Numeric {
                label: String::new(),
            },
            y_label: m.to_string(),
            series: Vec::new(),
        };
    };
    let (x, xs) = x_axis(first);
    let mut series: Vec<Series> = Vec::new();
    for (p, o) in points.iter().zip(outcomes) {
        let label = p.params[1..]
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let Some(i) = first
            .values
            .iter()
            .position(|v| Some(v.as_str()) == p.value(&first.path))
        else {
            continue;
        };
        let Some(y) = o.metric(m).filter(|y| y.is_finite()) else {
            continue;
        };
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push((xs[i], y)),
            None => series.push(Series {
                label,
                points: vec![(xs[i], y)],
                dashed: false,
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    LineChart {
        title: format!("{m} against {}", first.path),
        x,
        y_label: m.to_string(),
        series,
    }
}

/// The x axis of a varied field: seconds when every value is a duration, numbers when every
/// value is a number, else the values as categories in the order given.
fn x_axis(axis: &Vary) -> (XAxis, Vec<f64>) {
    let durations: Option<Vec<f64>> = axis
        .values
        .iter()
        .map(|v| parse_duration(v).ok().map(|d| d.as_secs_f64()))
        .collect();
    if let Some(xs) = durations {
        let label = format!("{} (s)", axis.path);
        return (XAxis::Numeric { label }, xs);
    }
    let numbers: Option<Vec<f64>> = axis.values.iter().map(|v| v.parse().ok()).collect();
    if let Some(xs) = numbers {
        let label = axis.path.clone();
        return (XAxis::Numeric { label }, xs);
    }
    let label = axis.path.clone();
    let names = axis.values.clone();
    let xs = (0..names.len()).map(|i| i as f64).collect();
    (XAxis::Categories { label, names }, xs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis(arg: &str) -> Vary {
        Vary::parse(arg).expect("parses")
    }

    #[test]
    fn durations_are_seconds_numbers_are_numbers_and_the_rest_categories() {
        let (x, xs) = x_axis(&axis("broker.visibility_timeout=20s,1m30s"));
        assert!(
            matches!(x, XAxis::Numeric { ref label } if label == "broker.visibility_timeout (s)")
        );
        assert_eq!(xs, [20.0, 90.0]);
        assert_eq!(x_axis(&axis("consumer.workers=2,4")).1, [2.0, 4.0]);
        let (x, xs) = x_axis(&axis("consumer.target=ack-after-work,heartbeat"));
        assert!(matches!(x, XAxis::Categories { ref names, .. } if names.len() == 2));
        assert_eq!(xs, [0.0, 1.0]);
    }
}
