//! How series look: colours that differ in lightness as well as hue, with dashes and markers, so
//! every chart still reads printed in greyscale.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::CoordTranslate;
use plotters::prelude::*;

use super::font::FAMILY;
use super::DrawResult;

/// Dark blue (lightness ~32%).
pub const BLUE: RGBColor = RGBColor(0x1f, 0x4e, 0x79);
/// Orange (lightness ~72%).
pub const ORANGE: RGBColor = RGBColor(0xe6, 0x9f, 0x00);
/// Vermillion (lightness ~55%).
pub const VERMILLION: RGBColor = RGBColor(0xc8, 0x4b, 0x00);
/// Sky blue (lightness ~70%).
pub const SKY: RGBColor = RGBColor(0x56, 0xb4, 0xe9);
/// Mid grey.
pub const GREY: RGBColor = RGBColor(0x80, 0x80, 0x80);
/// Very light grey: shaded provider phases.
pub const PHASE: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
/// Near black.
pub const INK: RGBColor = RGBColor(0x1a, 0x1a, 0x1a);

/// Font sizes (pixels).
pub const TITLE_SIZE: u32 = 24;
pub const SUBTITLE_SIZE: u32 = 17;
pub const LABEL_SIZE: u32 = 16;
pub const AXIS_SIZE: u32 = 15;

/// A text style of the charts' font.
pub fn text(size: u32, color: &RGBColor) -> TextStyle<'static> {
    (FAMILY, size).into_font().color(color)
}

/// A point marker, drawn along a line every so often and in its legend glyph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    None,
    Circle,
    Square,
    Triangle,
    Cross,
}

/// How one series is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub color: RGBColor,
    pub width: u32,
    /// Dash and gap lengths (pixels); `None` = solid.
    pub dash: Option<(u32, u32)>,
    pub marker: Marker,
}

impl Line {
    pub const fn solid(color: RGBColor, width: u32, marker: Marker) -> Self {
        Line {
            color,
            width,
            dash: None,
            marker,
        }
    }

    pub const fn dashed(color: RGBColor, width: u32, marker: Marker) -> Self {
        Line {
            color,
            width,
            dash: Some((10, 6)),
            marker,
        }
    }

    pub fn stroke(&self) -> ShapeStyle {
        ShapeStyle {
            color: self.color.to_rgba(),
            filled: false,
            stroke_width: self.width,
        }
    }
}

fn marker_styles(color: RGBColor) -> (ShapeStyle, ShapeStyle, ShapeStyle) {
    let filled = color.filled();
    let hollow = color.stroke_width(2);
    let cross = color.stroke_width(3);
    (filled, hollow, cross)
}

/// Draws marker `m` at each of `points` of a chart, shifted by `offset` pixels.
pub fn draw_markers<DB: DrawingBackend, CT: CoordTranslate>(
    chart: &mut ChartContext<'_, DB, CT>,
    points: &[CT::From],
    offset: (i32, i32),
    m: Marker,
    color: RGBColor,
) -> DrawResult<(), DB>
where
    CT::From: Clone + 'static,
{
    let (filled, hollow, cross) = marker_styles(color);
    let (dx, dy) = offset;
    let at = |p: &CT::From| EmptyElement::at(p.clone());
    match m {
        Marker::None => return Ok(()),
        Marker::Circle => chart.draw_series(
            points
                .iter()
                .map(|p| at(p) + Circle::new((dx, dy), 5, filled)),
        )?,
        Marker::Square => chart.draw_series(
            points
                .iter()
                .map(|p| at(p) + Rectangle::new([(dx - 5, dy - 5), (dx + 5, dy + 5)], hollow)),
        )?,
        Marker::Triangle => chart.draw_series(
            points
                .iter()
                .map(|p| at(p) + TriangleMarker::new((dx, dy), 7, filled)),
        )?,
        Marker::Cross => chart.draw_series(
            points
                .iter()
                .map(|p| at(p) + Cross::new((dx, dy), 5, cross)),
        )?,
    };
    Ok(())
}

/// Draws marker `m` at pixel `at` of `area`.
pub fn draw_marker_px<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    at: (i32, i32),
    m: Marker,
    color: RGBColor,
) -> DrawResult<(), DB> {
    let (filled, hollow, cross) = marker_styles(color);
    let (x, y) = at;
    match m {
        Marker::None => Ok(()),
        Marker::Circle => area.draw(&Circle::new(at, 5, filled)),
        Marker::Square => area.draw(&Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], hollow)),
        Marker::Triangle => area.draw(&TriangleMarker::new(at, 7, filled)),
        Marker::Cross => area.draw(&Cross::new(at, 5, cross)),
    }
}

/// A chart with two numeric axes.
pub type XyChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Draws `points` as one line with its dashes, and its marker at `count` evenly spaced points
/// (shifted by `phase` of a spacing, so markers of different series do not sit on each other).
pub fn draw_line<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'_, DB, CT>,
    points: &[(f64, f64)],
    line: &Line,
    phase: f64,
) -> DrawResult<(), DB> {
    if points.is_empty() {
        return Ok(());
    }
    match line.dash {
        None => {
            chart.draw_series(LineSeries::new(points.iter().copied(), line.stroke()))?;
        }
        Some((dash, gap)) => {
            chart.draw_series(DashedLineSeries::new(
                points.iter().copied(),
                dash,
                gap,
                line.stroke(),
            ))?;
        }
    }
    if line.marker != Marker::None {
        const COUNT: usize = 10;
        let n = points.len();
        let picks: Vec<(f64, f64)> = (0..COUNT.min(n))
            .map(|j| {
                let at = (j as f64 + phase.clamp(0.0, 0.99)) / COUNT.min(n) as f64;
                points[((at * n as f64) as usize).min(n - 1)]
            })
            .collect();
        draw_markers(chart, &picks, (0, 0), line.marker, line.color)?;
    }
    Ok(())
}

/// The glyph of a line in a legend: a short stroke with its dash and marker, `width` pixels wide,
/// vertically centred on `y`.
pub fn draw_line_glyph<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    width: i32,
    line: &Line,
) -> DrawResult<(), DB> {
    match line.dash {
        // A marker alone.
        _ if line.width == 0 => {}
        None => area.draw(&PathElement::new(
            vec![(x, y), (x + width, y)],
            line.stroke(),
        ))?,
        Some(_) => {
            // Two dashes and a gap, whatever the line's own lengths.
            let third = width / 3;
            area.draw(&PathElement::new(
                vec![(x, y), (x + third, y)],
                line.stroke(),
            ))?;
            area.draw(&PathElement::new(
                vec![(x + 2 * third, y), (x + width, y)],
                line.stroke(),
            ))?;
        }
    }
    draw_marker_px(area, (x + width / 2, y), line.marker, line.color)
}

/// A filled swatch for a legend: `fill` with a `border`.
pub fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    (x, y): (i32, i32),
    width: i32,
    fill: &RGBColor,
    border: &RGBColor,
) -> DrawResult<(), DB> {
    area.draw(&Rectangle::new(
        [(x, y - 7), (x + width, y + 7)],
        fill.filled(),
    ))?;
    area.draw(&Rectangle::new(
        [(x, y - 7), (x + width, y + 7)],
        border.stroke_width(1),
    ))?;
    Ok(())
}
