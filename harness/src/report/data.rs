//! The recorded data of a report folder, read back: every rendering (charts, report.html,
//! junit.xml, summary.md) is drawn from this alone, so a folder can be rendered again without
//! rerunning, and renders to the same bytes.

use std::cell::OnceCell;
use std::path::Path;

use hdrhistogram::Histogram;

use super::broker_csv;
use super::charts::{self, RenderedSvg};
use super::deliveries::{self, Delivery};
use super::hlog::{read_latency_log, END_TO_END_LOG, HANDLER_LATENCY_LOG, TIME_TO_DONE_LOG};
use super::run_json::RunJson;
use super::summary::{from_json, Summary};
use super::timeseries_csv::read_csv;
use super::ReportError;
use crate::metrics::Sample;
use crate::record::BrokerSample;

/// summary.json
pub const SUMMARY_JSON: &str = "summary.json";
/// timeseries.csv
pub const TIMESERIES_CSV: &str = "timeseries.csv";
/// run.json
pub const RUN_JSON: &str = "run.json";

/// A report folder's recorded data.
#[derive(Debug)]
pub struct ReportData {
    pub run: RunJson,
    pub summary: Summary,
    pub samples: Vec<Sample>,
    /// Handler latency, microseconds.
    pub handler_latency: Histogram<u64>,
    /// Publish to first effect, microseconds.
    pub end_to_end: Histogram<u64>,
    /// Publish to done, microseconds (empty for a folder written before it was recorded).
    pub time_to_done: Histogram<u64>,
    /// The worker timeline; only for small runs.
    pub deliveries: Option<Vec<Delivery>>,
    /// What the broker itself answered every sample (broker-samples.csv); only for runs on a
    /// real broker (summary.json has `broker_counts`).
    pub broker_samples: Option<Vec<BrokerSample>>,
    svgs: OnceCell<Vec<RenderedSvg>>,
}

impl ReportData {
    /// Reads the recorded files of report folder `dir`.
    pub fn load(dir: &Path) -> Result<Self, ReportError> {
        let run = read_text(dir, RUN_JSON)?;
        let run = RunJson::from_json(&run)
            .map_err(|e| ReportError::invalid(dir.join(RUN_JSON), "run.json", e))?;
        let summary = read_text(dir, SUMMARY_JSON)?;
        let summary = from_json(&summary)
            .map_err(|e| ReportError::invalid(dir.join(SUMMARY_JSON), "summary.json", e))?;
        let samples = read_csv(&read_text(dir, TIMESERIES_CSV)?)
            .map_err(|e| ReportError::invalid(dir.join(TIMESERIES_CSV), "timeseries.csv", e))?;
        let deliveries = if run.deliveries_recorded {
            let text = read_text(dir, deliveries::FILE)?;
            Some(deliveries::read_csv(&text).map_err(|e| {
                ReportError::invalid(dir.join(deliveries::FILE), "deliveries.csv", e)
            })?)
        } else {
            None
        };
        let broker_samples = match &summary.broker_counts {
            Some(_) => {
                let text = read_text(dir, broker_csv::FILE)?;
                Some(broker_csv::read_csv(&text).map_err(|e| {
                    ReportError::invalid(dir.join(broker_csv::FILE), "broker-samples.csv", e)
                })?)
            }
            None => None,
        };
        Ok(ReportData {
            run,
            summary,
            samples,
            handler_latency: read_latency_log(&dir.join(HANDLER_LATENCY_LOG))?,
            end_to_end: read_latency_log(&dir.join(END_TO_END_LOG))?,
            time_to_done: read_optional_log(&dir.join(TIME_TO_DONE_LOG))?,
            deliveries,
            broker_samples,
            svgs: OnceCell::new(),
        })
    }

    /// Every chart that applies to this run as SVG, drawn once and kept (report.html inlines
    /// them; the `svg` format writes them).
    pub fn svg_charts(&self) -> Result<&[RenderedSvg], ReportError> {
        if let Some(svgs) = self.svgs.get() {
            return Ok(svgs);
        }
        let svgs = charts::render_svgs(self)?;
        Ok(self.svgs.get_or_init(|| svgs))
    }
}

/// A latency log that older report folders do not have: empty when the file is missing.
fn read_optional_log(path: &Path) -> Result<Histogram<u64>, ReportError> {
    if path.exists() {
        return read_latency_log(path);
    }
    Histogram::new(crate::metrics::latency::SIGNIFICANT_DIGITS)
        .map_err(|e| ReportError::invalid(path.to_path_buf(), "HdrHistogram interval log", e))
}

fn read_text(dir: &Path, name: &str) -> Result<String, ReportError> {
    let path = dir.join(name);
    std::fs::read_to_string(&path).map_err(|e| ReportError::read(path, e))
}
