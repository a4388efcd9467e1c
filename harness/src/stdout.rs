//! Printing to standard output that ends quietly when nobody reads any more.
//!
//! `println!` panics when stdout is a closed pipe (`ackbench run ... | head -1`), which would
//! replace the verdict's exit code with a panic's 101. Everything the subcommands print goes
//! through [`out!`] and [`outln!`] instead (`crate::stdout::outln!`): the first failed write
//! ends printing for the rest of the process (a closed pipe silently, any other error with one
//! line on stderr), and the command carries on to its own exit code.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to stdout unless an earlier write failed.
pub fn write(args: fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = io::stdout().lock();
    if let Err(e) = out.write_fmt(args) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("ackbench: cannot write to standard output ({e}): printing stops here");
        }
    }
}

/// `print!` that ends printing, instead of panicking, once stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*))
    };
}

/// `println!` that ends printing, instead of panicking, once stdout is closed.
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
