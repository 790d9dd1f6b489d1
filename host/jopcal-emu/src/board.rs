//! The virtual board as a board program: an image arrives over the serial
//! protocol, is read as a class bundle, and runs; its UART output streams to
//! the line as it is printed; `JVM exit!` ends every run, as on JOP.

use crate::bundle::Bundle;
use crate::config::BoardConfig;
use crate::error::EmuError;
use crate::trace::{MethodRow, MethodTrace};
use crate::vm::{Exit, Trace, Vm};
use jopcal_link::peer::BoardProgram;
use jopcal_link::JopImage;
use std::io;
use std::sync::mpsc;

/// What one run did, for the board's own log and `--trace`.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub cycles: u64,
    pub exit: Result<Exit, EmuError>,
    pub wall: std::time::Duration,
    /// Per-method cycles and calls (when tracing).
    pub trace: Option<MethodTrace>,
    /// Of an image run: bytecodes executed since the runtime reset its
    /// statistics (before `main`), and the cycles the method cache added.
    pub image_counts: Option<(u64, u64)>,
    /// Of an image run: every read of the microsecond counter, in order,
    /// with the method that read it (named from the link map).
    pub clock_reads: Vec<(String, i32)>,
    /// Of an image run whose link map locates the collector: the heap at
    /// each read of the cycle counter.
    pub heap_reads: Vec<crate::image::HeapRead>,
}

/// Runs `bundle` on a fresh board; `uart` gets the output a line at a time.
/// `before_exit` sees the report before the final `JVM exit!` goes out, so
/// whatever it writes (a trace) exists when the host sees the run end.
pub fn run_bundle(
    bundle: &Bundle,
    cfg: &BoardConfig,
    trace: bool,
    uart: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    before_exit: &mut dyn FnMut(&RunReport) -> io::Result<()>,
) -> io::Result<RunReport> {
    let start = std::time::Instant::now();
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        let worker = s.spawn(move || {
            let mut vm = match Vm::new(&bundle.classes, cfg.clone()) {
                Ok(vm) => vm,
                Err(e) => {
                    let _ = tx.send(format!("virtual board error: {e}\n").into_bytes());
                    return (0, Err(e), None);
                }
            };
            if trace {
                vm.trace = Some(Trace::default());
            }
            let sink = tx.clone();
            vm.sink = Some(Box::new(move |b: &[u8]| {
                let _ = sink.send(b.to_vec());
            }));
            let exit = vm.run_main(&bundle.main_class);
            let tail = match &exit {
                Ok(Exit::Returned) | Ok(Exit::Exit(_)) => String::new(),
                Ok(Exit::Uncaught(name)) => format!("\nUncaught exception {name}\n"),
                Err(e) => format!("\nvirtual board error: {e}\n"),
            };
            vm.print_bytes(tail.as_bytes());
            vm.flush();
            let names: Vec<String> = (0..vm.methods.len() as u32).map(|m| vm.method_name(m)).collect();
            let t = vm.trace.take().map(|t| bundle_trace(names, t));
            (vm.cycles, exit, t)
        });
        for chunk in rx {
            uart(&chunk)?;
        }
        let (cycles, exit, trace) = worker
            .join()
            .map_err(|_| io::Error::other("the virtual board crashed"))?;
        let report = RunReport {
            cycles,
            exit,
            wall: start.elapsed(),
            trace,
            image_counts: None,
            clock_reads: Vec::new(),
            heap_reads: Vec::new(),
        };
        before_exit(&report)?;
        uart(b"JVM exit!\n")?;
        Ok(report)
    })
}

/// The board program: a downloaded class bundle runs on the class-file
/// interpreter, any other image is a JOP tree's linked image and runs as
/// JOP runs it ([`crate::image`]), both with the board's configuration.
pub struct EmuProgram {
    pub cfg: BoardConfig,
    /// The configuration of a JOP tree's images when it is not `cfg` (the
    /// tree's table, while `cfg` is the bundles' board).
    pub image_cfg: Option<BoardConfig>,
    /// Write each run's trace here (see [`write_trace`]).
    pub trace_dir: Option<std::path::PathBuf>,
    /// Write each image run's clock reads here (see [`write_clock_reads`]).
    pub clock_dir: Option<std::path::PathBuf>,
    /// Names of the runs' trace files, in download order (else `run<N>`).
    pub names: Vec<String>,
    /// Reports of the runs so far.
    pub reports: Vec<RunReport>,
    /// JOP images the board expects, with their names and link maps.
    pub known: KnownImages,
}

