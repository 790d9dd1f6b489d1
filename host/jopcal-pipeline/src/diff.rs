//! `jopcal diff`: one image on two targets, compared bytecode by bytecode.
//!
//! Each side runs the image and hands over its bytecode event stream
//! ([`jopcal_measure::events`]): the virtual board from its interpreter, the
//! Verilator bench from its trace taps. The streams are compared in lockstep
//! as they arrive: while both execute the same bytecode of the same method,
//! only their cycles may differ, and the first bytecode whose cycles differ
//! is the finding (with every kind of difference counted by opcode and by
//! method); where the two execute different bytecodes, the comparison stops
//! there and says so, since what follows is no longer the same program's
//! run. The outputs are compared too: two runs that print differently are
//! named as such, never reported as a cycle difference.

use crate::Session;
use anyhow::{anyhow, bail, Context, Result};
use jopcal_emu::BoardConfig;
use jopcal_jop::linkmap::LinkMap;
use jopcal_link::JopImage;
use jopcal_measure::children::InGroup;
use jopcal_measure::events::{BytecodeEvent, EndReason, Event, EventReader, HIT, MISS};
use jopcal_report::number::thousands;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::Duration;

/// One side of a comparison.
#[derive(Debug, Clone)]
pub enum Side {
    /// The virtual board with this configuration.
    Emu { cfg: Box<BoardConfig>, label: String },
    /// The Verilator bench built in `sim` (by `sim build`), with extra bench options.
    Verilator { sim: PathBuf, args: Vec<String> },
}

impl Side {
    fn label(&self) -> String {
        match self {
            Side::Emu { label, .. } => label.clone(),
            Side::Verilator { sim, .. } => format!("verilator ({})", sim.display()),
        }
    }
}

/// What to compare.
#[derive(Debug, Clone)]
pub struct DiffOptions {
    pub image: PathBuf,
    /// The image's link map (default: `<image>.link.txt` beside it, if there).
    pub link_map: Option<PathBuf>,
    pub sides: [Side; 2],
    /// Wall-clock limit of each side's run.
    pub timeout: Duration,
    /// Keep both event streams here (`side1.jopevents`, `side2.jopevents`), as they were compared.
    pub keep: Option<PathBuf>,
}

/// Where the two runs first took different cycles for the same bytecode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstDifference {
    /// Its position: bytecodes before it, and cycles since each side's first fetch.
    pub index: u64,
    pub at_cycle: [u64; 2],
    pub events: [BytecodeEvent; 2],
}

/// Where the two runs stopped executing the same bytecodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub index: u64,
    pub at_cycle: [u64; 2],
    /// What each side ran there (`None`: its stream had ended).
    pub events: [Option<BytecodeEvent>; 2],
}

/// The result of comparing two event streams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Bytecodes both ran, in lockstep.
    pub compared: u64,
    /// Their cycles on each side.
    pub cycles: [u64; 2],
    pub first: Option<FirstDifference>,
    /// The first bytecode that left another value on top of the stack: what
    /// each computed parts there (the cycles may still agree).
    pub first_value: Option<FirstDifference>,
    pub divergence: Option<Divergence>,
    /// Differing bytecodes by (opcode, cycles of side 1 minus side 0): how many.
    pub by_opcode: BTreeMap<(u8, i64), u64>,
    /// Per method (code word address) with a difference: cycles on each side over the compared bytecodes.
    pub by_method: BTreeMap<u32, [u64; 2]>,
    /// How each stream ended (`None`: it just stopped).
    pub ends: [Option<EndReason>; 2],
}

impl Comparison {
    /// Whether the two runs executed the same bytecodes in the same cycles and ended alike.
    pub fn equal(&self) -> bool {
        self.first.is_none()
            && self.first_value.is_none()
            && self.divergence.is_none()
            && same_end(&self.ends[0], &self.ends[1])
    }
}

