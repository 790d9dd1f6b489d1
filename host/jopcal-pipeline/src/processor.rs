//! The virtual board as a JOP tree's processor: its configuration read from
//! the top the Verilator bench builds (`jopcal_sim::jop::describe`: method
//! cache, memory controller, stack, scratchpad, clock, UART), its timing
//! table derived from the tree's microcode at that memory's wait states,
//! and the microcode itself for what a table cannot hold (the bytecodes
//! whose path depends on their operands, accesses that reach the I/O
//! devices). JopSim's timing (`calibration/jop-devel.toml`) is the other
//! mode, asked for by name.

use crate::{locate, microcode, Session};
use anyhow::{anyhow, bail, Context, Result};
use jopcal_emu::config::{MicrocodeCosts, Processor, RamScripts};
use jopcal_emu::BoardConfig;
use jopcal_jop::microcode::exec::{EntryId, Exec};
use jopcal_jop::microcode::{stackram, PathKey};
use jopcal_jop::microcode::{AccessTiming, Derivation, Program};
use jopcal_measure::atomic;
use jopcal_sim::jop::describe::{describe, TopFacts};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How the virtual board times a JOP tree's images.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmuTiming {
    /// As the processor's RTL: the default.
    #[default]
    Processor,
    /// As the tree's JopSim (with the monitor fix): its table, its monitors,
    /// its own division, no stack check.
    Jopsim,
}

impl EmuTiming {
    /// The name `--emu-timing` takes.
    pub fn name(self) -> &'static str {
        match self {
            EmuTiming::Processor => "processor",
            EmuTiming::Jopsim => "jopsim",
        }
    }
}

impl std::str::FromStr for EmuTiming {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<EmuTiming> {
        match s {
            "processor" => Ok(EmuTiming::Processor),
            "jopsim" => Ok(EmuTiming::Jopsim),
            other => bail!("unknown timing `{other}`: processor (the RTL's) or jopsim"),
        }
    }
}

/// Which processor.
#[derive(Debug, Clone, Default)]
pub struct ProcessorSpec {
    /// The tree's Quartus project (default: the one `sim build` uses).
    pub top: Option<String>,
    /// Generics of the top set to other values (a sweep's point).
    pub generics: Vec<(String, i64)>,
    /// The clock as the board has it (default: the top's `clk_freq`); the
    /// bench runs its JOP at the clock that gives its UART `--bit-cycles`.
    pub clk_freq: Option<u64>,
    /// The cycle counter at the first bytecode (default: the cycles the
    /// simulation microcode starts up in, as measured on the RTL).
    pub start_cycle: Option<u64>,
}

/// The counter's value when a preloaded RTL (simulation microcode, the
/// bench's reset) fetches its first bytecode: measured on jop-devel/jop's
/// cycmin (`jopcal diff` reads each run's own from the bench).
pub const DEFAULT_START_CYCLE: u64 = 151;

/// The timing table of the processor of `spec`, as its estimator and its
/// virtual board start from: derived from the tree's microcode (on `model`,
/// default the tree's table) at its memory's wait states, with its method
/// cache and clock.
pub struct ProcessorTable {
    /// The table, every parameter set.
    pub model: jopcal_timing::TimingModel,
    /// What the top's VHDL says the processor is.
    pub facts: TopFacts,
    /// The memory interfaces' access timing it was derived with.
    pub access: AccessTiming,
    /// The microcode source (the tree's `asm/src/jvm.asm`).
    pub source: PathBuf,
    /// The clock, Hz.
    pub clk: u64,
}

impl ProcessorTable {
    /// The method cache it simulates, as a cache mode.
    pub fn cache_mode(&self) -> jopcal_timing::cache::CacheMode {
        let (bytes, blocks) = self.facts.method_cache();
        format!("fifo:{bytes}:{blocks}").parse().expect("a valid cache mode")
    }
}

