//! The progress bar of a long run: virtual time against the run's length, and what has happened
//! so far (messages published, effects, duplicate effects, DLQ depth).
//!
//! It shows only on a terminal, never with `--quiet`, and only once the run has taken more than
//! a second of wall time: a sim run that finishes in milliseconds prints nothing extra. Reading
//! the wall clock here never touches the run: the sim's ordering and results do not depend on it.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::profile::format_duration;

/// Where a run is, as the executor reports it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    /// Virtual seconds since the start of the run.
    pub virtual_now_s: f64,
    pub published: u64,
    pub effects: u64,
    pub duplicate_effects: u64,
    /// Messages in the DLQ now.
    pub dlq: u64,
}

/// The progress bar of one run (see the module documentation for when it shows).
pub struct RunProgress {
    length_s: f64,
    messages: Option<u64>,
    started: Instant,
    show_after: Duration,
    /// `None`: never shown.
    target: Option<fn() -> ProgressDrawTarget>,
    bar: OnceLock<ProgressBar>,
}

/// Wall time a run takes before its bar appears.
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

impl RunProgress {
    /// The bar of a run `length_s` virtual seconds long at most (`run.duration + run.drain`)
    /// publishing `messages` (if known). It draws on stdout when stdout is a terminal and the
    /// run is not `quiet`.
    pub fn new(length_s: f64, messages: Option<u64>, quiet: bool) -> Self {
        let shown = !quiet && std::io::stdout().is_terminal();
        Self::with_target(
            length_s,
            messages,
            shown.then_some(ProgressDrawTarget::stdout as fn() -> ProgressDrawTarget),
            SHOW_AFTER,
        )
    }

    /// A bar that never shows.
    #[cfg(test)]
    pub fn hidden() -> Self {
        Self::with_target(0.0, None, None, SHOW_AFTER)
    }

    /// A bar drawing on `target` (if any) once `show_after` of wall time has passed.
    pub fn with_target(
        length_s: f64,
        messages: Option<u64>,
        target: Option<fn() -> ProgressDrawTarget>,
        show_after: Duration,
    ) -> Self {
        RunProgress {
            length_s: if length_s.is_finite() {
                length_s.max(0.0)
            } else {
                0.0
            },
            messages,
            started: Instant::now(),
            show_after,
            target,
            bar: OnceLock::new(),
        }
    }

    /// Reports where the run is. Cheap when the bar is not shown; indicatif limits how often it
    /// redraws.
    pub fn update(&self, p: &Progress) {
        let Some(target) = self.target else {
            return;
        };
        if self.bar.get().is_none() && self.started.elapsed() <= self.show_after {
            return;
        }
        let bar = self.bar.get_or_init(|| {
            let bar = ProgressBar::with_draw_target(Some(millis(self.length_s)), target());
            if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed}] {bar:30} {msg}")
            {
                bar.set_style(style);
            }
            bar
        });
        bar.set_position(millis(p.virtual_now_s).min(millis(self.length_s)));
        bar.set_message(self.message(p));
    }

    /// Whether the bar has appeared.
    #[cfg(test)]
    pub fn is_shown(&self) -> bool {
        self.bar.get().is_some()
    }

    /// The bar's message for `p`.
    fn message(&self, p: &Progress) -> Cow<'static, str> {
        let published = match self.messages {
            Some(n) => format!("{}/{n}", p.published),
            None => p.published.to_string(),
        };
        format!(
            "virtual {} / {} · {published} published · {} effects ({} duplicate) · DLQ {}",
            whole_seconds(p.virtual_now_s),
            whole_seconds(self.length_s),
            p.effects,
            p.duplicate_effects,
            p.dlq
        )
        .into()
    }

    /// Clears the bar (if it showed): the summary table prints on a clean screen.
    pub fn finish(&self) {
        if let Some(bar) = self.bar.get() {
            bar.finish_and_clear();
        }
    }
}

fn millis(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        (s * 1000.0) as u64
    } else {
        0
    }
}

fn whole_seconds(s: f64) -> String {
    format_duration(Duration::from_secs(millis(s) / 1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: f64) -> Progress {
        Progress {
            virtual_now_s: t,
            published: 51,
            effects: 153,
            duplicate_effects: 102,
            dlq: 17,
        }
    }

    #[test]
    fn nothing_shows_before_the_threshold_or_without_a_target() {
        let slow = RunProgress::with_target(
            7200.0,
            Some(108),
            Some(ProgressDrawTarget::hidden),
            Duration::from_secs(3600),
        );
        slow.update(&p(10.0));
        assert!(!slow.is_shown());
        let never = RunProgress::hidden();
        never.update(&p(10.0));
        assert!(!never.is_shown());
        never.finish();
    }

    #[test]
    fn past_the_threshold_the_bar_follows_virtual_time() {
        let bar = RunProgress::with_target(
            7200.0,
            Some(108),
            Some(ProgressDrawTarget::hidden),
            Duration::ZERO,
        );
        std::thread::sleep(Duration::from_millis(2));
        bar.update(&p(2530.0));
        assert!(bar.is_shown());
        let inner = bar.bar.get().cloned();
        let inner = inner.unwrap_or_else(ProgressBar::hidden);
        assert_eq!(inner.length(), Some(7_200_000));
        assert_eq!(inner.position(), 2_530_000);
        assert_eq!(
            inner.message(),
            "virtual 42m10s / 2h · 51/108 published · 153 effects (102 duplicate) · DLQ 17"
        );
        // Past the end (a drain that ran to its limit) stays at the end.
        bar.update(&p(9000.0));
        assert_eq!(inner.position(), 7_200_000);
        bar.finish();
        assert!(inner.is_finished());
    }

    #[test]
    fn an_unknown_message_count_shows_the_published_count_alone() {
        let bar = RunProgress::with_target(60.0, None, None, Duration::ZERO);
        assert!(bar.message(&p(1.0)).contains("· 51 published ·"));
    }
}
