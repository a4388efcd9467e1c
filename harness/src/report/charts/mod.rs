//! The report's charts, one per file, each drawn as PNG and SVG with the embedded font:
//!
//! - [`latency`]: handler latency percentiles against the visibility timeout;
//! - [`done`]: time to done (and end to end) percentiles over the messages;
//! - [`effects`]: effects and duplicate effects over time, with the provider's phases shaded;
//! - [`dlq`]: DLQ depth over time, with and without effect;
//! - [`inflight`]: messages in flight and the age of the oldest message over time;
//! - [`broker`]: the broker's own DLQ depth, backlog and in-flight count beside the same counts
//!   from the events (live runs on a real broker only);
//! - [`groups`]: a FIFO run's head-of-line blocking per message group (runs with groups only);
//! - [`fleet`]: the replica count over time above the oldest message's age (autoscaled runs
//!   only);
//! - [`workers`]: one row per worker, one bar per delivery (small runs only).
//!
//! Every chart implements [`Chart`] and is drawn from a report folder's recorded data
//! ([`ReportData`]) only, from the time series (O(samples)) or the histogram (O(buckets)), never
//! from the run's events.

pub mod axis;
pub mod broker;
pub mod dlq;
pub mod done;
pub mod effects;
pub mod fleet;
pub mod font;
pub mod frame;
pub mod groups;
pub mod inflight;
pub mod latency;
pub mod style;
pub mod time;
pub mod workers;

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::data::ReportData;
use super::{no_follow, ReportError};

/// The result of a drawing step on backend `DB`.
pub type DrawResult<T, DB> = Result<T, DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// The folder of the chart files inside the report folder.
pub const DIR: &str = "charts";

/// One chart of the report.
pub trait Chart {
    /// The file stem: `charts/<name>.png` and `charts/<name>.svg`.
    fn name(&self) -> &'static str;
    /// The title drawn on top (it names the profile).
    fn title(&self, data: &ReportData) -> String;
    /// Width and height in pixels.
    fn size(&self, _data: &ReportData) -> (u32, u32) {
        (1000, 600)
    }
    /// Whether this run has the chart (the worker timeline only exists for small runs).
    fn applies(&self, _data: &ReportData) -> bool {
        true
    }
    /// Draws the whole chart, frame included, on `root`.
    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB>;
}

/// Something done with each chart in turn ([`for_each`]).
pub trait ChartVisitor {
    fn visit<C: Chart>(&mut self, chart: &C) -> Result<(), ReportError>;
}

/// Visits every chart, in the order the report shows them.
pub fn for_each<V: ChartVisitor>(v: &mut V) -> Result<(), ReportError> {
    v.visit(&latency::Latency)?;
    v.visit(&done::Done)?;
    v.visit(&effects::Effects)?;
    v.visit(&dlq::Dlq)?;
    v.visit(&inflight::InFlight)?;
    v.visit(&broker::Broker)?;
    v.visit(&groups::Groups)?;
    v.visit(&fleet::Fleet)?;
    v.visit(&workers::Workers)
}

/// One chart drawn as SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedSvg {
    pub name: &'static str,
    pub title: String,
    pub svg: String,
}

/// The path of chart `name` in `format` (`png`, `svg`) inside report folder `dir`.
pub fn path(dir: &Path, name: &str, ext: &str) -> PathBuf {
    dir.join(DIR).join(format!("{name}.{ext}"))
}

/// Draws `chart` as an SVG document.
pub fn svg<C: Chart>(chart: &C, data: &ReportData) -> Result<String, String> {
    font::register();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, chart.size(data)).into_drawing_area();
        chart.draw(data, &root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// Draws `chart` as a PNG file at `path`.
pub fn png<C: Chart>(chart: &C, data: &ReportData, path: &Path) -> Result<(), String> {
    font::register();
    let root = BitMapBackend::new(path, chart.size(data)).into_drawing_area();
    chart.draw(data, &root).map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

/// Every chart that applies, as SVG.
pub fn render_svgs(data: &ReportData) -> Result<Vec<RenderedSvg>, ReportError> {
    struct Svgs<'a> {
        data: &'a ReportData,
        out: Vec<RenderedSvg>,
    }
    impl ChartVisitor for Svgs<'_> {
        fn visit<C: Chart>(&mut self, chart: &C) -> Result<(), ReportError> {
            if !chart.applies(self.data) {
                return Ok(());
            }
            let svg = svg(chart, self.data).map_err(|message| ReportError::Chart {
                path: PathBuf::from(DIR).join(format!("{}.svg", chart.name())),
                message,
            })?;
            self.out.push(RenderedSvg {
                name: chart.name(),
                title: chart.title(self.data),
                svg,
            });
            Ok(())
        }
    }
    let mut v = Svgs {
        data,
        out: Vec::new(),
    };
    for_each(&mut v)?;
    Ok(v.out)
}

/// Draws every chart that applies as PNG into `dir/charts/`; returns the files written.
pub fn write_pngs(data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    struct Pngs<'a> {
        data: &'a ReportData,
        dir: &'a Path,
        out: Vec<PathBuf>,
    }
    impl ChartVisitor for Pngs<'_> {
        fn visit<C: Chart>(&mut self, chart: &C) -> Result<(), ReportError> {
            if !chart.applies(self.data) {
                return Ok(());
            }
            let path = path(self.dir, chart.name(), "png");
            no_follow::refuse_link(&path).map_err(|e| ReportError::write(path.clone(), e))?;
            png(chart, self.data, &path).map_err(|message| ReportError::Chart {
                path: path.clone(),
                message,
            })?;
            self.out.push(path);
            Ok(())
        }
    }
    let charts = dir.join(DIR);
    no_follow::create_dir(&charts).map_err(|e| ReportError::folder(charts, e))?;
    let mut v = Pngs {
        data,
        dir,
        out: Vec::new(),
    };
    for_each(&mut v)?;
    Ok(v.out)
}