/// Two streams end alike: for the program's end and for a stop, by the
/// reason; for a stack overflow, in the same bytecode (where in it the
/// pointer reached the mark only the processor knows).
fn same_end(a: &Option<EndReason>, b: &Option<EndReason>) -> bool {
    match (a, b) {
        (Some(EndReason::StackOverflow { at: x }), Some(EndReason::StackOverflow { at: y })) => {
            (x.method, x.pc, x.op) == (y.method, y.pc, y.op)
        }
        _ => a == b,
    }
}

/// Compares two event streams in lockstep.
pub fn compare<'a>(a: impl IntoIterator<Item = Event> + 'a, b: impl IntoIterator<Item = Event> + 'a) -> Comparison {
    let mut streams: [Box<dyn Iterator<Item = Event>>; 2] = [Box::new(a.into_iter()), Box::new(b.into_iter())];
    let mut c = Comparison::default();
    let mut since = [0u64; 2];
    let mut method_cycles: BTreeMap<u32, [u64; 2]> = BTreeMap::new();
    let mut differing = std::collections::BTreeSet::new();
    loop {
        let mut next = [None, None];
        for k in 0..2 {
            next[k] = loop {
                match streams[k].next() {
                    Some(Event::Start { .. }) => continue,
                    Some(Event::Bytecode(e)) => break Some(e),
                    Some(Event::End(r)) => {
                        c.ends[k] = Some(r);
                        break None;
                    }
                    None => break None,
                }
            };
        }
        match next {
            [None, None] => break,
            [Some(x), Some(y)] if (x.method, x.pc, x.op) == (y.method, y.pc, y.op) => {
                let m = method_cycles.entry(x.method).or_default();
                m[0] += u64::from(x.cycles);
                m[1] += u64::from(y.cycles);
                if x.cycles != y.cycles || x.flags != y.flags {
                    differing.insert(x.method);
                    if x.cycles != y.cycles {
                        *c.by_opcode
                            .entry((x.op, i64::from(y.cycles) - i64::from(x.cycles)))
                            .or_default() += 1;
                    }
                    if c.first.is_none() {
                        c.first = Some(FirstDifference {
                            index: c.compared,
                            at_cycle: since,
                            events: [x, y],
                        });
                    }
                }
                if x.tos != y.tos && c.first_value.is_none() {
                    c.first_value = Some(FirstDifference {
                        index: c.compared,
                        at_cycle: since,
                        events: [x, y],
                    });
                }
                c.compared += 1;
                c.cycles[0] += u64::from(x.cycles);
                c.cycles[1] += u64::from(y.cycles);
                since[0] += u64::from(x.cycles);
                since[1] += u64::from(y.cycles);
            }
            [x, y] => {
                c.divergence = Some(Divergence {
                    index: c.compared,
                    at_cycle: since,
                    events: [x, y],
                });
                // Each stream's end, if it is near, still says how it ended.
                for (k, s) in streams.iter_mut().enumerate() {
                    if c.ends[k].is_none() && next[k].is_some() {
                        for e in s.by_ref().take(1 << 20) {
                            if let Event::End(r) = e {
                                c.ends[k] = Some(r);
                            }
                        }
                    }
                }
                break;
            }
        }
    }
    c.by_method = method_cycles
        .into_iter()
        .filter(|(m, _)| differing.contains(m))
        .collect();
    c
}

/// What a whole diff found: the comparison and both outputs.
#[derive(Debug, Clone)]
pub struct DiffReport {
    pub image: PathBuf,
    pub labels: [String; 2],
    pub comparison: Comparison,
    pub outputs: [Vec<u8>; 2],
    /// Each side's own closing words (its cycles, or why it stopped).
    pub notes: [String; 2],
    /// The report as lines for people.
    pub lines: Vec<String>,
}

impl DiffReport {
    /// Same bytecodes, same cycles, same output.
    pub fn equal(&self) -> bool {
        self.comparison.equal() && self.outputs[0] == self.outputs[1]
    }
}