/// JOP images a board will be sent, recognised by their words when they
/// arrive: the name of each (for its trace file) and its link map (for the
/// method names of its trace).
#[derive(Debug, Default)]
pub struct KnownImages {
    by_words: std::collections::HashMap<u64, (String, Option<jopcal_jop::linkmap::LinkMap>)>,
}

impl KnownImages {
    fn key(image: &JopImage) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        image.words.hash(&mut h);
        h.finish()
    }

    pub fn add(&mut self, image: &JopImage, name: String, map: Option<jopcal_jop::linkmap::LinkMap>) {
        self.by_words.insert(Self::key(image), (name, map));
    }

    fn get(&self, image: &JopImage) -> Option<&(String, Option<jopcal_jop::linkmap::LinkMap>)> {
        self.by_words.get(&Self::key(image))
    }
}

impl BoardProgram for EmuProgram {
    fn run(&mut self, image: &JopImage, uart: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let k = self.reports.len() + 1;
        let known = self.known.get(image);
        let name = match known {
            Some((name, _)) => name.clone(),
            None => self.names.get(k - 1).cloned().unwrap_or_else(|| format!("run{k}")),
        };
        let prefix = self.trace_dir.as_ref().map(|d| d.join(&name));
        let clocks = self.clock_dir.as_ref().map(|d| d.join(format!("{name}.txt")));
        let heap = self.clock_dir.as_ref().map(|d| d.join(format!("{name}.heap.txt")));
        let mut keep_trace = |r: &RunReport| {
            if let Some(p) = &clocks {
                write_clock_reads(r, p)?;
            }
            if let Some(p) = &heap {
                write_heap_reads(&r.heap_reads, p)?;
            }
            match &prefix {
                Some(p) => {
                    if let Some(dir) = p.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    write_trace(r, p)
                }
                None => Ok(()),
            }
        };
        if !Bundle::is_bundle(image) {
            let cfg = self.image_cfg.as_ref().unwrap_or(&self.cfg);
            let map = known.and_then(|(_, m)| m.as_ref());
            let report = run_jop_image(image, cfg, prefix.is_some(), map, uart, &mut keep_trace)?;
            self.reports.push(report);
            return Ok(());
        }
        let bundle = match Bundle::from_image(image) {
            Ok(b) => b,
            Err(e) => return uart(format!("virtual board error: {e}\nJVM exit!\n").as_bytes()),
        };
        let report = run_bundle(&bundle, &self.cfg, prefix.is_some(), uart, &mut keep_trace)?;
        self.reports.push(report);
        Ok(())
    }
}

/// Runs a JOP tree's linked image on a fresh board, as [`run_bundle`] runs
/// a bundle: `uart` gets the output as it is printed, `before_exit` sees the
/// report (with per-method cycles named from `link_map` when `trace`)
/// before the image's closing `JVM exit!` goes out, and the line ends as
/// JOP's does (also after an error).
pub fn run_jop_image(
    image: &JopImage,
    cfg: &BoardConfig,
    trace: bool,
    link_map: Option<&jopcal_jop::linkmap::LinkMap>,
    uart: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    before_exit: &mut dyn FnMut(&RunReport) -> io::Result<()>,
) -> io::Result<RunReport> {
    let start = std::time::Instant::now();
    // Each chunk goes out when the next arrives: the last one holds the
    // image's `JVM exit!`, sent only after `before_exit`.
    let mut held: Vec<u8> = Vec::new();
    let mut line_error = None;
    let watch = link_map.and_then(|m| crate::image::HeapWatch::from_statics(&m.statics));
    let run = crate::image::run_image_watching(image, cfg, trace, None, watch, &mut |b| {
        if line_error.is_none() && !held.is_empty() {
            line_error = uart(&held).err();
        }
        held = b.to_vec();
    });
    if let Some(e) = line_error {
        return Err(e);
    }
    let report = match run {
        Ok(r) => {
            let name = crate::image::method_names(link_map);
            RunReport {
                cycles: r.cycles,
                exit: Ok(Exit::Returned),
                wall: start.elapsed(),
                clock_reads: r.clock_reads.iter().map(|&(m, v)| (name(m), v)).collect(),
                trace: r.by_method.map(|by| MethodTrace::from_tallies(&by, name)),
                image_counts: Some((r.bytecodes, r.cache_cycles)),
                heap_reads: r.heap_reads,
            }
        }
        Err(e) => {
            uart(&held)?;
            held = format!("\nvirtual board error: {e}\nJVM exit!").into_bytes();
            RunReport {
                cycles: 0,
                exit: Err(e),
                wall: start.elapsed(),
                trace: None,
                image_counts: None,
                clock_reads: Vec::new(),
                heap_reads: Vec::new(),
            }
        }
    };
    before_exit(&report)?;
    held.extend_from_slice(b"\r\n");
    uart(&held)?;
    Ok(report)
}

