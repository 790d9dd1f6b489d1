//! `jopcal sim`: build, run and benchmark the Verilator bench (the work is
//! `jopcal_pipeline::sim`'s; measuring on it is `jopcal_targets::verilator`).

use crate::cli::{SimAction, SimArgs};
use anyhow::Result;
use jopcal_pipeline::sim::{self, TreeBench};
use jopcal_pipeline::Session;

pub fn sim(s: Session, a: &SimArgs) -> Result<()> {
    match &a.action {
        SimAction::Build {
            rtl,
            top,
            out,
            trace,
            preload,
            bit_cycles,
            no_taps,
            no_stand_ins,
            generics,
        } => {
            if rtl.is_empty() {
                let bench = TreeBench {
                    top: top.as_deref(),
                    out,
                    preload: *preload,
                    bit_cycles: *bit_cycles,
                    trace: *trace,
                    taps: !*no_taps,
                    generics,
                    stand_ins: !*no_stand_ins,
                };
                sim::build_for_tree(s, &bench)?;
            } else {
                sim::build_for_rtl(s, rtl, top.as_deref(), out, *trace)?;
            }
            println!("{}", out.display());
            Ok(())
        }
        SimAction::Run { sim: dir, args } => sim::run(dir, args),
        SimAction::Bench {
            sim: dir,
            cycles,
            image,
        } => sim::overhead(dir, *cycles, image.as_deref(), &mut |line| println!("{line}")),
    }
}