/// Hands events on in chunks (one channel message per few thousand events).
struct Chunker {
    buf: Vec<Event>,
    tx: SyncSender<Vec<Event>>,
}

impl Chunker {
    fn push(&mut self, e: Event) {
        self.buf.push(e);
        if self.buf.len() >= 4096 {
            let _ = self.tx.send(std::mem::replace(&mut self.buf, Vec::with_capacity(4096)));
        }
    }
}

impl Drop for Chunker {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let _ = self.tx.send(std::mem::take(&mut self.buf));
        }
    }
}

/// A side running: its events as they come, and at the end its output and closing note.
struct Running {
    events: Box<dyn Iterator<Item = Vec<Event>> + Send>,
    done: std::thread::JoinHandle<Result<(Vec<u8>, String)>>,
}

impl Running {
    fn new(rx: Receiver<Vec<Event>>, done: std::thread::JoinHandle<Result<(Vec<u8>, String)>>) -> Running {
        Running {
            events: Box::new(rx.into_iter()),
            done,
        }
    }

    /// The cycle counter at the side's first fetch (its first record), read ahead.
    fn start_cycle(&mut self) -> Option<u32> {
        let first = self.events.next()?;
        let cycle = first.iter().find_map(|e| match e {
            Event::Start { cycle } => Some(*cycle),
            _ => None,
        });
        let rest = std::mem::replace(&mut self.events, Box::new(std::iter::empty()));
        self.events = Box::new(std::iter::once(first).chain(rest));
        cycle
    }
}

fn run_emu(image: JopImage, cfg: BoardConfig) -> Running {
    let (tx, rx) = sync_channel::<Vec<Event>>(64);
    let done = std::thread::spawn(move || {
        let mut out = Vec::new();
        let end_tx = tx.clone();
        let mut chunks = Chunker {
            buf: vec![Event::Start { cycle: 0 }],
            tx,
        };
        let sink: jopcal_emu::image::EventSink = Box::new(move |e| chunks.push(Event::Bytecode(e)));
        let run = jopcal_emu::image::run_image(&image, &cfg, false, Some(sink), &mut |b| out.extend_from_slice(b));
        let (end, note) = match &run {
            Ok(r) => (EndReason::Exit, format!("{} cycles", thousands(r.cycles as f64))),
            Err(e @ jopcal_emu::EmuError::StackOverflow { method, pc, op, .. }) => (
                EndReason::StackOverflow {
                    at: BytecodeEvent {
                        method: *method,
                        pc: *pc,
                        op: *op,
                        flags: 0,
                        cycles: 0,
                        tos: 0,
                    },
                },
                e.to_string(),
            ),
            Err(e) => (EndReason::Stopped, e.to_string()),
        };
        let _ = end_tx.send(vec![Event::End(end)]);
        Ok((out, note))
    });
    Running::new(rx, done)
}

