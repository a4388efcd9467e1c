//! A FIFO run's message groups: one bar per group, its head-of-line blocking time (how long one
//! of its messages was in flight while another waited behind it), the most blocked on top. Only
//! for a run with `workload.groups`; drawn from summary.json's `message_groups`.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axis::{duration, short};
use super::frame::{frame, Header, LegendItem};
use super::style::{text, AXIS_SIZE, BLUE, GREY, INK, LABEL_SIZE};
use super::{Chart, DrawResult};
use crate::metrics::groups::GroupSummary;
use crate::report::data::ReportData;
use crate::report::groups::SHOWN;

/// The message-group chart (`charts/groups.*`).
pub struct Groups;

/// The groups drawn, the most blocked first (group order among equals), at most [`SHOWN`].
fn shown(data: &ReportData) -> Vec<&GroupSummary> {
    let mut g: Vec<&GroupSummary> = data.summary.message_groups.iter().collect();
    g.sort_by(|a, b| b.blocked_s.total_cmp(&a.blocked_s));
    g.truncate(SHOWN);
    g
}

impl Chart for Groups {
    fn name(&self) -> &'static str {
        "groups"
    }

    fn title(&self, data: &ReportData) -> String {
        format!(
            "{}: head-of-line blocking per message group",
            data.run.profile
        )
    }

    fn size(&self, data: &ReportData) -> (u32, u32) {
        let rows = shown(data).len() as u32;
        (1000, (220 + 34 * rows).max(360))
    }

    fn applies(&self, data: &ReportData) -> bool {
        !data.summary.message_groups.is_empty()
    }

    fn draw<DB: DrawingBackend>(
        &self,
        data: &ReportData,
        root: &DrawingArea<DB, Shift>,
    ) -> DrawResult<(), DB> {
        let groups = shown(data);
        let all = data.summary.message_groups.len();
        let worst = groups.first().map_or(0.0, |g| g.blocked_s);
        let blocked = data
            .summary
            .message_groups
            .iter()
            .filter(|g| g.blocked_s > 0.0)
            .count();
        let subtitle = if worst == 0.0 {
            format!("No group of {all} was ever blocked behind its head")
        } else {
            let mut t = format!(
                "{blocked} of {all} groups blocked at some point; the most, {}, for {} (backlog up to {})",
                groups[0].group,
                duration(worst),
                groups[0].max_backlog
            );
            if all > groups.len() {
                t.push_str(&format!("; the {} most blocked shown", groups.len()));
            }
            t
        };
        let header = Header {
            title: self.title(data),
            subtitle,
            legend: vec![LegendItem::swatch(
                "time a message waited behind its group's head in flight",
                BLUE,
                INK,
            )],
        };
        let body = frame(root, &header)?;
        let n = groups.len() as f64;
        let top = (worst * 1.12).max(1.0);
        let names: Vec<String> = groups.iter().map(|g| g.group.clone()).collect();
        let mut chart = ChartBuilder::on(&body)
            .margin(14)
            .margin_right(40)
            .x_label_area_size(52)
            .y_label_area_size(110)
            .build_cartesian_2d(0.0..top, 0.0..n)?;
        chart
            .configure_mesh()
            .x_desc("head-of-line blocking (s)")
            .axis_desc_style(text(LABEL_SIZE, &INK))
            .label_style(text(AXIS_SIZE, &INK))
            .x_label_formatter(&|v| short(*v))
            .y_labels(groups.len().max(1) * 2 + 1)
            .y_label_formatter(&|v| {
                // Labels at the middle of each bar, row 0 (the most blocked) at the top.
                let row = n - v - 0.5;
                let i = row.round();
                if (row - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
                    names[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .bold_line_style(GREY.mix(0.25))
            .light_line_style(WHITE.mix(0.0))
            .disable_y_mesh()
            .draw()?;
        chart.draw_series(groups.iter().enumerate().map(|(i, g)| {
            let y = n - i as f64;
            Rectangle::new([(0.0, y - 0.8), (g.blocked_s, y - 0.2)], BLUE.filled())
        }))?;
        Ok(())
    }
}
