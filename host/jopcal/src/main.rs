//! `jopcal`: the command-line front end. It parses arguments (clap), finds the
//! project's files and hands the work to the library crates; it computes nothing
//! itself. Every failure ends as one line on stderr and a non-zero exit code.
#![forbid(unsafe_code)]

mod cli;
mod commands;
mod progress;

use clap::Parser;

fn main() {
    // The builds' `ecj` script (jopcal_targets::resident_ecj): not a verb,
    // and no run of jopcal's own to mark as interrupted.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "__ecj-client") {
        std::process::exit(jopcal_targets::resident_ecj::client(&args[2..]));
    }
    quiet_on_closed_pipe();
    // Ctrl-C or a scheduler's SIGTERM: the run's summary says it is
    // incomplete, its scratch goes, one line says what is kept.
    let _ = ctrlc::set_handler(|| {
        eprintln!("jopcal: {}", jopcal_measure::interrupt::finish("interrupted"));
        std::process::exit(130);
    });
    let cli = cli::Cli::parse();
    if let Err(e) = commands::dispatch(cli) {
        // A signal's handler is removing the run's scratch under it: the
        // error is that removal's, and the handler ends the process with
        // its own line and status (130).
        while jopcal_measure::interrupt::finishing() {
            std::thread::park();
        }
        eprintln!("jopcal: error: {}", one_line(&e));
        std::process::exit(1);
    }
}

/// A reader that goes away (`jopcal validate | head -1`) ends jopcal as
/// it ends any Unix tool: silently, with SIGPIPE's status (128 + 13). Rust
/// ignores SIGPIPE, so the closed pipe surfaces as a failed print, which
/// panics; changing the signal's disposition back would need `unsafe`.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if text.starts_with("failed printing to std") && text.contains("Broken pipe") {
            // Nobody reads any more: the run ends as if interrupted (its
            // summary says so), without a word.
            let _ = jopcal_measure::interrupt::finish("the output pipe closed");
            std::process::exit(141);
        }
        default(info)
    }));
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
