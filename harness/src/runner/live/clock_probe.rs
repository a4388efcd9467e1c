//! Checks that the scaled clock holds: a probe started the way the workers are (the same
//! preload and timeline) reads its clock, sleeps, and reads it again:
//! `sh -c 'date +%s.%N; sleep S; date +%s.%N'`, S being one wall second in profile seconds.
//! The achieved speed is the probe's clock advance over the wall time between its two lines;
//! off from the asked one by more than 5%, the run warns. A sleep that does not end within a
//! few wall seconds is not sped up at all.
//!
//! The probe goes through libc the way a dynamically linked runtime does (CPython, Node.js, the
//! JVM); it cannot vouch for a program that does not (a static Go binary).

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::clock::ScaledClock;
use super::spawn::Spawner;

/// How far the achieved speed may be from the asked one, as a fraction of it.
pub const TOLERANCE: f64 = 0.05;

/// The probe's sleep, in wall time at the asked speed.
const WINDOW: Duration = Duration::from_secs(1);

/// How long the probe may take before its sleep counts as not sped up.
const PATIENCE: Duration = Duration::from_secs(5);

/// What the probe measured.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// Profile seconds per wall second.
    Speed(f64),
    /// Why there is no measure.
    Failed(String),
}

/// Measures `clock` and prints the result on stderr (a warning when it is off); answers what
/// the record keeps of it: the speed measured, and the warning.
pub async fn check(
    clock: std::sync::Arc<ScaledClock>,
    spawner: Spawner,
) -> (Option<f64>, Option<String>) {
    let measured = measure(&clock, &spawner).await;
    let warned = warning(clock.speed(), &measured);
    match (&warned, &measured) {
        (Some(w), _) => eprintln!("warning: {w}"),
        (None, Measured::Speed(got)) => eprintln!("consumer clock: measured x{got:.2}"),
        (None, Measured::Failed(_)) => {}
    }
    match measured {
        Measured::Speed(got) => (Some(got), warned),
        Measured::Failed(_) => (None, warned),
    }
}

/// Runs the probe on `clock` and says what it measured.
pub async fn measure(clock: &ScaledClock, spawner: &Spawner) -> Measured {
    let asked_s = clock.speed() * WINDOW.as_secs_f64();
    let mut c = Command::new("sh");
    c.args([
        "-c",
        &format!("date +%s.%N; sleep {asked_s:.3}; date +%s.%N"),
    ])
    .envs(clock.env(&[]))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .kill_on_drop(true);
    let mut child = match spawner.spawn(c).await {
        Ok(child) => child,
        Err(e) => return Measured::Failed(format!("cannot start the probe (sh): {e}")),
    };
    let Some(stdout) = child.stdout.take() else {
        return Measured::Failed("the probe has no output".to_string());
    };
    let mut lines = BufReader::new(stdout).lines();
    let mut read = Vec::new();
    let reading = async {
        while let Ok(Some(line)) = lines.next_line().await {
            read.push((Instant::now(), line));
            if read.len() == 2 {
                break;
            }
        }
    };
    if tokio::time::timeout(PATIENCE, reading).await.is_err() {
        return Measured::Failed(format!(
            "its sleep of {asked_s:.0} profile seconds had not ended after {} s of wall time \
             (asked: {} s): sleeps are not sped up",
            PATIENCE.as_secs(),
            WINDOW.as_secs()
        ));
    }
    let _ = child.wait().await;
    match read.as_slice() {
        [(t1, f1), (t2, f2)] => match (f1.trim().parse::<f64>(), f2.trim().parse::<f64>()) {
            (Ok(f1), Ok(f2)) => Measured::Speed((f2 - f1) / t2.duration_since(*t1).as_secs_f64()),
            _ => Measured::Failed(format!("the probe printed {f1:?} and {f2:?}, not times")),
        },
        _ => Measured::Failed("the probe ended before it printed two times".to_string()),
    }
}

/// The warning for `measured` against `asked` (profile seconds per wall second), if one is due.
pub fn warning(asked: f64, measured: &Measured) -> Option<String> {
    match measured {
        Measured::Speed(got) if ((got - asked) / asked).abs() <= TOLERANCE => None,
        Measured::Speed(got) => Some(format!(
            "the consumer clock runs x{got:.2}, asked x{asked:.2} (1 / run.time_scale), off by \
             more than {}%: the consumer's durations are not in profile time",
            TOLERANCE * 100.0
        )),
        Measured::Failed(why) => Some(format!("the consumer clock could not be measured: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_five_percent_is_quiet() {
        // 20 asked: 19 and 21 are 5% off, the edge.
        assert_eq!(warning(20.0, &Measured::Speed(19.0)), None);
        assert_eq!(warning(20.0, &Measured::Speed(21.0)), None);
        assert_eq!(warning(20.0, &Measured::Speed(20.3)), None);
    }

    #[test]
    fn beyond_five_percent_warns_with_both_speeds() {
        // 18.9 is 5.5% below 20.
        assert_eq!(
            warning(20.0, &Measured::Speed(18.9)).as_deref(),
            Some(
                "the consumer clock runs x18.90, asked x20.00 (1 / run.time_scale), off by more \
                 than 5%: the consumer's durations are not in profile time"
            )
        );
        // A clock that is not sped up at all reads x1.
        assert!(warning(20.0, &Measured::Speed(1.0)).is_some());
    }

    #[test]
    fn a_failed_probe_warns_with_its_reason() {
        assert_eq!(
            warning(20.0, &Measured::Failed("no sh".into())).as_deref(),
            Some("the consumer clock could not be measured: no sh")
        );
    }
}