fn run_bench(image: &Path, sim: &Path, extra: &[String], timeout: Duration, scratch: &Path) -> Result<Running> {
    let bin = jopcal_targets::verilator::bench_binary(sim).map_err(|e| anyhow!(e))?;
    let microcode = std::fs::read_to_string(sim.join("microcode")).unwrap_or_default();
    if microcode.trim() != "simulation" {
        bail!(
            "{}: diff runs the image preloaded; build the bench with `jopcal --jop-home DIR sim build --preload --out {}`",
            sim.display(),
            sim.display()
        );
    }
    let fifo = scratch.join("events");
    jopcal_sim::make_fifo(&fifo).with_context(|| format!("making the pipe {}", fifo.display()))?;
    let mut cmd = std::process::Command::new(&bin);
    cmd.arg("--stdout")
        .args(jopcal_targets::verilator::build_args(sim))
        .args(extra)
        .arg("--preload")
        .arg(image)
        .arg("--stop-at-exit")
        .arg("--events")
        .arg(&fifo)
        .arg("--timeout")
        .arg(timeout.as_secs().max(1).to_string())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd
        .spawn_in_group()
        .with_context(|| format!("starting {}", bin.display()))?;
    let (tx, rx) = sync_channel::<Vec<Event>>(64);
    let reader_fifo = fifo.clone();
    let reader = std::thread::spawn(move || -> Result<()> {
        let f = std::fs::File::open(&reader_fifo)?;
        let mut r = EventReader::new(std::io::BufReader::with_capacity(1 << 20, f)).map_err(|e| anyhow!(e))?;
        let mut chunks = Chunker {
            buf: Vec::with_capacity(4096),
            tx,
        };
        while let Some(e) = r.next_event().map_err(|e| anyhow!("{}: {e}", reader_fifo.display()))? {
            chunks.push(e);
        }
        Ok(())
    });
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut v);
        v
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let stop = jopcal_sim::stop_on_interrupt(child.id());
    let done = std::thread::spawn(move || -> Result<(Vec<u8>, String)> {
        let status = child.wait()?;
        drop(stop);
        // A bench that never opened the pipe must not leave its reader waiting.
        jopcal_sim::release_fifo(&fifo);
        let read = reader.join().map_err(|_| anyhow!("the event reader crashed"))?;
        let out = out_thread.join().unwrap_or_default();
        let err = err_thread.join().unwrap_or_default();
        let last = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim_start_matches("jopcal-bench: ")
            .to_string();
        read?;
        let note = if status.success() || status.code() == Some(4) {
            last
        } else {
            format!("{last} (exit status {status})")
        };
        Ok((out, note))
    });
    Ok(Running::new(rx, done))
}

/// Runs the image on both sides and compares them.
/// A target `jopcal diff` runs the image on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffTarget {
    /// The virtual board.
    Emu,
    /// The Verilator bench (--sim DIR, built with --preload).
    Verilator,
}

/// What `jopcal diff` runs, on which two targets (the verb's arguments as they are).
#[derive(Debug, Clone, clap::Args)]
pub struct DiffRequest {
    /// A JOP tree's linked image; its link map beside it (IMAGE.jop.link.txt) names the methods.
    #[arg(value_name = "IMAGE.jop")]
    pub image: PathBuf,
    /// The two sides (default: emu, then verilator).
    #[arg(long = "target", value_enum, value_name = "TARGET")]
    pub targets: Vec<DiffTarget>,
    /// The image's link map, if not beside it.
    #[arg(long, value_name = "FILE")]
    pub link_map: Option<PathBuf>,
    /// The bench for verilator (`jopcal sim build --preload`).
    #[arg(long, value_name = "DIR")]
    pub sim: Option<PathBuf>,
    /// Options for the bench (repeatable).
    #[arg(long = "sim-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sim_args: Vec<String>,
    /// The virtual board's timing table (default: the processor's, derived
    /// from the tree's microcode for the bench's top).
    #[arg(long, value_name = "FILE")]
    pub emu_config: Option<PathBuf>,
    /// The virtual board's timing: processor (the RTL's) or jopsim (the tree's JopSim).
    #[arg(long, default_value = "processor")]
    pub emu_timing: crate::processor::EmuTiming,
    /// Override one of its parameters (repeatable).
    #[arg(long = "emu-param", value_name = "NAME=VALUE")]
    pub emu_params: Vec<String>,
    /// Seconds each side may run.
    #[arg(long, default_value_t = 3600)]
    pub timeout: u64,
    /// Keep both bytecode event streams in DIR (side1.jopevents, side2.jopevents; docs/formats.md).
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
}

