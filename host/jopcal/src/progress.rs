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

    pub fn done(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// The library's progress callbacks ([`jopcal_targets::Progress`]) shown as
/// [`Progress`]: one bar per stage, notes as lines.
#[derive(Default)]
pub struct Reporter {
    current: std::cell::RefCell<Option<Progress>>,
}

impl jopcal_targets::Progress for Reporter {
    fn begin(&self, stage: &str, len: u64) {
        if let Some(old) = self.current.replace(Some(Progress::new(stage, len))) {
            old.done();
        }
    }

    fn working_on(&self, what: &str) {
        if let Some(p) = self.current.borrow().as_ref() {
            p.working_on(what);
        }
    }

    fn finished(&self, line: &str) {
        if let Some(p) = self.current.borrow().as_ref() {
            p.finished(line);
        }
    }

    fn note(&self, line: &str) {
        match self.current.borrow().as_ref() {
            Some(p) => p.note(line),
            None => eprintln!("     {line}"),
        }
    }

    fn end(&self) {
        if let Some(p) = self.current.take() {
            p.done();
        }
    }
}
