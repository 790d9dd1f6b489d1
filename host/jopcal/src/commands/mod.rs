//! One function per verb: each turns its arguments into the options of a
//! `jopcal_pipeline` stage, calls it with a [`Session`] whose progress is
//! shown by [`Reporter`], and prints the path of what it wrote.

mod board;
mod cache;
mod diff;
mod emu;
mod report;
mod sim;
mod stages;
mod table;
mod targets;

use crate::cli::{Cli, Verb};
use crate::progress::Reporter;
use anyhow::Result;
use jopcal_pipeline::Session;

pub fn dispatch(cli: Cli) -> Result<()> {
    let reporter = Reporter::default();
    let s = Session {
        firmware: cli.firmware.as_deref(),
        jop_home: cli.jop_home.as_deref(),
        progress: &reporter,
        profiler: cli.profiler,
    };
    match cli.verb {
        Verb::Validate(a) => stages::validate(s, a),
        Verb::Run(a) => stages::run(s, a),
        Verb::Targets => targets::targets(s.firmware, s.jop_home),
        Verb::Profile(a) => stages::profile(s, a),
        Verb::Estimate(a) => stages::estimate(s, a),
        Verb::Table(a) => table::table(s.firmware, &a),
        Verb::Explain(a) => stages::explain(s, a),
        Verb::Reconcile(a) => report::reconcile(s, &a),
        Verb::Calibrate(a) => stages::calibrate(s, a),
        Verb::Report(a) => report::report(s, &a),
        Verb::Regress(a) => report::regress(s, &a),
        Verb::Upload(a) => board::upload(&a),
        Verb::Emu(a) => emu::emu(s, &a),
        Verb::Sim(a) => sim::sim(s, &a),
        Verb::Cache(a) => cache::cache(s, &a),
        Verb::Doctor(a) => jopcal_pipeline::doctor::doctor(s, a.timeout, a.link),
        Verb::Diff(a) => diff::diff(s, &a),
        Verb::Sweep(a) => stages::sweep(s, a),
        Verb::Task { dir } => stages::task(&dir),
    }
}