/// The request's two sides made ready, then [`diff`].
pub fn diff_request(s: Session, a: &DiffRequest) -> Result<DiffReport> {
    let targets = match a.targets.as_slice() {
        [] => vec![DiffTarget::Emu, DiffTarget::Verilator],
        [x, y] => vec![*x, *y],
        _ => bail!("--target: give two targets, or none for emu against verilator"),
    };
    let mut sides = Vec::new();
    for t in targets {
        sides.push(match t {
            DiffTarget::Emu => {
                let (cfg, label) = emu_side(s, a)?;
                Side::Emu {
                    cfg: Box::new(cfg),
                    label,
                }
            }
            DiffTarget::Verilator => Side::Verilator {
                sim: a.sim.clone().ok_or_else(|| {
                    anyhow!("--target verilator needs --sim DIR (a bench from `jopcal sim build --preload`)")
                })?,
                args: a.sim_args.clone(),
            },
        });
    }
    let opts = DiffOptions {
        image: a.image.clone(),
        link_map: a.link_map.clone(),
        sides: sides.try_into().map_err(|_| anyhow!("two sides"))?,
        timeout: Duration::from_secs(a.timeout),
        keep: a.keep.clone(),
    };
    diff(s, &opts)
}

/// The virtual board: the bench's processor (or the tree's default top),
/// JopSim's timing when asked, or the table given.
fn emu_side(s: Session, a: &DiffRequest) -> Result<(BoardConfig, String)> {
    use crate::processor::{image_board, EmuTiming, ImageBoard};
    let (cfg, _) = image_board(
        s,
        &ImageBoard {
            timing: a.emu_timing,
            config: a.emu_config.as_deref(),
            top: None,
            generics: &[],
            sim: a.sim.as_deref(),
            params: &a.emu_params,
        },
    )?;
    let label = match (a.emu_config.as_deref(), a.emu_timing) {
        (Some(p), _) => format!("emu ({})", p.file_name().unwrap_or_default().to_string_lossy()),
        (None, EmuTiming::Jopsim) => "emu (jopsim)".into(),
        (None, EmuTiming::Processor) => "emu (processor)".into(),
    };
    Ok((cfg, label))
}

pub fn diff(session: Session, o: &DiffOptions) -> Result<DiffReport> {
    let image = JopImage::load_checked(&o.image, None).map_err(|e| anyhow!(e))?;
    let map_path = o
        .link_map
        .clone()
        .unwrap_or_else(|| jopcal_jop::linkmap::beside(&o.image));
    let link_map = match std::fs::read_to_string(&map_path) {
        Ok(t) => Some(LinkMap::parse(&t).map_err(|e| anyhow!("{}:{e}", map_path.display()))?),
        Err(_) if o.link_map.is_none() => None,
        Err(e) => bail!("{}: {e}", map_path.display()),
    };
    let labels = [o.sides[0].label(), o.sides[1].label()];
    session.say(&format!(
        "diff {}: {} against {}",
        o.image.display(),
        labels[0],
        labels[1]
    ));
    let scratch = tempfile::tempdir().context("a scratch directory")?;
    // The benches first: a virtual board as the processor starts its
    // counter where the bench's first fetch was.
    let mut running: Vec<Option<Running>> = vec![None, None];
    let mut start = None;
    for (k, side) in o.sides.iter().enumerate() {
        if let Side::Verilator { sim, args } = side {
            let dir = scratch.path().join(format!("side{k}"));
            std::fs::create_dir_all(&dir)?;
            let mut r = run_bench(&o.image, sim, args, o.timeout, &dir)?;
            start = start.or(r.start_cycle());
            running[k] = Some(r);
        }
    }
    for (k, side) in o.sides.iter().enumerate() {
        if let Side::Emu { cfg, .. } = side {
            let mut cfg = (**cfg).clone();
            if let (Some(p), Some(c)) = (cfg.processor.as_ref(), start) {
                let mut p = (**p).clone();
                p.start_cycle = u64::from(c);
                cfg.processor = Some(std::sync::Arc::new(p));
            }
            running[k] = Some(run_emu(image.clone(), cfg));
        }
    }
    let running: Vec<Running> = running.into_iter().flatten().collect();
    let [a, b]: [Running; 2] = running.try_into().map_err(|_| anyhow!("two sides"))?;
    // The receivers go with the comparison: a side still sending after a
    // divergence then stops waiting and finishes.
    let keep = |k: usize| -> Result<Option<jopcal_measure::events::EventWriter<std::io::BufWriter<std::fs::File>>>> {
        let Some(dir) = &o.keep else { return Ok(None) };
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("side{}.jopevents", k + 1));
        let f = std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?;
        Ok(Some(jopcal_measure::events::EventWriter::new(
            std::io::BufWriter::new(f),
        )?))
    };
    let (mut ka, mut kb) = (keep(0)?, keep(1)?);
    let tee = |w: &mut Option<jopcal_measure::events::EventWriter<std::io::BufWriter<std::fs::File>>>, e: &Event| {
        if let Some(w) = w.as_mut() {
            let _ = w.write(e);
        }
    };
    let comparison = compare(
        a.events.flatten().inspect(|e| tee(&mut ka, e)),
        b.events.flatten().inspect(|e| tee(&mut kb, e)),
    );
    drop((ka, kb));
    let (out_a, note_a) = a.done.join().map_err(|_| anyhow!("{} crashed", labels[0]))??;
    let (out_b, note_b) = b.done.join().map_err(|_| anyhow!("{} crashed", labels[1]))??;
    // Both runs end where the program wrote `JVM exit!` (a processor goes
    // on running, and printing, after it): compare the outputs up to there.
    let (out_a, out_b) = (up_to_exit(out_a), up_to_exit(out_b));
    let name = |addr: u32| method_name(link_map.as_ref(), addr);
    let mut report = DiffReport {
        image: o.image.clone(),
        labels,
        comparison,
        outputs: [out_a, out_b],
        notes: [note_a, note_b],
        lines: Vec::new(),
    };
    report.lines = describe(&report, &name);
    if let Some(m) = link_map.as_ref() {
        let unnamed: Vec<u32> = report
            .comparison
            .by_method
            .keys()
            .copied()
            .filter(|a| !m.methods.iter().any(|(_, v)| v == a))
            .collect();
        if let Some(a) = unnamed.first() {
            bail!(
                "{}: its link map {} names no method at code word {a} (an image and a link map of different builds?)",
                o.image.display(),
                map_path.display()
            );
        }
    }
    Ok(report)
}

