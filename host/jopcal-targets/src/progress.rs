//! Progress as callbacks: the library says what it is doing, the
//! application decides how to show it (a bar on a terminal, lines in a log).

/// What a long measurement reports while it works. Every method has a
/// no-op default; [`NoProgress`] shows nothing. Shared by the threads of
/// a run with `--jobs`, hence `Sync`.
pub trait Progress: Sync {
    /// A stage of `len` items begins (`build`, `measure`).
    fn begin(&self, _stage: &str, _len: u64) {}
    /// The item being worked on now.
    fn working_on(&self, _what: &str) {}
    /// A long step of the stage begins (said at once, so a log shows what
    /// the time after it went to).
    fn started(&self, _what: &str) {}
    /// One item finished; `line` says how.
    fn finished(&self, _line: &str) {}
    /// Something the user should know that is not an item (a workload left
    /// out, an earlier run moved aside, a retried attempt).
    fn note(&self, _line: &str) {}
    /// The stage ended.
    fn end(&self) {}
    /// A line of the verb's own report (a stage's result, a warning), shown
    /// as given.
    fn say(&self, _line: &str) {}
}

/// Progress that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
