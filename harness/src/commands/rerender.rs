//! `ackbench report DIR`: re-render a report folder from its recorded data, without a rerun.

use crate::cli::ReportArgs;
use crate::report;
use crate::verdict::exit;

pub fn rerender(args: ReportArgs) -> i32 {
    match report::rerender(&args.dir, &args.formats) {
        Ok(files) => {
            for f in files {
                crate::outln!("{}", f.display());
            }
            exit::PASS
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::BAD_INPUT
        }
    }
}
