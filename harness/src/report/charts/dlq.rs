//! DLQ depth over time, split into entries whose work was done (with effect: replaying them
//! repeats it) and entries whose work never happened (without effect), stacked.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{count_label, count_top};
use super::frame::{frame, Glyph, Header, LegendItem};
use super::style::{draw_line, draw_markers, Line, Marker, BLUE, INK, ORANGE};
use super::{time, Chart, DrawResult};
use crate::report::data::ReportData;

/// The DLQ chart (`charts/dlq.*`).
pub struct Dlq;

const DEPTH: Line = Line::solid(INK, 2, Marker::Square);

impl Chart for Dlq {
    fn name(&self) -> &'static str {
        "dlq"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: {} over time, with and without effect",
            data.run.profile,
            data.run.words().given_up.depth
        )
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let s = &data.summary;
        let w = &data.run.words().given_up;
        let peak = data.samples.iter().map(|x| x.dlq).max().unwrap_or(0);
        let subtitle = if peak == 0 {
            "The DLQ stayed empty".to_string()
        } else if s.dlq == 0 {
            format!("The DLQ peaked at {peak} and was empty at the end")
        } else {
            let mut t = format!(
                "{} {}: {} with effect ({}), {} without (work never done)",
                s.dlq, w.at_end, s.dlq_with_effect, w.replay, s.dlq_without_effect
            );
            if peak > s.dlq {
                t.push_str(&format!("; peak {peak}"));
            }
            t
        };
        let mut legend = vec![
            LegendItem::line(w.depth, DEPTH),
            LegendItem {
                label: "with effect (work done)".into(),
                glyph: Glyph::Swatch {
                    fill: BLUE,
                    border: INK,
                    marker: Marker::None,
                    marker_color: INK,
                },
            },
            LegendItem {
                label: "without effect (work never done)".into(),
                glyph: Glyph::Swatch {
                    fill: ORANGE,
                    border: INK,
                    marker: Marker::Cross,
                    marker_color: INK,
                },
            },
        ];
        legend.extend(time::phase_legend(data));
        let header = Header {
            title: self.title(data),
            subtitle,
            legend,
        };
        let body = frame(root, &header)?;
        let axis = time::axis(data);
        let mut chart = time::chart(
            &body,
            data,
            &axis,
            count_top(peak as f64),
            w.axis,
            &count_label,
        )?;
        let with = time::series(data, &axis, |x| x.dlq_with_effect.min(x.dlq) as f64);
        let depth = time::series(data, &axis, |x| x.dlq as f64);
        // Stacked: with effect from 0, without effect from there to the depth.
        chart.draw_series(std::iter::once(Polygon::new(
            band(&[], &with),
            BLUE.mix(0.9).filled(),
        )))?;
        chart.draw_series(std::iter::once(Polygon::new(
            band(&with, &depth),
            ORANGE.mix(0.9).filled(),
        )))?;
        // Crosses mark the band without effect, where it has any height.
        let crosses: Vec<(f64, f64)> = with
            .iter()
            .zip(&depth)
            .filter(|(w, d)| d.1 > w.1)
            .map(|(w, d)| (w.0, (w.1 + d.1) / 2.0))
            .collect();
        let step = (crosses.len() / 12).max(1);
        let crosses: Vec<(f64, f64)> = crosses.into_iter().step_by(step).collect();
        draw_markers(&mut chart, &crosses, (0, 0), Marker::Cross, INK)?;
        draw_line(&mut chart, &depth, &DEPTH, 0.5)?;
        Ok(())
    }
}

/// The polygon between a lower line (`[]` = the axis) and an upper one, at the upper line's
/// instants.
fn band(lower: &[(f64, f64)], upper: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = upper.to_vec();
    if lower.is_empty() {
        points.extend(upper.iter().rev().map(|&(x, _)| (x, 0.0)));
    } else {
        points.extend(lower.iter().rev().copied());
    }
    points
}

#[cfg(test)]
mod tests {
    use super::band;

    #[test]
    fn a_band_goes_along_the_top_and_back_along_the_bottom() {
        let top = [(0.0, 2.0), (1.0, 3.0)];
        assert_eq!(
            band(&[], &top),
            vec![(0.0, 2.0), (1.0, 3.0), (1.0, 0.0), (0.0, 0.0)]
        );
        let low = [(0.0, 1.0), (1.0, 1.0)];
        assert_eq!(
            band(&low, &top),
            vec![(0.0, 2.0), (1.0, 3.0), (1.0, 1.0), (0.0, 1.0)]
        );
    }
}
