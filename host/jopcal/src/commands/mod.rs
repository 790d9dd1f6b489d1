//! One module per verb (or group of related verbs).

mod board;
mod cache;
pub mod calibrate;
mod doctor;
mod emu;
mod estimate;
mod explain;
mod profile;
mod report;
mod run;
mod sim;
mod table;
mod targets;
mod validate;

use crate::cli::{Cli, Verb};
use anyhow::Result;

pub fn dispatch(cli: Cli) -> Result<()> {
    let firmware = cli.firmware.as_deref();
    match cli.verb {
        Verb::Validate(a) => validate::validate(firmware, cli.jop_home.as_deref(), &a),
        Verb::Run(a) => run::run(firmware, cli.jop_home.as_deref(), &a),
        Verb::Targets => targets::targets(firmware, cli.jop_home.as_deref()),
        Verb::Profile(a) => profile::profile(firmware, cli.jop_home.as_deref(), &a),
        Verb::Estimate(a) => estimate::estimate(firmware, &a),
        Verb::Table(a) => table::table(firmware, &a),
        Verb::Explain(a) => explain::explain(firmware, &a),
        Verb::Reconcile(a) => report::reconcile(&a),
        Verb::Calibrate(a) => calibrate::calibrate(firmware, &a),
        Verb::Report(a) => report::report(&a),
        Verb::Regress(a) => report::regress(&a),
        Verb::Upload(a) => board::upload(&a),
        Verb::Emu(a) => emu::emu(firmware, &a),
        Verb::Sim(a) => sim::sim(firmware, &a),
        Verb::Cache(a) => cache::cache(&a),
        Verb::Doctor(a) => doctor::doctor(firmware, cli.jop_home.as_deref(), a.timeout),
    }
}