/// The output up to and with the first `JVM exit!`.
fn up_to_exit(mut out: Vec<u8>) -> Vec<u8> {
    const EXIT: &[u8] = b"JVM exit!";
    if let Some(at) = out.windows(EXIT.len()).position(|w| w == EXIT) {
        out.truncate(at + EXIT.len());
    }
    out
}

/// A method's name from the link map, or its code address.
fn method_name(map: Option<&LinkMap>, addr: u32) -> String {
    map.and_then(|m| m.methods.iter().find(|(_, a)| *a == addr).map(|(n, _)| n.clone()))
        .unwrap_or_else(|| format!("code at word {addr}"))
}

fn bytecode(e: &BytecodeEvent, name: &dyn Fn(u32) -> String) -> String {
    format!(
        "{} bytecode index {} ({})",
        name(e.method),
        e.pc,
        jopcal_timing::jop::any_opcode_name(e.op)
    )
}

fn cache_word(flags: u8) -> &'static str {
    if flags & MISS != 0 {
        "a method-cache miss"
    } else if flags & HIT != 0 {
        "a method-cache hit"
    } else {
        "no method entry"
    }
}

/// The first differing line of two outputs (1-based) and the two lines (a
/// line one output lacks is empty); where the bytes differ and no line does
/// but for trailing blanks, the last line.
fn first_output_difference(a: &[u8], b: &[u8]) -> Option<(usize, String, String)> {
    if a == b {
        return None;
    }
    let (ta, tb) = (String::from_utf8_lossy(a), String::from_utf8_lossy(b));
    let (la, lb): (Vec<&str>, Vec<&str>) = (ta.lines().collect(), tb.lines().collect());
    let owned = |l: Option<&str>| l.unwrap_or("").to_string();
    match jopcal_measure::transcript::first_difference(&la, &lb) {
        Some((line, x, y)) => Some((line, owned(x), owned(y))),
        None => {
            let n = la.len().max(lb.len());
            let last = n.checked_sub(1)?;
            Some((n, owned(la.get(last).copied()), owned(lb.get(last).copied())))
        }
    }
}