/// The table of the processor of `spec` in the tree at `home`.
pub fn processor_table(s: Session, home: &Path, spec: &ProcessorSpec, model: Option<&Path>) -> Result<ProcessorTable> {
    let top = spec.top.as_deref().unwrap_or(jopcal_sim::jop::DEFAULT_TOP);
    let facts = describe(home, top, &spec.generics).map_err(|e| anyhow!(e))?;
    let access_path = locate::calibration_path(
        None,
        s.firmware,
        "jop-microcode.toml",
        "the memory interface's access timing",
        "reinstall jopcal",
    )?;
    let access = AccessTiming::load(&access_path)?;
    let ws = access.controllers.get(&facts.controller).ok_or_else(|| {
        anyhow!(
            "{}: no wait states for the memory controller {} of quartus/{top} (add it to [controllers])",
            access_path.display(),
            facts.controller
        )
    })?;
    let (r, w) = ws.at(facts.ram_cnt);
    let source = home.join("asm/src/jvm.asm");
    let base_params = vec![format!("r={r}"), format!("w={w}")];
    let table = microcode::derive(
        s.firmware,
        &microcode::Request {
            source: &source,
            defines: &["SERIAL".to_string()],
            model,
            params: &base_params,
            target_params: &[],
            access: Some(&access_path),
            access_remedy: "reinstall jopcal",
            made_by: "the virtual board (the processor's timing)",
        },
    )?;
    let model_path = cached_model(&table.derived.toml)?;
    let mut model = jopcal_timing::TimingModel::load(&model_path)?;
    let (bytes, blocks) = facts.method_cache();
    let clk = spec.clk_freq.unwrap_or(facts.clk_freq);
    model.apply_overrides(&[
        format!("r={r}"),
        format!("w={w}"),
        format!("method_cache_bytes={bytes}"),
        format!("method_cache_blocks={blocks}"),
        format!("clock_mhz={}", clk as f64 / 1e6),
    ])?;
    // Its serial line's character, where the table prices printing by it.
    if model.params().contains_key("serial_char") {
        let tick = TopFacts {
            clk_freq: clk,
            ..facts.clone()
        }
        .uart_tick();
        model.set_param("serial_char", jopcal_emu::uart_frame_cycles(tick) as f64)?;
    }
    if model.params().contains_key("serial_free") {
        model.set_param("serial_free", (facts.tx_fifo_depth + 1) as f64)?;
    }
    Ok(ProcessorTable {
        model,
        facts,
        access,
        source,
        clk,
    })
}

/// The virtual board's configuration for a tree's images on the processor
/// of `spec`, with `params` overrides; and a note saying what it is.
pub fn board_config(s: Session, home: &Path, spec: &ProcessorSpec, params: &[String]) -> Result<(BoardConfig, String)> {
    let top = spec.top.as_deref().unwrap_or(jopcal_sim::jop::DEFAULT_TOP);
    let ProcessorTable {
        mut model,
        facts,
        access,
        source,
        clk,
    } = processor_table(s, home, spec, None)?;
    let (bytes, blocks) = facts.method_cache();
    let defines = vec!["SERIAL".to_string()];
    model.apply_overrides(params)?;
    let (r, w) = (model.params()["r"], model.params()["w"]);
    let mut cfg = BoardConfig::from_model(model).map_err(|e| anyhow!(e))?;
    let program = Program::read(&source, &defines)?;
    cfg.processor = Some(Arc::new(processor(&facts, &program, &access, r, w, clk, spec)?));
    let note = format!(
        "the processor of quartus/{top} ({} KB method cache in {blocks} blocks, ram_cnt {} (r={r}, w={w}), {}-word stack), timed from {}",
        bytes / 1024,
        facts.ram_cnt,
        facts.stack_words(),
        source.display()
    );
    Ok((cfg, note))
}

