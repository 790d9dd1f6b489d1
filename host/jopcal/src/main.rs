//! `jopcal`: the command-line front end. It parses arguments (clap), finds the
//! project's files and hands the work to the library crates; it computes nothing
//! itself. Every failure ends as one line on stderr and a non-zero exit code.

mod cli;
mod commands;
mod context;
mod progress;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    if let Err(e) = commands::dispatch(cli) {
        // `{:#}` joins anyhow's context chain into one line.
        eprintln!("jopcal: error: {e:#}");
        std::process::exit(1);
    }
}
