//! Charts (PNG and SVG, drawn with plotters and the embedded font): lines of a metric against a
//! parameter, and two metrics on two y axes with one x value marked.

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::report::charts::font::{self, FAMILY};

/// Size of every chart, in pixels.
const SIZE: (u32, u32) = (960, 600);

/// One line: a label and its (x, y) points, in x order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (e.g. a prediction beside what was simulated).
    pub dashed: bool,
}

/// The x axis: numbers, or named categories at 0, 1, 2, ...
#[derive(Debug, Clone, PartialEq)]
pub enum XAxis {
    Numeric { label: String },
    Categories { label: String, names: Vec<String> },
}

/// A chart of lines on one y axis.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x: XAxis,
    pub y_label: String,
    pub series: Vec<Series>,
}

/// A chart of lines on two y axes sharing one numeric x axis, with an optional x marked.
#[derive(Debug, Clone, PartialEq)]
pub struct DualChart {
    pub title: String,
    pub x_label: String,
    pub left_label: String,
    pub right_label: String,
    pub left: Vec<Series>,
    pub right: Vec<Series>,
    pub mark: Option<(f64, String)>,
}

/// Writes `<dir>/<stem>.png` and `<dir>/<stem>.svg`; returns their paths.
pub fn write_line_chart(dir: &Path, stem: &str, chart: &LineChart) -> Result<Vec<PathBuf>, String> {
    write_both(dir, stem, chart)
}

/// Writes `<dir>/<stem>.png` and `<dir>/<stem>.svg`; returns their paths.
pub fn write_dual_chart(dir: &Path, stem: &str, chart: &DualChart) -> Result<Vec<PathBuf>, String> {
    write_both(dir, stem, chart)
}

type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// A chart that draws itself on any plotters backend.
trait Draw {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB>;
}

impl Draw for LineChart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        draw_lines(root, self)
    }
}

impl Draw for DualChart {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn<DB> {
        draw_dual(root, self)
    }
}

fn write_both(dir: &Path, stem: &str, chart: &impl Draw) -> Result<Vec<PathBuf>, String> {
    if !font::register() {
        return Err("the embedded chart font could not be loaded".into());
    }
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        chart
            .draw(&root)
            .map_err(|e| format!("{}: {e}", png.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", png.display()))?;
    }
    {
        let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
        chart
            .draw(&root)
            .map_err(|e| format!("{}: {e}", svg.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", svg.display()))?;
    }
    Ok(vec![png, svg])
}

/// A colour per line, distinct for the first ten.
fn colour(i: usize) -> RGBColor {
    const C: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    C[i % C.len()]
}

/// A range around `values` with a little room, never empty.
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> Range<f64> {
    let (mut lo, mut hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v), h.max(v))
        });
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-12 {
        hi = lo + if lo.abs() > 0.0 { lo.abs() * 0.5 } else { 1.0 };
    }
    let pad = (hi - lo) * 0.06;
    (if from_zero && lo >= 0.0 { lo } else { lo - pad })..(hi + pad)
}

fn short(x: f64) -> String {
    super::outcome::number((x * 1000.0).round() / 1000.0)
}

fn draw_lines<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &LineChart) -> Drawn<DB> {
    root.fill(&WHITE)?;
    let xs = c.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x_range, x_label, names) = match &c.x {
        XAxis::Numeric { label } => (range(xs, false), label.clone(), None),
        XAxis::Categories { label, names } => (
            -0.5..(names.len() as f64 - 0.5).max(0.5),
            label.clone(),
            Some(names.clone()),
        ),
    };
    let y_range = range(
        c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );
    let mut chart = ChartBuilder::on(root)
        .caption(&c.title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(x_range, y_range)?;
    let category = |x: &f64| {
        let i = x.round();
        match &names {
            Some(n) if (x - i).abs() < 1e-6 && i >= 0.0 => {
                n.get(i as usize).cloned().unwrap_or_default()
            }
            Some(_) => String::new(),
            None => short(*x),
        }
    };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_label)
        .y_desc(c.y_label.as_str())
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .x_label_formatter(&category)
        .y_label_formatter(&|y| short(*y));
    if let Some(n) = &names {
        mesh.x_labels(n.len().max(2) * 2 + 1);
    }
    mesh.draw()?;
    for (i, s) in c.series.iter().enumerate() {
        let col = colour(i);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                col.stroke_width(2),
            ))?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], col.stroke_width(2)));
        chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 4, col.filled())))?;
    }
    if c.series.len() > 1 || c.series.first().is_some_and(|s| !s.label.is_empty()) {
        chart
            .configure_series_labels()
            .label_font((FAMILY, 15))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    Ok(())
}