/// The derived table, kept in the cache under a hash of its text.
fn cached_model(toml: &str) -> Result<PathBuf> {
    let hash = format!("{:x}", Sha256::digest(toml.as_bytes()));
    let path = locate::cache_root()?
        .join("processor-tables")
        .join(format!("{}.toml", &hash[..16]));
    if !path.is_file() {
        atomic::write_atomic(&path, toml.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(path)
}

/// The processor settings of the virtual board.
fn processor(
    facts: &TopFacts,
    program: &Program,
    access: &AccessTiming,
    r: f64,
    w: f64,
    clk: u64,
    spec: &ProcessorSpec,
) -> Result<Processor> {
    let exec = Exec::new(program, access, r, w);
    // Bytecodes whose paths take different cycles: their operands decide.
    let names: Vec<(u8, &str)> = (0..=255u8)
        .map(|op| (op, jopcal_timing::jop::any_opcode_name(op)))
        .collect();
    let derivation = Derivation::new(Path::new("jvm.asm"), program, access, names.iter().map(|(_, n)| *n));
    let b_hit = 4.0;
    let mut by_data = vec![None; 256];
    for (op, name) in &names {
        if let Some(Ok(entry)) = derivation.entries.get(*name) {
            let (lo, hi) = entry.range(r, w, b_hit);
            if lo != hi && !entry.loads_bytecode() {
                by_data[*op as usize] = exec.entry(name);
            }
        }
    }
    // The stack pointer's excursions, for the overflow check: a bytecode's
    // own microcode, or the dispatch of one JOP runs in Java.
    let mut sp = vec![None; 256];
    // What each bytecode's microcode writes into the stack memory, per path.
    let mut ram = vec![RamScripts::default(); 256];
    let mut entries = vec![None; 256];
    for (op, name) in &names {
        if let Some((Ok(entry), own)) = derivation.entry_for(name) {
            sp[*op as usize] = Some(entry.paths.sp);
            // An opcode without microcode of its own runs the dispatch to Java's.
            let runs = if own { exec.entry(name) } else { None };
            ram[*op as usize] = ram_scripts(program, &entry.paths.seqs, runs);
            entries[*op as usize] = runs;
        }
    }
    // What JopSim runs itself but the microcode sends to Java (division,
    // the runtime's lock calls, ...): the board sends it there too.
    let in_java: Vec<bool> = names
        .iter()
        .map(|(op, name)| {
            matches!(derivation.entry_for(name), Some((Ok(_), false)))
                && !jopcal_emu::image::timing::runs_in_java(*op)
                && !jopcal_emu::image::timing::has_inline_operands(*op)
        })
        .collect();
    let mut io = vec![None; 256];
    for name in ["jopsys_rd", "jopsys_wr", "jopsys_rdmem", "jopsys_wrmem"] {
        let Some(op) = names.iter().find(|(_, n)| *n == name).map(|(op, _)| *op) else {
            continue;
        };
        if let Some(entry) = exec.entry(name) {
            io[op as usize] = exec.cycles(entry, &[0, 0, 0, -128], &[]);
        }
    }
    let stack_words = facts.stack_words() as usize;
    let mut stack_init = jopcal_jop::microcode::ram::initial_ram(program, stack_words)?;
    // The start-up code sets the stack pointer to `stack_init` with registers
    // still 0 from reset, and its pushes spill those zeros into the words
    // above it, up to the first frame (measured on the cycmin RTL).
    let base = program.constants.get("stack_init").copied().unwrap_or(64) as usize;
    let first_frame = (base as i64 + i64::from(access.stack_offset)) as usize;
    for w in stack_init.iter_mut().take(first_frame + 1).skip(base + 1) {
        *w = 0;
    }
    Ok(Processor {
        stack_words,
        overflow_at: facts.overflow_at() as i32 + access.stack_offset,
        initial_sp: program.constants.get("stack_init").copied().unwrap_or(64) as i32 + access.stack_offset,
        stack_init,
        memory_words: 1 << facts.sram_address_bits.min(28),
        scratchpad_words: if facts.spm_width == 0 { 0 } else { 1 << facts.spm_width },
        uart_tick: TopFacts {
            clk_freq: clk,
            ..facts.clone()
        }
        .uart_tick(),
        uart_tx_depth: facts.tx_fifo_depth as usize,
        us_divider: (clk / 1_000_000).max(1),
        start_cycle: spec.start_cycle.unwrap_or(DEFAULT_START_CYCLE),
        io_read_at: access.io_read_at,
        io_write_at: access.io_write_at,
        microcode: MicrocodeCosts::new(exec, by_data, io, in_java, sp, ram, entries),
    })
}

/// An opcode's stack-memory writes along each of its microcode's paths.
fn ram_scripts(program: &Program, seqs: &[(PathKey, Vec<usize>)], entry: Option<EntryId>) -> RamScripts {
    let paths = seqs
        .iter()
        .map(|(key, seq)| (*key, stackram::script(program, seq)))
        .collect();
    RamScripts::new(paths, entry)
}

/// Where the virtual board's configuration for a JOP tree's images comes from.
#[derive(Debug, Clone, Copy, Default)]
pub struct ImageBoard<'a> {
    pub timing: EmuTiming,
    /// A timing table given by the user: the board times with it as JopSim does.
    pub config: Option<&'a Path>,
    /// The processor's top (default: `sim build`'s).
    pub top: Option<&'a str>,
    /// Generics of that top set to other values (not with `sim`, whose own are taken).
    pub generics: &'a [(String, i64)],
    /// A bench `sim build --jop-home` made: the processor is its processor.
    pub sim: Option<&'a Path>,
    /// `NAME=VALUE` overrides of the table's parameters.
    pub params: &'a [String],
}

/// The virtual board's configuration for a tree's images, and what it is in words.
pub fn image_board(s: Session, b: &ImageBoard) -> Result<(BoardConfig, String)> {
    // JopSim's timing (or `--config`), `why` it was taken where it was not asked for.
    let jopsim = |why: &str| -> Result<(BoardConfig, String)> {
        let path = locate::image_config_path(b.config, s.firmware)?;
        let cfg = BoardConfig::load(&path, b.params).map_err(|e| anyhow!(e))?;
        Ok((cfg, format!("JopSim's timing ({}){why}", path.display())))
    };
    if b.config.is_some() || b.timing == EmuTiming::Jopsim {
        return jopsim("");
    }
    let built = match b.sim {
        Some(sim) => jopcal_sim::jop::describe::Built::read(sim).map_err(|e| anyhow!(e))?,
        None => None,
    };
    let (home, spec) = match built {
        Some(built) => (
            built.jop_home,
            ProcessorSpec {
                top: Some(built.top.top.clone()),
                generics: built.top.generics.clone().into_iter().collect(),
                clk_freq: Some(built.top.clk_freq),
                start_cycle: None,
            },
        ),
        None => (
            match (locate::jop_home(s.jop_home), b.top) {
                (Ok(home), _) => home,
                // No tree to read the processor from: JopSim's table, said so.
                (Err(_), None) => return jopsim(": no JOP tree (--jop-home) to read the processor from"),
                (Err(e), Some(_)) => {
                    return Err(e.context("the virtual board as the processor reads the tree's microcode and VHDL"))
                }
            },
            ProcessorSpec {
                top: b.top.map(str::to_string),
                generics: b.generics.to_vec(),
                ..ProcessorSpec::default()
            },
        ),
    };
    board_config(s, &home, &spec, b.params)
}

/// What a tree's processor (`top`: the facts of its VHDL) tells of a
/// target that is it: its serial line and its memory.
pub struct KnownProcessor {
    /// Cycles of one character its UART sends.
    pub serial_char: f64,
    /// Characters its UART takes without the program waiting (the
    /// transmit FIFO and the one being sent).
    pub serial_free: f64,
    /// Its memory's read and write wait states, where the access table
    /// (`calibration/jop-microcode.toml`, found from `firmware`) knows its
    /// controller.
    pub wait_states: Option<(f64, f64)>,
}

/// The [`KnownProcessor`] of `top`.
pub fn known_processor(firmware: Option<&Path>, top: &TopFacts) -> Result<KnownProcessor> {
    let access_path = locate::calibration_path(
        None,
        firmware,
        "jop-microcode.toml",
        "the memory interface's access timing",
        "reinstall jopcal",
    )?;
    let access = AccessTiming::load(&access_path)?;
    Ok(KnownProcessor {
        serial_char: jopcal_emu::uart_frame_cycles(top.uart_tick()) as f64,
        serial_free: f64::from(top.tx_fifo_depth + 1),
        wait_states: access.controllers.get(&top.controller).map(|ws| ws.at(top.ram_cnt)),
    })
}

/// The [`KnownProcessor`] of the JOP a tree build made in `sim` (`None`
/// for a bench of the user's own RTL).
pub fn bench_processor(firmware: Option<&Path>, sim: &Path) -> Result<Option<KnownProcessor>> {
    let built = jopcal_sim::jop::describe::Built::read(sim).map_err(|e| anyhow!(e))?;
    built.map(|b| known_processor(firmware, &b.top)).transpose()
}

/// The [`KnownProcessor`] of the tree at `home`'s Quartus project `top`,
/// which a board's FPGA holds (`--board-top`).
pub fn board_processor(firmware: Option<&Path>, home: &Path, top: &str) -> Result<KnownProcessor> {
    known_processor(firmware, &describe(home, top, &[]).map_err(|e| anyhow!(e))?)
}

/// The RTL keeps no clock reads (`--target verilator`): the virtual board
/// as the bench's processor runs each measured image again, and where it
/// counts the RTL's cycles to the cycle its reads of the clock are the
/// RTL's, kept in the run's `clocks/` for the host's profile
/// ([`crate::clocks::target_clock`]). Where it counts otherwise, nothing is
/// kept and the host reads its own clock. Says what it did for each image
/// whose program read the clock.
pub fn rtl_clocks(s: Session, sim: &Path, dir: &Path, rows: &[jopcal_measure::Measurement]) -> Result<()> {
    let mut cfg = None;
    for row in rows
        .iter()
        .filter(|r| r.unit == jopcal_measure::Unit::Cycles && r.run == 1)
    {
        let Some((image, map)) = crate::estimate::benchmark_image(&dir.join("images"), &row.benchmark) else {
            continue;
        };
        let cfg = match &cfg {
            Some(c) => c,
            None => {
                let board = ImageBoard {
                    sim: Some(sim),
                    ..Default::default()
                };
                &*cfg.insert(image_board(s, &board)?.0)
            }
        };
        let img = jopcal_link::JopImage::load(&image, None).map_err(|e| anyhow!(e))?;
        let link = crate::estimate::read_link_map(&map)?;
        let mut output = Vec::new();
        let report = jopcal_emu::run_jop_image(
            &img,
            cfg,
            false,
            Some(&link),
            &mut |b| {
                output.extend_from_slice(b);
                Ok(())
            },
            &mut |_| Ok(()),
        )
        .with_context(|| format!("running {} on the virtual board", image.display()))?;
        if !report
            .clock_reads
            .iter()
            .any(|(m, _)| jopcal_profile::routed::is_clock_named(m))
        {
            continue;
        }
        let counted =
            String::from_utf8_lossy(&output)
                .lines()
                .find_map(|l| match jopcal_measure::result_line::parse_line(l) {
                    Ok(Some(jopcal_measure::result_line::ResultLine::Result { bench, cycles, .. }))
                        if bench == row.benchmark =>
                    {
                        Some(cycles)
                    }
                    _ => None,
                });
        if counted == Some(row.value) {
            let path = dir
                .join(crate::clocks::CLOCKS_DIR)
                .join(format!("{}.txt", row.benchmark));
            jopcal_emu::board::write_clock_reads(&report, &path)
                .with_context(|| format!("writing {}", path.display()))?;
            s.say(&format!(
                "  validate {}: the virtual board as the bench's processor counts the RTL's {} cycles: its clock reads are the RTL's ({})",
                row.benchmark,
                row.value,
                path.display()
            ));
        } else {
            s.say(&format!(
                "  validate warning: {}: the virtual board as the bench's processor counts {}, the RTL {}: the host cannot read the RTL's clock",
                row.benchmark,
                counted.map_or("no result".to_string(), |c| c.to_string()),
                row.value
            ));
        }
    }
    Ok(())
}
