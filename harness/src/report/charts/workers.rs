//! The worker timeline of a small run: one row per worker, one bar per delivery from its
//! hand-out to the end of its handler, filled and marked by what became of it (acked, stale ack,
//! killed, crashed, deferred...). Where a lease ran out under a working handler, the next
//! worker's bar for the same message starts while the first is still running.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{short, Ticks, TimeAxis};
use super::frame::{frame, Glyph, Header, LegendItem};
use super::style::{
    draw_markers, text, Marker, AXIS_SIZE, BLUE, GREY, INK, LABEL_SIZE, ORANGE, PHASE, SKY,
    VERMILLION,
};
use super::{Chart, DrawResult};
use crate::report::data::ReportData;
use crate::report::deliveries::{Delivery, Outcome};

/// The worker timeline (`charts/workers.*`); only runs with a recorded deliveries.csv have it.
pub struct Workers;

/// Pixels per worker row.
const ROW: u32 = 44;
/// The tallest chart drawn.
const MAX_HEIGHT: u32 = 2400;

/// How a bar of each outcome looks: fill, the marker at its end, the marker's and the label's
/// colour. Fills differ in lightness and markers in shape, so greyscale tells them apart.
fn look(o: Outcome) -> (RGBColor, Marker, RGBColor) {
    match o {
        Outcome::Acked => (BLUE, Marker::None, WHITE),
        Outcome::StaleAck => (ORANGE, Marker::Circle, INK),
        Outcome::Rejected => (SKY, Marker::Square, INK),
        Outcome::Killed => (INK, Marker::Cross, WHITE),
        Outcome::Crashed => (VERMILLION, Marker::Triangle, WHITE),
        Outcome::Deferred => (WHITE, Marker::None, INK),
        Outcome::Running => (PHASE, Marker::None, INK),
    }
}

/// A row per worker: those the run started with, and any a scale-out added.
fn rows(data: &ReportData) -> u32 {
    let added = (data.deliveries.iter().flatten())
        .map(|d| d.worker)
        .max()
        .unwrap_or(0);
    data.run.workers.max(added).max(1)
}

impl Chart for Workers {
    fn name(&self) -> &'static str {
        "workers"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: worker timeline, one bar per delivery",
            data.run.profile
        )
    }

    fn size(&self, data: &ReportData) -> (u32, u32) {
        (1000, (260 + ROW * rows(data)).min(MAX_HEIGHT))
    }

    fn applies(&self, data: &ReportData) -> bool {
        data.deliveries.is_some()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let deliveries: &[Delivery] = data.deliveries.as_deref().unwrap_or_default();
        let workers = rows(data);
        let legend = Outcome::ALL
            .iter()
            .filter(|o| deliveries.iter().any(|d| d.outcome == **o))
            .map(|&o| {
                let (fill, m, mark) = look(o);
                LegendItem {
                    label: o.label(data.run.words()),
                    glyph: Glyph::Swatch {
                        fill,
                        border: INK,
                        marker: m,
                        marker_color: mark,
                    },
                }
            })
            .collect();
        let header = Header {
            title: self.title(data),
            subtitle: format!(
                "{} deliveries of {} {} on {} workers; a bar runs from a delivery to the end of its handler",
                deliveries.len(),
                data.summary.messages,
                data.run.words().message.1,
                workers
            ),
            legend,
        };
        let body = frame(root, &header)?;
        let axis = TimeAxis::for_end(data.run.end_s);
        let x = axis.range(data.run.end_s);
        // Worker 1 on top: its row is centred at workers - 0.5.
        let centre = |w: u32| f64::from(workers) - f64::from(w) + 0.5;
        let ticks: Vec<f64> = (1..=workers).map(centre).collect();
        let mut chart = ChartBuilder::on(&body)
            .margin(14)
            .margin_right(40)
            .x_label_area_size(52)
            .y_label_area_size(96)
            .build_cartesian_2d(x.clone(), Ticks::new(0.0..f64::from(workers), ticks))?;
        chart
            .configure_mesh()
            .x_desc(axis.desc())
            .axis_desc_style(text(LABEL_SIZE, &INK))
            .label_style(text(AXIS_SIZE, &INK))
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|y| format!("worker {}", (f64::from(workers) - y + 0.5).round()))
            .bold_line_style(GREY.mix(0.25))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;

        let (plot_width, _) = chart.plotting_area().dim_in_pixel();
        let px_per_x = f64::from(plot_width.max(1)) / (x.end - x.start);
        // A bar is at least 3 pixels wide, so an instant handler still shows.
        let min_width = 3.0 / px_per_x;
        for d in deliveries {
            let (fill, m, mark) = look(d.outcome);
            let y = centre(d.worker);
            let x0 = axis.x(d.start_s);
            let x1 = axis.x(d.end_s).max(x0 + min_width);
            let corners = [(x0, y - 0.32), (x1, y + 0.32)];
            chart.draw_series([
                Rectangle::new(corners, fill.filled()),
                Rectangle::new(corners, INK.stroke_width(1)),
            ])?;
            let width_px = (x1 - x0) * px_per_x;
            if width_px >= 14.0 {
                draw_markers(&mut chart, &[(x1, y)], (-8, 0), m, mark)?;
            } else {
                draw_markers(&mut chart, &[(x1, y + 0.32)], (0, 0), m, INK)?;
            }
            let label = format!("{} #{}", d.key, d.delivery);
            let label_px = label.chars().count() as f64 * 7.5 + 24.0;
            if width_px >= label_px {
                let style = text(13, &mark).pos(Pos::new(HPos::Left, VPos::Center));
                chart.draw_series(std::iter::once(
                    EmptyElement::at((x0, y)) + Text::new(label, (5, 0), style),
                ))?;
            }
        }
        Ok(())
    }
}
