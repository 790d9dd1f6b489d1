//! `jopcal sim build --jop-home`: a Verilated JOP from the user's tree.
//!
//! The steps, each reported: read the chosen Quartus project's VHDL file
//! list (`quartus/<top>/jop.qsf`); assemble the tree's microcode with the
//! tree's own assembler (serial download, or simulation microcode for
//! `--preload`); put jopcal's synthesizable memories in place of the vendor
//! ones and wrap the processor, I/O and memory controller to the contract;
//! convert to Verilog with GHDL; work around GHDL 2.0 (`fixes`); check the
//! result with Verilator's linter; build the bench. The build is skipped
//! when a hash of every input matches the last one.

pub mod describe;
pub mod fixes;
pub mod speed;
pub mod taps;
pub mod vhdl;
pub mod wrapper;

use crate::build::{build, BuiltBench};
use crate::error::BenchError;
use jopcal_output::children::InGroup;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to build.
#[derive(Debug, Clone)]
pub struct TreeBuild {
    pub jop_home: PathBuf,
    /// A Quartus project of the tree (`quartus/<top>/jop.qsf`): its files and top.
    pub top: String,
    pub out: PathBuf,
    /// Simulation microcode (the image is preloaded) instead of serial download.
    pub preload: bool,
    /// Clock cycles per UART bit (a multiple of 16: the UART samples at 16x).
    pub bit_cycles: u32,
    pub trace: bool,
    /// Add the trace taps (hdl-sim/CONTRACT.md) to the wrapper.
    pub taps: bool,
    /// `hdl-sim/bench`.
    pub bench_dir: PathBuf,
    /// Generics of the top set to other values than its defaults (a
    /// sweep's point: `jpc_width`, `block_bits`, `ram_cnt`, ...).
    pub generics: Vec<(String, i64)>,
    /// Put jopcal's stand-ins in place of GHDL's netlist of the entities
    /// they were written from (`speed::stand_ins`); false keeps GHDL's
    /// netlist throughout.
    pub stand_ins: bool,
}

/// The Quartus project used when none is named: the minimal Cyclone board
/// with a 32-bit SRAM (the configuration JopSim's defaults describe).
pub const DEFAULT_TOP: &str = "cycmin";

/// What was built.
#[derive(Debug, Clone)]
pub struct TreeBuilt {
    pub bench: BuiltBench,
    /// Nothing had changed: the last build was kept.
    pub cached: bool,
    /// Options the bench needs for this JOP (`--bit-cycles`, `--mem-words`), also in `bench.args`.
    pub bench_args: Vec<String>,
}

