//! Progress for work that takes more than a second: an indicatif bar on a
//! terminal, one line per finished item otherwise (CI logs, pipes).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    bar: Option<ProgressBar>,
    stage: String,
}

impl Progress {
    pub fn new(stage: &str, len: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(len);
            b.set_style(
                ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            b.set_prefix(stage.to_string());
            b
        });
        Progress {
            bar,
            stage: stage.to_string(),
        }
    }

    /// Says what is being worked on now.
    pub fn working_on(&self, what: &str) {
        if let Some(b) = &self.bar {
            b.set_message(what.to_string());
        }
    }

    /// A long step begins: said at once, bar or not, so a log shows what
    /// the time after it went to.
    pub fn started(&self, what: &str) {
        match &self.bar {
            Some(b) => {
                b.set_message(what.to_string());
                b.println(format!("{:>10} {what} ...", self.stage));
            }
            None => eprintln!("{:>10} {what} ...", self.stage),
        }
    }

    /// One item finished; `line` is kept in the terminal scrollback / printed.
    pub fn finished(&self, line: &str) {
        match &self.bar {
            Some(b) => {
                b.println(format!("{:>10} {line}", self.stage));
                b.inc(1);
            }
            None => eprintln!("{:>10} {line}", self.stage),
        }
    }

    /// A line that is not an item (kept above the bar on a terminal).
    pub fn note(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(format!("     {line}")),
            None => eprintln!("     {line}"),
        }
    }

    /// A line of the verb's report, as given (kept above the bar on a terminal).
    pub fn say(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    pub fn done(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// The library's progress callbacks ([`jopcal_targets::Progress`]) shown as
/// [`Progress`]: one bar per stage, notes and report lines as lines. Shared
/// with the fit's worker threads, hence the lock.
#[derive(Default)]
pub struct Reporter {
    current: std::sync::Mutex<Option<Progress>>,
}

impl Reporter {
    fn with<T>(&self, f: impl FnOnce(&mut Option<Progress>) -> T) -> T {
        // A panic elsewhere while holding the lock leaves the bar as it was: still usable.
        let mut guard = self.current.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }
}

impl jopcal_targets::Progress for Reporter {
    fn begin(&self, stage: &str, len: u64) {
        if let Some(old) = self.with(|c| c.replace(Progress::new(stage, len))) {
            old.done();
        }
    }

    fn working_on(&self, what: &str) {
        self.with(|c| c.as_ref().map(|p| p.working_on(what)));
    }

    fn started(&self, what: &str) {
        self.with(|c| c.as_ref().map(|p| p.started(what)));
    }

    fn finished(&self, line: &str) {
        self.with(|c| c.as_ref().map(|p| p.finished(line)));
    }

    fn note(&self, line: &str) {
        self.with(|c| match c.as_ref() {
            Some(p) => p.note(line),
            None => eprintln!("     {line}"),
        });
    }

    fn end(&self) {
        if let Some(p) = self.with(Option::take) {
            p.done();
        }
    }

    fn say(&self, line: &str) {
        self.with(|c| match c.as_ref() {
            Some(p) => p.say(line),
            None => eprintln!("{line}"),
        });
    }
}
