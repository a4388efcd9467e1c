//! `ackbench report DIR`: re-render a report folder from its recorded data, without a rerun.

use super::{exit_code, CommandError, Outcome};
use crate::cli::ReportArgs;
use crate::report;
use crate::verdict::exit;

pub fn rerender(args: ReportArgs) -> Outcome {
    let files = report::rerender(&args.dir, &args.formats)
        .map_err(|e| CommandError::bad_input(e.to_string()))?;
    for f in files {
        crate::stdout::outln!("{}", f.display());
    }
    Ok(exit_code(exit::PASS))
}
