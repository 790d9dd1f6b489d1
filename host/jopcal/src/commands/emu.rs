//! `jopcal emu`: serve the virtual board on a pseudo-terminal, run a bundle,
//! write a bundle (the work is `jopcal_pipeline::emu`'s).

use crate::cli::EmuArgs;
use anyhow::{bail, Result};
use jopcal_pipeline::emu::{self, Board, Serve};
use jopcal_pipeline::processor::ImageBoard;
use jopcal_pipeline::Session;
use std::io::Write;

pub fn emu(s: Session, a: &EmuArgs) -> Result<()> {
    if let Some(dir) = &a.classes {
        let main = a.main.as_deref().expect("clap requires --main");
        let out = a.out.as_deref().expect("clap requires --out");
        emu::write_bundle(s, dir, main, out)?;
        println!("{}", out.display());
        return Ok(());
    }
    let board = Board {
        image: ImageBoard {
            timing: a.timing,
            config: a.config.as_deref(),
            top: a.top.as_deref(),
            generics: &[],
            sim: a.sim.as_deref(),
            params: &a.params,
        },
        cycle_limit: a.cycle_limit,
        trace: a.trace.as_deref(),
    };
    if let Some(image) = &a.run {
        let mut stdout = std::io::stdout();
        return emu::run(s, &board, image, &mut |b| {
            stdout.write_all(b)?;
            stdout.flush()
        });
    }
    let cfg = emu::bundle_board(s, &board)?;
    if !a.pty {
        bail!("say what to do: --pty (serve downloads), --run FILE.jop, or --classes DIR --main CLASS --out FILE.jop");
    }
    let how = Serve {
        protocol: a.protocol,
        fault: a.fault.as_deref(),
        seed: a.seed,
    };
    emu::serve(s, &board, cfg, &how, &mut |path| {
        println!("{path}");
        std::io::stdout().flush()
    })
}
