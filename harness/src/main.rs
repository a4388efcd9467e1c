//! `ackbench`: parse the command line, dispatch to the subcommand, exit with its code.
//!
//! Each subcommand reads as the pipeline it is (parse, validate, run, export, exit code); see
//! `ackbench::commands`.

use std::process::ExitCode;

use ackbench::cli::{Cli, Command};
use ackbench::commands;
use clap::Parser;

fn main() -> ExitCode {
    let code = match Cli::parse().command {
        Command::Run(args) => commands::run(args),
        Command::Check(args) => commands::check(args),
        Command::Report(args) => commands::rerender(args),
        Command::Sweep(args) => commands::sweep(args),
        Command::Size(args) => commands::size(args),
        Command::Provider(args) => commands::provider(args),
        Command::Broker(args) => commands::broker(args),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(3))
}