fn end_word(e: &Option<EndReason>, name: &dyn Fn(u32) -> String) -> String {
    match e {
        Some(EndReason::Exit) => "the program ended (JVM exit!)".into(),
        Some(EndReason::StackOverflow { at }) => format!("the stack overflowed in {}", bytecode(at, name)),
        Some(EndReason::Stopped) => "the run was stopped before the program ended".into(),
        None => "the trace ended without an end record".into(),
    }
}

/// The report in lines.
fn describe(r: &DiffReport, name: &dyn Fn(u32) -> String) -> Vec<String> {
    let c = &r.comparison;
    let [la, lb] = &r.labels;
    let mut lines = Vec::new();
    lines.push(format!(
        "{}: {} bytecodes compared; their cycles: {} {}, {} {}",
        r.image.display(),
        thousands(c.compared as f64),
        la,
        thousands(c.cycles[0] as f64),
        lb,
        thousands(c.cycles[1] as f64)
    ));
    match first_output_difference(&r.outputs[0], &r.outputs[1]) {
        None => lines.push(format!("outputs: the same ({} bytes)", r.outputs[0].len())),
        Some((line, x, y)) => lines.push(format!(
            "outputs differ at line {line}: {la} `{}`, {lb} `{}`",
            x.trim_end(),
            y.trim_end()
        )),
    }
    if let Some(f) = &c.first {
        let [x, y] = &f.events;
        let mut l = format!(
            "first difference: bytecode {} ({} cycles after the first fetch): {}: {la} {} cycles, {lb} {}",
            thousands((f.index + 1) as f64),
            thousands(f.at_cycle[0] as f64),
            bytecode(x, name),
            x.cycles,
            y.cycles
        );
        if x.flags != y.flags {
            l.push_str(&format!(
                " ({la} after {}, {lb} after {})",
                cache_word(x.flags),
                cache_word(y.flags)
            ));
        }
        lines.push(l);
        let mut kinds: Vec<(&(u8, i64), &u64)> = c.by_opcode.iter().collect();
        kinds.sort_by_key(|(k, n)| (std::cmp::Reverse(**n * k.1.unsigned_abs()), k.0));
        for ((op, d), n) in kinds.iter().take(12) {
            lines.push(format!(
                "  {} x {}: {lb} {:+} cycles each",
                thousands(**n as f64),
                jopcal_timing::jop::any_opcode_name(*op),
                d
            ));
        }
        let mut methods: Vec<(&u32, &[u64; 2])> = c.by_method.iter().collect();
        methods.sort_by_key(|(_, v)| std::cmp::Reverse(v[0].abs_diff(v[1])));
        for (m, v) in methods.iter().take(12) {
            lines.push(format!(
                "  method {}: {la} {}, {lb} {} cycles ({:+})",
                name(**m),
                thousands(v[0] as f64),
                thousands(v[1] as f64),
                v[1] as i64 - v[0] as i64
            ));
        }
    }
    if let Some(f) = &c.first_value {
        let [x, y] = &f.events;
        lines.push(format!(
            "first difference in value: bytecode {} ({} cycles after the first fetch): {}: the top of the stack after it is {la} {} ({:#x}), {lb} {} ({:#x})",
            thousands((f.index + 1) as f64),
            thousands(f.at_cycle[0] as f64),
            bytecode(x, name),
            x.tos,
            x.tos,
            y.tos,
            y.tos
        ));
    }
    if let Some(d) = &c.divergence {
        let what = |e: &Option<BytecodeEvent>| match e {
            Some(e) => bytecode(e, name),
            None => "nothing (its trace had ended)".into(),
        };
        lines.push(format!(
            "the runs part at bytecode {} ({la} cycle {}, {lb} cycle {}): {la} runs {}, {lb} runs {}; nothing after it is compared",
            thousands((d.index + 1) as f64),
            thousands(d.at_cycle[0] as f64),
            thousands(d.at_cycle[1] as f64),
            what(&d.events[0]),
            what(&d.events[1])
        ));
    }
    for k in 0..2 {
        lines.push(format!(
            "{}: {}; {}",
            r.labels[k],
            end_word(&c.ends[k], name),
            r.notes[k]
        ));
    }
    lines.push(if r.equal() {
        "the same: every bytecode took the same cycles, and the outputs agree".into()
    } else {
        "different".into()
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bc(method: u32, pc: u16, op: u8, cycles: u32) -> Event {
        Event::Bytecode(BytecodeEvent {
            method,
            pc,
            op,
            flags: 0,
            cycles,
            tos: 0,
        })
    }

    #[test]
    fn equal_streams_compare_equal() {
        let s = vec![
            Event::Start { cycle: 5 },
            bc(10, 0, 4, 1),
            bc(10, 1, 177, 21),
            Event::End(EndReason::Exit),
        ];
        let c = compare(s.clone(), s);
        assert!(c.equal());
        assert_eq!((c.compared, c.cycles), (2, [22, 22]));
    }

    #[test]
    fn the_first_cycle_difference_is_found_and_counted_by_opcode_and_method() {
        let a = vec![
            bc(10, 0, 4, 1),
            bc(10, 1, 194, 19),
            bc(20, 0, 194, 19),
            bc(20, 1, 177, 21),
        ];
        let b = vec![
            bc(10, 0, 4, 1),
            bc(10, 1, 194, 26),
            bc(20, 0, 194, 26),
            bc(20, 1, 177, 21),
        ];
        let c = compare(a, b);
        let f = c.first.unwrap();
        assert_eq!((f.index, f.at_cycle), (1, [1, 1]));
        assert_eq!(c.by_opcode.get(&(194, 7)), Some(&2));
        assert_eq!(c.by_method.get(&10), Some(&[20, 27]));
        assert_eq!(c.by_method.get(&20), Some(&[40, 47]));
        assert!(c.divergence.is_none());
    }

    #[test]
    fn different_bytecodes_end_the_comparison_as_a_divergence_not_a_cycle_difference() {
        let a = vec![bc(10, 0, 4, 1), bc(10, 1, 153, 4), bc(10, 9, 4, 1)];
        let b = vec![bc(10, 0, 4, 1), bc(10, 1, 153, 4), bc(10, 4, 4, 1)];
        let c = compare(a, b);
        assert!(c.first.is_none());
        let d = c.divergence.unwrap();
        assert_eq!(d.index, 2);
        assert_eq!(d.events[0].unwrap().pc, 9);
        // One side ending early is a divergence too, with how it ended.
        let c = compare(
            vec![bc(1, 0, 4, 1), Event::End(EndReason::Stopped)],
            vec![bc(1, 0, 4, 1), bc(1, 1, 4, 1)],
        );
        assert_eq!(c.ends[0], Some(EndReason::Stopped));
        assert!(c.divergence.unwrap().events[0].is_none());
    }

    #[test]
    fn outputs_end_at_the_programs_exit() {
        assert_eq!(up_to_exit(b"x\r\nJVM exit!\r\n".to_vec()), b"x\r\nJVM exit!".to_vec());
        assert_eq!(up_to_exit(b"no exit".to_vec()), b"no exit".to_vec());
    }

    #[test]
    fn outputs_are_compared_line_by_line() {
        assert_eq!(first_output_difference(b"a\nb\n", b"a\nb\n"), None);
        assert_eq!(
            first_output_difference(b"a\nb\nc\n", b"a\nx\nc\n"),
            Some((2, "b".into(), "x".into()))
        );
        assert_eq!(
            first_output_difference(b"a\n", b"a\nmore\n"),
            Some((2, "".into(), "more".into()))
        );
    }
}
