//! What the charts over time share: a time axis from the start to the end of the run, a count
//! axis, and the provider's phases shaded behind the series.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{duration, TimeAxis};
use super::frame::LegendItem;
use super::style::{text, XyChart, AXIS_SIZE, GREY, INK, LABEL_SIZE, PHASE};
use super::DrawResult;
use crate::metrics::Sample;
use crate::report::data::ReportData;

/// The run's time axis.
pub fn axis(data: &ReportData) -> TimeAxis {
    TimeAxis::for_end(data.run.end_s)
}

/// A sample's instant in seconds.
pub fn at(s: &Sample) -> f64 {
    s.t as f64 / 1e9
}

/// One value of every sample, against time in `axis`' unit: O(samples).
pub fn series(
    data: &ReportData,
    axis: &TimeAxis,
    value: impl Fn(&Sample) -> f64,
) -> Vec<(f64, f64)> {
    data.samples
        .iter()
        .map(|s| (axis.x(at(s)), value(s)))
        .collect()
}

/// A chart over the run's time on `area`, y from 0 to `y_top` (labelled by `y_label`), with its
/// grid drawn and the provider's phases shaded.
pub fn chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    data: &ReportData,
    axis: &TimeAxis,
    y_top: f64,
    y_desc: &str,
    y_label: &dyn Fn(&f64) -> String,
) -> DrawResult<XyChart<'a, DB>, DB> {
    let x = axis.range(data.run.end_s);
    let mut chart = ChartBuilder::on(area)
        .margin(14)
        .margin_right(40)
        .x_label_area_size(52)
        .y_label_area_size(84)
        .build_cartesian_2d(x.clone(), 0.0..y_top)?;
    chart
        .configure_mesh()
        .x_desc(axis.desc())
        .y_desc(y_desc)
        .axis_desc_style(text(LABEL_SIZE, &INK))
        .label_style(text(AXIS_SIZE, &INK))
        .y_label_formatter(y_label)
        .x_label_formatter(&|v| super::axis::short(*v))
        .bold_line_style(GREY.mix(0.25))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    shade_phases(&mut chart, data, axis, x.end, y_top)?;
    Ok(chart)
}

/// A panel of ages up to `span_s` (with headroom) over the run's time on `area`, in the
/// age's own unit (returned), labelled with the age of the oldest `one` (message, record...).
pub fn age_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    data: &ReportData,
    axis: &TimeAxis,
    span_s: f64,
    one: &str,
) -> DrawResult<(XyChart<'a, DB>, TimeAxis), DB> {
    let age_axis = TimeAxis::for_end(span_s);
    let age_top = age_axis.x(span_s * 1.15).max(age_axis.x(1.0));
    let desc = format!("age of the oldest {one} ({})", age_axis.unit);
    let ages = chart(area, data, axis, age_top, &desc, &|v| {
        super::axis::short(*v)
    })?;
    Ok((ages, age_axis))
}

/// Shades each provider phase (clipped to the run) and writes its label at its top.
fn shade_phases<DB: DrawingBackend>(
    chart: &mut XyChart<'_, DB>,
    data: &ReportData,
    axis: &TimeAxis,
    x_end: f64,
    y_top: f64,
) -> DrawResult<(), DB> {
    for (i, p) in data.run.phases.iter().enumerate() {
        let from = axis.x(p.from_s).min(x_end);
        let to = axis.x(p.to_s).min(x_end);
        if to <= from {
            continue;
        }
        chart.draw_series(std::iter::once(Rectangle::new(
            [(from, 0.0), (to, y_top)],
            PHASE.mix(0.75).filled(),
        )))?;
        let label = format!(
            "provider phase {}: {}, {} to {}",
            i + 1,
            p.label,
            duration(p.from_s),
            duration(p.to_s)
        );
        let style = text(AXIS_SIZE, &INK).pos(Pos::new(HPos::Left, VPos::Top));
        chart.draw_series(std::iter::once(
            EmptyElement::at((from, y_top)) + Text::new(label, (6, 6), style),
        ))?;
    }
    Ok(())
}

/// The legend entry of the shaded phases, if the run had any.
pub fn phase_legend(data: &ReportData) -> Option<LegendItem> {
    (!data.run.phases.is_empty())
        .then(|| LegendItem::swatch("provider phase (shaded)", PHASE, GREY))
}
