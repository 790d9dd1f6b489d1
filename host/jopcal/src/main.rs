//! `jopcal`: the command-line front end. It parses arguments (clap), finds the
//! project's files and hands the work to the library crates; it computes nothing
//! itself. Every failure ends as one line on stderr and a non-zero exit code.
#![forbid(unsafe_code)]

mod cli;
mod commands;
mod progress;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    if let Err(e) = commands::dispatch(cli) {
        eprintln!("jopcal: error: {}", one_line(&e));
        std::process::exit(1);
    }
}

/// The error's context chain joined into one line, leaving out a cause whose
/// text the line already holds (errors that print their source themselves).
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line.replace('\n', " ")
}
