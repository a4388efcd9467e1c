//! `ackbench`: parse the command line, dispatch to the subcommand, print its error if it
//! stopped on one, and exit with its code.
//!
//! Each subcommand reads as the pipeline it is (parse, validate, run, export, exit code); see
//! `ackbench::internals::commands`.

use std::process::ExitCode;

use ackbench::internals::commands::{self, Cli, Command};
use clap::Parser;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            // Clap's own error (usage, a flag's value), its echoed values cut.
            eprint!("{}", commands::cut_echoes(&e.render().to_string()));
            return commands::exit_code(e.exit_code());
        }
    };
    let outcome = match cli.command {
        Command::Run(args) => commands::run(args),
        Command::Check(args) => commands::check(args),
        Command::Report(args) => commands::rerender(args),
        Command::Sweep(args) => commands::sweep(args),
        Command::Size(args) => commands::size(args),
        Command::Provider(args) => commands::provider(args),
        Command::Broker(args) => commands::broker(args),
    };
    outcome.unwrap_or_else(|e| {
        e.print();
        commands::exit_code(e.code)
    })
}
