//! junit.xml: the budgets as a JUnit test suite named after the profile, one test case per
//! budget, so CI test reporters show which budget failed, with its limit and actual value.

use std::path::{Path, PathBuf};

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::words::{notes, number};
use super::{write_file, Format, Renderer, ReportData, ReportError};

/// The file's name inside the report folder.
pub const FILE: &str = "junit.xml";

/// Writes junit.xml.
pub struct Junit;

impl Renderer for Junit {
    fn format(&self) -> Format {
        Format::Junit
    }

    fn render(&self, data: &ReportData, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        let xml = junit_xml(data).map_err(|e| ReportError::Write {
            path: dir.join(FILE),
            source: std::io::Error::other(e),
        })?;
        Ok(vec![write_file(dir, FILE, |w| {
            w.write_all(xml.as_bytes())
        })?])
    }
}

/// junit.xml's text. No timestamps or durations: the same run gives the same bytes.
pub fn junit_xml(data: &ReportData) -> Result<String, quick_junit::SerializeError> {
    let s = &data.summary;
    let mut suite = TestSuite::new(s.profile.as_str());
    suite.add_properties([
        Property::new("mode", s.mode.as_str()),
        Property::new("seed", s.seed.to_string()),
        Property::new("verdict", s.verdict.as_str()),
        Property::new("command", data.run.command.as_str()),
    ]);
    for b in &s.budgets {
        let line = format!(
            "budget {}: actual {}, limit {}",
            b.name,
            number(b.actual),
            number(b.limit)
        );
        let status = if b.pass {
            TestCaseStatus::success()
        } else {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(format!("{line}: over the limit"))
                .set_type("budget exceeded");
            status
        };
        let mut case = TestCase::new(b.name.as_str(), status);
        case.set_classname(format!("ackbench.{}", s.profile))
            .set_system_out(line);
        suite.add_test_case(case);
    }
    // An interrupted run is an error of its own: the budgets above judged only a part of it.
    if !s.complete {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status
            .set_message(format!(
                "the run is incomplete: {}",
                super::words::incomplete_reason(s)
            ))
            .set_type("run incomplete");
        let mut case = TestCase::new("complete", status);
        case.set_classname(format!("ackbench.{}", s.profile));
        suite.add_test_case(case);
    }
    let notes = notes(s);
    if !notes.is_empty() {
        let text: Vec<String> = notes.iter().map(|n| n.plain()).collect();
        suite.set_system_out(text.join("\n"));
    }
    let mut report = Report::new("ackbench");
    report.add_test_suite(suite);
    report.to_string()
}