fn draw_dual<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, c: &DualChart) -> Drawn<DB> {
    root.fill(&WHITE)?;
    let all = c.left.iter().chain(&c.right);
    let x_range = range(
        all.flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(c.mark.iter().map(|m| m.0)),
        false,
    );
    let left_range = range(
        c.left.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );
    let right_range = range(
        c.right.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        true,
    );
    let mut chart = ChartBuilder::on(root)
        .caption(&c.title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .right_y_label_area_size(80)
        .build_cartesian_2d(x_range.clone(), left_range.clone())?
        .set_secondary_coord(x_range, right_range.clone());
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_desc(c.left_label.as_str())
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .x_label_formatter(&|x| short(*x))
        .y_label_formatter(&|y| short(*y))
        .draw()?;
    chart
        .configure_secondary_axes()
        .y_desc(c.right_label.as_str())
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .y_label_formatter(&|y| short(*y))
        .draw()?;
    let mut i = 0;
    for s in &c.left {
        let col = colour(i);
        i += 1;
        let legend = move |(x, y): (i32, i32)| {
            PathElement::new(vec![(x, y), (x + 22, y)], col.stroke_width(2))
        };
        if s.dashed {
            let line = DashedLineSeries::new(s.points.iter().copied(), 8, 5, col.stroke_width(2));
            chart
                .draw_series(line)?
                .label(s.label.as_str())
                .legend(legend);
        } else {
            let line = LineSeries::new(s.points.iter().copied(), col.stroke_width(3));
            chart
                .draw_series(line)?
                .label(s.label.as_str())
                .legend(legend);
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 5, col.filled())))?;
        }
    }
    for s in &c.right {
        let col = colour(i);
        i += 1;
        chart
            .draw_secondary_series(LineSeries::new(
                s.points.iter().copied(),
                col.stroke_width(2),
            ))?
            .label(s.label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], col.stroke_width(2)));
        chart.draw_secondary_series(
            s.points
                .iter()
                .map(|&p| TriangleMarker::new(p, 5, col.filled())),
        )?;
    }
    if let Some((x, label)) = &c.mark {
        let grey = RGBColor(80, 80, 80);
        chart
            .draw_series(DashedLineSeries::new(
                [(*x, left_range.start), (*x, left_range.end)],
                6,
                4,
                grey.stroke_width(2),
            ))?
            .label(label.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], grey.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(label: &str, pts: &[(f64, f64)]) -> Series {
        Series {
            label: label.into(),
            points: pts.to_vec(),
            dashed: false,
        }
    }

    #[test]
    fn both_charts_write_png_and_svg() -> Result<(), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let lines = LineChart {
            title: "dlq against the lease".into(),
            x: XAxis::Categories {
                label: "target".into(),
                names: vec!["a".into(), "b".into()],
            },
            y_label: "dlq".into(),
            series: vec![series("", &[(0.0, 108.0), (1.0, 0.0)])],
        };
        let files = write_line_chart(dir.path(), "lines", &lines)?;
        let dual = DualChart {
            title: "lease".into(),
            x_label: "lease (s)".into(),
            left_label: "duplicate rate".into(),
            right_label: "recovery (s)".into(),
            left: vec![series("observed", &[(30.0, 2.0), (60.0, 0.0)])],
            right: vec![series("recovery", &[(30.0, 30.0), (60.0, 60.0)])],
            mark: Some((60.0, "recommended".into())),
        };
        let more = write_dual_chart(dir.path(), "dual", &dual)?;
        for f in files.iter().chain(&more) {
            let len = std::fs::metadata(f).map_err(|e| e.to_string())?.len();
            assert!(len > 1000, "{} has {len} bytes", f.display());
        }
        let svg =
            std::fs::read_to_string(dir.path().join("dual.svg")).map_err(|e| e.to_string())?;
        assert!(svg.contains("recommended"));
        Ok(())
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(range(std::iter::empty(), true), 0.0..1.0);
        let r = range([5.0, 5.0].into_iter(), true);
        assert!(r.start <= 0.0 && r.end > 5.0);
    }
}