/// A class bundle's trace: the interpreter's per-method counts, named.
fn bundle_trace(names: Vec<String>, t: Trace) -> MethodTrace {
    MethodTrace {
        rows: names
            .into_iter()
            .enumerate()
            .map(|(i, name)| MethodRow {
                name,
                calls: t.calls_by_method.get(i).copied().unwrap_or(0),
                cycles: t.cycles_by_method.get(i).copied().unwrap_or(0),
                bytecodes: None,
                cache_loads: None,
            })
            .collect(),
        calls: t.events.iter().map(|(enter, m)| (*enter, *m as usize)).collect(),
    }
}

/// Writes a run's heap reads to `path`, a line each: the counter's value,
/// the free words, the free handles, the semi-space's words and the handles
/// (nothing when the run read none). See [`parse_heap_reads`].
pub fn write_heap_reads(reads: &[crate::image::HeapRead], path: &std::path::Path) -> io::Result<()> {
    if reads.is_empty() {
        return Ok(());
    }
    let text: String = reads
        .iter()
        .map(|h| {
            format!(
                "{} {} {} {} {}\n",
                h.counter, h.free_words, h.free_handles, h.semi_words, h.handles
            )
        })
        .collect();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// A line of a heap-reads file that is not five numbers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct HeapReadsError {
    pub line: usize,
    pub message: String,
}

/// Reads what [`write_heap_reads`] wrote; an error names the line.
pub fn parse_heap_reads(text: &str) -> Result<Vec<crate::image::HeapRead>, HeapReadsError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Vec<u32> = l.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(
                |e: std::num::ParseIntError| HeapReadsError {
                    line: i + 1,
                    message: e.to_string(),
                },
            )?;
            match v[..] {
                [counter, free_words, free_handles, semi_words, handles] => Ok(crate::image::HeapRead {
                    counter,
                    free_words,
                    free_handles,
                    semi_words,
                    handles,
                }),
                _ => Err(HeapReadsError {
                    line: i + 1,
                    message: format!("expected 5 numbers, found {}", v.len()),
                }),
            }
        })
        .collect()
}

/// Writes a run's clock reads to `path`, a line each: the value, then the
/// method that read it (nothing when the run read no clock). A host run of
/// the same program reads the same values where the same methods read them.
pub fn write_clock_reads(report: &RunReport, path: &std::path::Path) -> io::Result<()> {
    if report.clock_reads.is_empty() {
        return Ok(());
    }
    let text: String = report.clock_reads.iter().map(|(m, v)| format!("{v} {m}\n")).collect();
    jopcal_measure::atomic::write_atomic(path, text.as_bytes())
}

/// Writes a run's trace (see [`crate::trace::write_trace`]).
pub fn write_trace(report: &RunReport, prefix: &std::path::Path) -> io::Result<()> {
    match &report.trace {
        Some(t) => crate::trace::write_trace(t, prefix),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::machine::heap::tests::read;

    #[test]
    fn heap_reads_are_written_and_read_back_and_a_bad_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("B.heap.txt");
        let reads = [read(100, 90), read(150, 80)];
        write_heap_reads(&reads, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(parse_heap_reads(&text).unwrap(), reads);
        let e = parse_heap_reads("1 2 3 4 5\n1 2 x 4 5\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_heap_reads("1 2 3\n").unwrap_err();
        assert_eq!(e.to_string(), "line 1: expected 5 numbers, found 3");
    }
}
