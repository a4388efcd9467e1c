//! Effects and duplicate effects over time, cumulative, against the messages published, with the
//! provider's phases shaded: when the duplicates started, and whether they stopped.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{count_label, count_top};
use super::frame::{frame, Header, LegendItem};
use super::style::{draw_line, Line, Marker, BLUE, GREY, VERMILLION};
use super::{time, Chart, DrawResult};
use crate::report::data::ReportData;

/// The effects chart (`charts/effects.*`).
pub struct Effects;

const PUBLISHED: Line = Line::dashed(GREY, 2, Marker::None);
const EFFECTS: Line = Line::solid(BLUE, 3, Marker::Circle);
const DUPLICATES: Line = Line::dashed(VERMILLION, 3, Marker::Triangle);

impl Chart for Effects {
    fn name(&self) -> &'static str {
        "effects"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: effects and duplicate effects over time",
            data.run.profile
        )
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let s = &data.summary;
        let (one, many) = data.run.words().message;
        let mut legend = vec![
            LegendItem::line(format!("{many} published"), PUBLISHED),
            LegendItem::line("effects", EFFECTS),
            LegendItem::line("duplicate effects", DUPLICATES),
        ];
        legend.extend(time::phase_legend(data));
        let header = Header {
            title: self.title(data),
            subtitle: format!(
                "{} effects for {} {many}: {} duplicate ({} per {one}), {} lost",
                s.effects,
                s.messages,
                s.duplicate_effects,
                super::axis::short(s.duplicate_rate),
                s.lost
            ),
            legend,
        };
        let body = frame(root, &header)?;
        let axis = time::axis(data);
        let top = data
            .samples
            .iter()
            .map(|x| x.published.max(x.effects))
            .max()
            .unwrap_or(0);
        let mut chart = time::chart(
            &body,
            data,
            &axis,
            count_top(top as f64),
            &format!("{many}, effects (cumulative)"),
            &count_label,
        )?;
        let published = time::series(data, &axis, |x| x.published as f64);
        let effects = time::series(data, &axis, |x| x.effects as f64);
        let duplicates = time::series(data, &axis, |x| x.duplicate_effects as f64);
        draw_line(&mut chart, &published, &PUBLISHED, 0.0)?;
        draw_line(&mut chart, &effects, &EFFECTS, 0.3)?;
        draw_line(&mut chart, &duplicates, &DUPLICATES, 0.6)?;
        Ok(())
    }
}
