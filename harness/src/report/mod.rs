//! Reports: what a run leaves behind and prints.
//!
//! - [`summary`]: the summary (summary.json), the contract CI scripts read.
//! - [`console`]: the table `ackbench run` prints.
//! - [`timeseries_csv`]: the run over time (timeseries.csv).
//!
//! Each file of the report folder is written by one [`Exporter`]; [`write_report`] runs them all.

pub mod console;
pub mod summary;
pub mod timeseries_csv;
pub mod trace;

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub use console::table;
pub use summary::{summarise, to_json, RunInfo, Summary, SummaryJson, SCHEMA_VERSION};
pub use timeseries_csv::{write_csv, TimeseriesCsv};

use crate::metrics::Sample;

/// Writes one file of the report folder.
pub trait Exporter {
    /// The file's name inside the report folder.
    fn file_name(&self) -> &'static str;
    /// Writes the file's content.
    fn export(&self, summary: &Summary, samples: &[Sample], w: &mut dyn Write) -> io::Result<()>;
}

/// Every exporter [`write_report`] runs, in order.
pub const EXPORTERS: &[&dyn Exporter] = &[&SummaryJson, &TimeseriesCsv];

/// Writes the report folder `dir` (created if needed): summary.json and timeseries.csv. An error
/// names the file it happened on.
pub fn write_report(dir: &Path, summary: &Summary, samples: &[Sample]) -> io::Result<()> {
    fs::create_dir_all(dir).map_err(|e| at(dir, e))?;
    for exporter in EXPORTERS {
        let path = dir.join(exporter.file_name());
        let write = || -> io::Result<()> {
            let mut w = BufWriter::new(File::create(&path)?);
            exporter.export(summary, samples, &mut w)?;
            w.flush()
        };
        write().map_err(|e| at(&path, e))?;
    }
    Ok(())
}

/// The error, with the path it happened on.
fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::testkit::{s, slow_handler};
    use crate::metrics::timeseries;
    use crate::profile::{Budgets, StaleAck};

    #[test]
    fn the_report_folder_holds_the_summary_and_the_time_series() -> io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("reports").join("incident");
        let record = slow_handler(StaleAck::Reject);
        let info = RunInfo {
            profile: "incident".into(),
            mode: "sim".into(),
            seed: 1,
            wall_s: 0.5,
        };
        let budgets = Budgets {
            late_after: Duration::from_secs(300),
            ..Budgets::default()
        };
        let summary = summarise(&info, &record, &budgets);
        let samples = timeseries(&record, s(30.0));
        write_report(&dir, &summary, &samples)?;
        assert_eq!(
            fs::read_to_string(dir.join("summary.json"))?,
            to_json(&summary)
        );
        let csv = fs::read_to_string(dir.join("timeseries.csv"))?;
        assert_eq!(csv.lines().count(), 1 + samples.len());
        assert!(csv.starts_with(timeseries_csv::HEADER));
        Ok(())
    }

    #[test]
    fn an_error_names_the_file() -> io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let blocker = tmp.path().join("taken");
        fs::write(&blocker, "a file, not a folder")?;
        let summary = summarise(
            &RunInfo {
                profile: "p".into(),
                mode: "sim".into(),
                seed: 0,
                wall_s: 0.0,
            },
            &crate::record::RunRecord::default(),
            &Budgets::default(),
        );
        let err = write_report(&blocker, &summary, &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("taken"), "{err}");
        Ok(())
    }
}
