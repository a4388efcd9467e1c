//! A run as the analysis reads it: its record (events only) and, beside it, what a streamed run
//! folded of its history as it ran.

use std::ops::{Deref, DerefMut};

use super::stream::Folded;
use crate::record::RunRecord;

/// What a run left: its record and, for a run that folded its history as it went
/// (`run.record: stream`), the folds (its record then holds no messages, events or calls).
#[derive(Debug, Clone, Default)]
pub struct Recording {
    pub record: RunRecord,
    /// `None`: the record holds the whole history.
    pub folded: Option<Box<Folded>>,
}

impl From<RunRecord> for Recording {
    fn from(record: RunRecord) -> Recording {
        Recording {
            record,
            folded: None,
        }
    }
}

impl Deref for Recording {
    type Target = RunRecord;
    fn deref(&self) -> &RunRecord {
        &self.record
    }
}

impl DerefMut for Recording {
    fn deref_mut(&mut self) -> &mut RunRecord {
        &mut self.record
    }
}

/// A borrowed [`Recording`], or a whole record alone: what [`super::analyse`],
/// [`super::timeseries`] and the reports read.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub record: &'a RunRecord,
    pub folded: Option<&'a Folded>,
}

impl<'a> From<&'a RunRecord> for View<'a> {
    fn from(record: &'a RunRecord) -> View<'a> {
        View {
            record,
            folded: None,
        }
    }
}

impl<'a> From<&'a Recording> for View<'a> {
    fn from(r: &'a Recording) -> View<'a> {
        View {
            record: &r.record,
            folded: r.folded.as_deref(),
        }
    }
}

impl Deref for View<'_> {
    type Target = RunRecord;
    fn deref(&self) -> &RunRecord {
        self.record
    }
}