/// Why the build failed: one line naming the file and the port or construct.
#[derive(Debug, thiserror::Error)]
pub enum TreeBuildError {
    #[error("{0}: no such Quartus project in the tree (--top names a directory under quartus/, e.g. {DEFAULT_TOP})")]
    NoProject(PathBuf),
    #[error("{file}: {why}")]
    Tree { file: PathBuf, why: String },
    #[error("{tool} is needed: {why}")]
    Tool { tool: String, why: String },
    #[error("{step}: {line}")]
    Failed { step: &'static str, line: String },
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Bench(#[from] BenchError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TreeBuildError + '_ {
    move |source| TreeBuildError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn tree(file: &Path, why: impl Into<String>) -> TreeBuildError {
    TreeBuildError::Tree {
        file: file.to_path_buf(),
        why: why.into(),
    }
}

/// The tree's files of a Quartus project, in the project's order.
pub fn project_files(home: &Path, top: &str) -> Result<Vec<PathBuf>, TreeBuildError> {
    let dir = home.join("quartus").join(top);
    let qsf = dir.join("jop.qsf");
    let text = std::fs::read(&qsf).map_err(|_| TreeBuildError::NoProject(qsf.clone()))?;
    let text = String::from_utf8_lossy(&text);
    let mut files = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut w = line.split_whitespace();
        if w.next() != Some("set_global_assignment") || w.next() != Some("-name") {
            continue;
        }
        match w.next() {
            Some("VHDL_FILE") => {}
            Some(kind @ ("VERILOG_FILE" | "SYSTEMVERILOG_FILE" | "QIP_FILE")) => {
                return Err(tree(
                    &qsf,
                    format!("line {}: a {kind}: jopcal converts VHDL only", n + 1),
                ))
            }
            _ => continue,
        }
        let rel = w.next().unwrap_or("").trim_matches('"');
        let p = dir.join(rel);
        // The jump table is generated with the microcode (the build makes its own).
        if !p.is_file() && !rel.ends_with("jtbl.vhd") {
            return Err(tree(&qsf, format!("line {}: {rel} does not exist", n + 1)));
        }
        if p.is_file() {
            files.push(p);
        }
    }
    if files.is_empty() {
        return Err(tree(&qsf, "lists no VHDL_FILE"));
    }
    Ok(files)
}

/// A project file, read once: the tree's sources are Latin-1 (names and
/// syntax are ASCII), so each byte is one `char` and back.
struct Source {
    path: PathBuf,
    text: String,
}

impl Source {
    fn read(path: &Path) -> Result<Source, TreeBuildError> {
        let b = std::fs::read(path).map_err(io(path))?;
        Ok(Source {
            path: path.to_path_buf(),
            text: b.iter().map(|&c| c as char).collect(),
        })
    }
}

/// `text` as the Latin-1 bytes it was read from.
fn latin1(text: &str) -> Vec<u8> {
    text.chars().map(|c| c as u8).collect()
}

/// What a project file is to the build.
enum Role {
    /// A vendor or generated memory jopcal replaces with its own (`rom`, `ram`, `jbc`).
    Replaced,
    /// The PLL: the bench's clock is the processor's.
    Dropped,
    /// The board's top: its generics and instances are wrapped.
    Top,
    /// The `jop_config` package: copied with the clock set for the bench's UART.
    Config,
    /// The microcode jump table the tree generates: the build's own replaces it.
    JumpTable,
    Kept,
}

fn role(text: &str) -> Role {
    let t = vhdl::strip_comments(text).to_ascii_lowercase();
    let declares = |e: &str| t.contains(&format!("entity {e} is"));
    if declares("rom") || declares("ram") || declares("jbc") {
        Role::Replaced
    } else if declares("pll") || t.contains("altpll") {
        Role::Dropped
    } else if !vhdl::instances(&t, "jopcpu").is_empty() {
        Role::Top
    } else if t.contains("package jop_config is") {
        Role::Config
    } else if declares("jtbl") {
        Role::JumpTable
    } else {
        Role::Kept
    }
}

fn run(step: &'static str, cmd: &mut Command) -> Result<std::process::Output, TreeBuildError> {
    let tool = cmd.get_program().to_string_lossy().into_owned();
    let o = cmd.output_in_group().map_err(|e| TreeBuildError::Tool {
        why: format!("cannot run it: {e} (scripts/setup installs ghdl and verilator)"),
        tool,
    })?;
    if !o.status.success() {
        let text = String::from_utf8_lossy(&o.stderr).into_owned() + &String::from_utf8_lossy(&o.stdout);
        // A located message (`file:line:col: ...`, as GHDL and gcc write them)
        // first; GHDL's failed assertion (`file:line:col:(assertion error): its
        // report`) comes before its `error due to assertion failure`.
        let located = regex::Regex::new(r"^\S+:\d+:\d+:").expect("pattern");
        let line = text
            .lines()
            .find(|l| located.is_match(l) && !l.contains("warning"))
            .or_else(|| {
                text.lines()
                    .find(|l| l.contains("error") || l.contains("Error") || l.contains("Exception"))
            })
            .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("failed without a message")
            .trim()
            .to_string();
        return Err(TreeBuildError::Failed { step, line });
    }
    Ok(o)
}

fn ghdl(dir: &Path, command: &str, workdir: &Path) -> Command {
    let mut c = Command::new("ghdl");
    // -frelaxed: the tree's simulation models use plain shared variables;
    // -fsynopsys: its generated files use std_logic_arith/unsigned.
    c.current_dir(dir)
        .args([command, "--std=08", "-frelaxed", "-fsynopsys"])
        .arg(format!("--workdir={}", workdir.display()));
    c
}

/// The VHDL origin of the net declared on Verilog line `line`: the
/// `/* file:line:col */` GHDL writes above the statement that drives it.
fn vhdl_origin(verilog: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = verilog.lines().collect();
    let decl = lines.get(line.checked_sub(1)?)?;
    let net = decl.trim_end_matches(';').split_whitespace().last()?.to_string();
    let driver = lines.iter().enumerate().position(|(i, l)| {
        i + 1 != line
            && (l.contains(&format!("assign {net} "))
                || l.contains(&format!(": {net} <="))
                || l.contains(&format!("{net} <= ")))
    })?;
    lines[..driver].iter().rev().find_map(|l| {
        l.trim()
            .strip_prefix("/* ")
            .and_then(|r| r.strip_suffix(" */"))
            .map(|r| r.trim().to_string())
    })
}

/// Builds the tree's JOP into `b.out`, reporting each step through `progress`.
pub fn build_tree(b: &TreeBuild, progress: &mut dyn FnMut(&str)) -> Result<TreeBuilt, TreeBuildError> {
    if b.bit_cycles < 16 || !b.bit_cycles.is_multiple_of(16) {
        return Err(TreeBuildError::Failed {
            step: "--bit-cycles",
            line: format!(
                "{} is not a multiple of 16 (JOP's UART samples each bit 16 times)",
                b.bit_cycles
            ),
        });
    }
    let home = &b.jop_home;
    progress(&format!("reading quartus/{}/jop.qsf", b.top));
    let sources = project_files(home, &b.top)?
        .iter()
        .map(|f| Source::read(f))
        .collect::<Result<Vec<_>, _>>()?;
    // Logic between the processor and its memory that the bench leaves out,
    // and a generic the top does not have (`describe` checks both), are
    // named before anything is built.
    if b.generics.is_empty() {
        describe::processor_on_its_memory(&sources)?;
    } else {
        describe::describe(home, &b.top, &b.generics)?;
    }
    let jar = home.join("java/tools/dist/lib/jop-tools.jar");
    if !jar.is_file() {
        return Err(tree(
            &jar,
            "missing: build the tree's tools first (docs/notes/jop-tree.md, step 2)",
        ));
    }
    let asm = home.join("asm/src/jvm.asm");
    if !asm.is_file() {
        return Err(tree(&asm, "missing: the tree's microcode source"));
    }
    // Every input of the build, hashed: the project's files, the microcode
    // sources, the assembler, jopcal's own parts and the options.
    let mut h = Sha256::new();
    for part in [
        include_str!("mod.rs"),
        include_str!("fixes.rs"),
        include_str!("wrapper.rs"),
        include_str!("vhdl.rs"),
        include_str!("taps.rs"),
        include_str!("describe.rs"),
        include_str!("speed.rs"),
        include_str!("models/dat.vhd"),
        include_str!("models/rom.vhd"),
        include_str!("models/ram.vhd"),
        include_str!("models/jbc.vhd"),
        include_str!("../../../../hdl-sim/bench/bench.cpp"),
    ] {
        h.update(part.as_bytes());
    }
    h.update(
        format!(
            "{}|{}|{}|{}|{}|{}",
            b.top, b.preload, b.bit_cycles, b.trace, b.taps, b.stand_ins
        )
        .as_bytes(),
    );
    for (name, v) in &b.generics {
        h.update(format!("|{name}={v}").as_bytes());
    }
    let mut asm_sources: Vec<PathBuf> = std::fs::read_dir(home.join("asm/src"))
        .map_err(io(&home.join("asm/src")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    asm_sources.sort();
    for s in &sources {
        h.update(s.path.to_string_lossy().as_bytes());
        h.update(latin1(&s.text));
    }
    for f in asm_sources.iter().chain([&jar]) {
        h.update(f.to_string_lossy().as_bytes());
        h.update(std::fs::read(f).map_err(io(f))?);
    }
    let hash = format!("{:x}", h.finalize());
    let out = &b.out;
    std::fs::create_dir_all(out).map_err(io(out))?;
    let out = &out.canonicalize().map_err(io(out))?;
    let stamp = out.join("tree-build.sha256");
    let args_file = out.join("bench.args");
    let binary = out.join("obj/bench");
    if binary.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(hash.as_str()) {
        if let Ok(args) = std::fs::read_to_string(&args_file) {
            progress("nothing changed since the last build: kept");
            let xml = std::fs::read_to_string(out.join("ports.xml")).map_err(io(&out.join("ports.xml")))?;
            let contract = crate::ports::parse_ports(&xml)
                .and_then(|p| crate::ports::check_contract(&p, wrapper::TOP))
                .map_err(BenchError::from)?;
            return Ok(TreeBuilt {
                bench: BuiltBench { binary, contract },
                cached: true,
                bench_args: args.split_whitespace().map(str::to_string).collect(),
            });
        }
    }
    let _ = std::fs::remove_file(&stamp);

    // Microcode, with the tree's assembler, into the build directory.
    let kind = if b.preload { "SIMULATION" } else { "SERIAL" };
    progress(&format!("assembling the tree's microcode (asm/src/jvm.asm, {kind})"));
    let pre = run(
        "preprocessing the microcode",
        Command::new("gcc")
            .args(["-x", "c", "-E", "-C", "-P", &format!("-D{kind}")])
            .arg(&asm),
    )?;
    std::fs::write(out.join("jvmgen.asm"), &pre.stdout).map_err(io(out))?;
    run(
        "assembling the microcode (the tree's Jopa)",
        Command::new("java")
            .arg("-cp")
            .arg(&jar)
            .args(["com.jopdesign.tools.Jopa", "-s"])
            .arg(out)
            .arg("-d")
            .arg(out)
            .arg("jvmgen.asm")
            .current_dir(out),
    )?;
    for f in ["mem_rom.dat", "mem_ram.dat", "jtbl.vhd"] {
        if !out.join(f).is_file() {
            return Err(tree(&jar, format!("Jopa wrote no {f}")));
        }
    }

    // The VHDL jopcal analyses: the project's files as they are, or fixed.
    progress("preparing the VHDL (jopcal's memories, the wrapper, work-arounds)");
    let src = out.join("vhdl");
    std::fs::create_dir_all(&src).map_err(io(&src))?;
    let mut analyse: Vec<PathBuf> = Vec::new();
    let mut top: Option<&Source> = None;
    let mut notes = Vec::new();
    for source in &sources {
        let (f, text) = (&source.path, &source.text);
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match role(text) {
            Role::Replaced | Role::Dropped | Role::JumpTable => {}
            Role::Top => top = Some(source),
            Role::Config => {
                let t = config_with_clock(text, f, &sources, b.bit_cycles)?;
                let p = src.join(&name);
                std::fs::write(&p, latin1(&t)).map_err(io(&p))?;
                analyse.push(p);
            }
            Role::Kept => {
                let lower = vhdl::strip_comments(text).to_ascii_lowercase();
                if ["altera_mf", "lpm", "unisim", "altera."]
                    .iter()
                    .any(|l| lower.contains(&format!("library {l}")) || lower.contains(&format!("use {l}")))
                {
                    return Err(tree(f, "a vendor library file jopcal has no stand-in for"));
                }
                let (fixed, added) = fixes::reset_record_fields(text);
                let (fixed, hoisted) = fixes::hoist_generic_conversions(&fixed);
                if added.is_empty() && hoisted.is_empty() {
                    analyse.push(f.clone());
                } else {
                    for (line, a) in &added {
                        notes.push(format!("{name}:{line}: reset branch gains `{a}`"));
                    }
                    for g in &hoisted {
                        notes.push(format!("{name}: the conversion of generic `{g}` becomes a signal"));
                    }
                    let p = src.join(&name);
                    std::fs::write(&p, latin1(&fixed)).map_err(io(&p))?;
                    analyse.push(p);
                }
            }
        }
    }
    let Some(top) = top else {
        return Err(tree(
            &home.join("quartus").join(&b.top).join("jop.qsf"),
            "no file instantiates jopcpu (the processor)",
        ));
    };
    for (n, text) in [
        ("jopcal_dat.vhd", include_str!("models/dat.vhd")),
        ("jopcal_rom.vhd", include_str!("models/rom.vhd")),
        ("jopcal_ram.vhd", include_str!("models/ram.vhd")),
        ("jopcal_jbc.vhd", include_str!("models/jbc.vhd")),
    ] {
        let p = src.join(n);
        std::fs::write(&p, text).map_err(io(&p))?;
        analyse.push(p);
    }
    analyse.push(out.join("jtbl.vhd"));
    // The mnemonic viewers the core instantiates inside translate_off: GHDL
    // 2.0 analyses those regions, and without the entities it silently makes
    // the fetch stages empty black boxes.
    for viewer in ["bytecode.vhd", "microcode.vhd"] {
        let p = home.join("vhdl/simulation").join(viewer);
        if p.is_file() {
            analyse.push(p);
        }
    }
    let wrapper_text = make_wrapper(top, &sources, &b.generics)?;
    let wp = src.join("jopcal_jop.vhd");
    std::fs::write(&wp, &wrapper_text).map_err(io(&wp))?;
    analyse.push(wp);
    for n in &notes {
        progress(&format!("work-around: {n}"));
    }

    progress("converting VHDL to Verilog (ghdl --synth --out=verilog)");
    let work = out.join("ghdl");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    run("ghdl -i", ghdl(out, "-i", &work).args(&analyse))?;
    let made = run("analysing the VHDL (ghdl -m)", ghdl(out, "-m", &work).arg(wrapper::TOP))?;
    let synth = |fmt: &str| -> Result<std::process::Output, TreeBuildError> {
        run(
            "ghdl --synth",
            ghdl(out, "--synth", &work)
                .arg(format!("--out={fmt}"))
                .arg(wrapper::TOP),
        )
    };
    let verilog_out = synth("verilog")?;
    let warnings = String::from_utf8_lossy(&made.stderr).into_owned() + &String::from_utf8_lossy(&verilog_out.stderr);
    if let Some(l) = warnings.lines().find(|l| l.contains("not bound")) {
        return Err(TreeBuildError::Failed {
            step: "ghdl --synth",
            line: format!("{} (an instance without its entity would be an empty box)", l.trim()),
        });
    }
    let netlist_vhdl = synth("vhdl")?;
    let raw = String::from_utf8_lossy(&verilog_out.stdout).into_owned();
    std::fs::write(out.join("jop-ghdl.v"), &raw).map_err(io(out))?;

    progress("working around GHDL 2.0's Verilog writer");
    let (v, renamed) = fixes::rename_reserved(&raw);
    let (v, separated) = fixes::separate_instance_nets(&v);
    let (v, defaults) = fixes::case_defaults(&v, &String::from_utf8_lossy(&netlist_vhdl.stdout)).map_err(|m| {
        TreeBuildError::Failed {
            step: "carrying case defaults over",
            line: format!("module {} net {}: {}", m.module, m.net, m.why),
        }
    })?;
    progress(&format!(
        "work-around: {} reserved word(s) renamed ({}), {} twice-declared instance net(s) separated, {} case default(s) restored",
        renamed.len(),
        renamed.join(", "),
        separated.len(),
        defaults
    ));
    let (v, one_hot) = speed::one_hot_cases(&v);
    progress(&format!(
        "speed: {} one-hot case statement(s) evaluated as tests of their bits ({} left as GHDL wrote them)",
        one_hot.rewritten, one_hot.left
    ));
    let v = if b.stand_ins {
        let (v, uses) = speed::stand_ins(&v, sources.iter().map(|s| s.text.as_str()));
        for u in &uses {
            match &u.kept_because {
                None => progress(&format!(
                    "speed: jopcal's stand-in for {} in place of GHDL's {} (--no-stand-ins keeps GHDL's)",
                    u.entity,
                    u.modules.join(", ")
                )),
                Some(why) => progress(&format!("speed: GHDL's netlist of {} kept: {why}", u.entity)),
            }
        }
        v
    } else {
        progress("speed: GHDL's netlist of every entity (no stand-ins, as asked)");
        v
    };
    // The trace taps: without them the bench runs, but cannot trace.
    let v = match taps::add_taps(&v, wrapper::TOP) {
        Ok(_) if !b.taps => {
            progress("no trace taps (asked): `run --trace` and `diff` will not see inside this JOP");
            v
        }
        Ok((tapped, _)) => tapped,
        Err(e) => {
            progress(&format!(
                "no trace taps ({e}): `run --trace` and `diff` will not see inside this JOP"
            ));
            v
        }
    };
    let rtl = out.join("jop.v");
    std::fs::write(&rtl, &v).map_err(io(&rtl))?;

    progress("checking the Verilog (verilator --lint-only)");
    let lint = Command::new("verilator")
        .args(["--lint-only", "-Wno-fatal", "--top-module", wrapper::TOP])
        .arg(&rtl)
        .output()
        .map_err(|e| TreeBuildError::Tool {
            tool: "verilator".into(),
            why: e.to_string(),
        })?;
    let text = String::from_utf8_lossy(&lint.stderr);
    for l in text.lines() {
        let bad = ["%Error", "%Warning-UNOPTFLAT", "%Warning-MULTIDRIVEN"]
            .iter()
            .any(|k| l.starts_with(k));
        if bad && !l.contains("Exiting due to") {
            let at = l
                .split(':')
                .nth(2)
                .and_then(|n| n.trim().parse::<usize>().ok())
                .unwrap_or(0);
            let origin = vhdl_origin(&v, at).unwrap_or_else(|| "no VHDL origin".into());
            return Err(TreeBuildError::Failed {
                step: "the converted JOP",
                line: format!(
                    "{} (from {origin}); GHDL's output is in {}",
                    l.trim(),
                    out.join("jop-ghdl.v").display()
                ),
            });
        }
    }

    progress("verilating JOP with the bench (verilator --build; a few minutes)");
    let bench = build(std::slice::from_ref(&rtl), wrapper::TOP, out, &b.bench_dir, b.trace)?;
    let Some(addr_bits) = bench.contract.memory else {
        return Err(TreeBuildError::Failed {
            step: "the contract",
            line: "the wrapped JOP has no memory port".into(),
        });
    };
    let bench_args = vec![
        "--bit-cycles".to_string(),
        b.bit_cycles.to_string(),
        "--mem-words".to_string(),
        (1u64 << addr_bits.min(28)).to_string(),
    ];
    let mut args_text = bench_args.join(" ");
    args_text.push('\n');
    std::fs::write(&args_file, args_text).map_err(io(&args_file))?;
    std::fs::write(
        out.join("microcode"),
        format!("{}\n", if b.preload { "simulation" } else { "serial" }),
    )
    .map_err(io(out))?;
    // What the bench's processor is, for a model of it (`jopcal diff`).
    let mut facts = describe::describe(home, &b.top, &b.generics)?;
    facts.clk_freq = facts.baud * u64::from(b.bit_cycles);
    let built = describe::Built {
        jop_home: home.canonicalize().unwrap_or_else(|_| home.to_path_buf()),
        microcode: if b.preload { "simulation" } else { "serial" }.into(),
        top: facts,
    };
    let built_path = out.join(describe::BUILT_FILE);
    std::fs::write(&built_path, built.to_toml()).map_err(io(&built_path))?;
    std::fs::write(&stamp, &hash).map_err(io(&stamp))?;
    Ok(TreeBuilt {
        bench,
        cached: false,
        bench_args,
    })
}

/// The `jop_config` package with `clk_freq` set so that the UART's baud
/// rate (from the project's `scio`) takes `bit_cycles` clock cycles per bit:
/// a download at the board's 868 cycles per bit would take the simulation
/// hours. Only the UART's divider and the microsecond timer's prescaler read
/// it; the processor's cycles do not change.
fn config_with_clock(text: &str, file: &Path, sources: &[Source], bit_cycles: u32) -> Result<String, TreeBuildError> {
    let baud = sources
        .iter()
        .filter(|s| s.text.to_ascii_lowercase().contains("entity scio is"))
        .find_map(|s| {
            let t = vhdl::strip_comments(&s.text).to_ascii_lowercase();
            let at = t.find("baud_rate =>")?;
            t[at + 12..]
                .trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<u64>()
                .ok()
        })
        .ok_or_else(|| tree(file, "cannot find the UART's baud_rate in the project's scio"))?;
    let re = regex::Regex::new(r"(?i)(constant\s+clk_freq\s*:\s*integer\s*:=\s*)(\d+)\s*;").expect("pattern");
    if !re.is_match(text) {
        return Err(tree(file, "no `constant clk_freq : integer := N;`"));
    }
    let freq = baud * u64::from(bit_cycles);
    Ok(re
        .replace(
            text,
            format!("${{1}}{freq}; -- jopcal: {bit_cycles} cycles per bit at {baud} baud"),
        )
        .into_owned())
}

fn make_wrapper(top_source: &Source, sources: &[Source], generics: &[(String, i64)]) -> Result<String, TreeBuildError> {
    let top_file = top_source.path.as_path();
    let t = vhdl::strip_comments(&top_source.text);
    let instance = |name: &str| -> Result<vhdl::Instance, TreeBuildError> {
        vhdl::instances(&t, name).into_iter().next().ok_or_else(|| {
            tree(
                top_file,
                format!("no instance of {name}: jopcal wraps tops made of jopcpu, scio and sc_mem_if"),
            )
        })
    };
    let (cpu, io_, mem) = (instance("jopcpu")?, instance("scio")?, instance("sc_mem_if")?);
    // The top's own entity: the one declared in its file.
    let lower = t.to_ascii_lowercase();
    let top_name = lower
        .split("entity ")
        .skip(1)
        .find_map(|r| {
            let mut w = r.split_whitespace();
            let n = w.next()?;
            (w.next() == Some("is")).then(|| n.to_string())
        })
        .ok_or_else(|| tree(top_file, "declares no entity"))?;
    let mut top = vhdl::entity(&t, &top_name)
        .map_err(|w| tree(top_file, w.to_string()))?
        .ok_or_else(|| tree(top_file, "declares no entity"))?;
    // A sweep's point: the wrapper declares the top's generics with these values.
    for (name, v) in generics {
        let decl = top
            .generics
            .iter_mut()
            .find(|d| d.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| tree(top_file, format!("entity {top_name} has no generic `{name}`")))?;
        decl.default = Some(v.to_string());
    }
    let find = |name: &str| -> Result<(vhdl::Entity, PathBuf), TreeBuildError> {
        for s in sources {
            let text = vhdl::strip_comments(&s.text);
            if let Some(e) = vhdl::entity(&text, name).map_err(|w| tree(&s.path, w.to_string()))? {
                return Ok((e, s.path.clone()));
            }
        }
        Err(tree(
            top_file,
            format!("instantiates {name}, which no file of the project declares"),
        ))
    };
    let ((ce, cf), (ie, iff), (me, mf)) = (find("jopcpu")?, find("scio")?, find("sc_mem_if")?);
    wrapper::generate(&wrapper::Parts {
        top: &top,
        cpu: (&cpu, &ce),
        io: (&io_, &ie),
        mem: (&mem, &me),
    })
    .map_err(|u| {
        // Named in the file that declares the entity.
        let file = [(&ce, &cf), (&ie, &iff), (&me, &mf)]
            .into_iter()
            .find(|(e, _)| e.name == u.entity)
            .map_or(top_file, |(_, f)| f.as_path());
        tree(file, format!("port `{}` of {}: {}", u.port, u.entity, u.why))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_step_names_the_vhdls_own_assertion() {
        // GHDL's words for a generic its VHDL refuses (cache.vhd of jop-devel/jop).
        let ghdl = "cache.vhd:101:9:(assertion error): Minimum M$ size is 2KB\n\
                    cache.vhd:101:9: error due to assertion failure\n  assert jpc_width>=11;\n";
        let e = run(
            "ghdl --synth",
            Command::new("sh").args(["-c", &format!("printf '{ghdl}' >&2; exit 1")]),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("cache.vhd:101:9:(assertion error): Minimum M$ size is 2KB"),
            "{e}"
        );
        let gcc = "warning: x\nbench.cpp:3:1: error: expected a semicolon\n";
        let e = run(
            "make",
            Command::new("sh").args(["-c", &format!("printf '{gcc}' >&2; exit 1")]),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("bench.cpp:3:1: error: expected a semicolon"), "{e}");
    }
}
