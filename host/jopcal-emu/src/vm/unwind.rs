//! Exceptions and faults: unwinding to a handler (reloading each caller into
//! the method cache as JOP does), and the errors that stop the board.

use super::{Catch, Exit, MethodId, Vm};
use crate::error::EmuError;

impl Vm {
    /// Unwinds to a handler of `ex`; `Some(exit)` when none catches it.
    pub(super) fn throw(&mut self, ex: i32, base_depth: usize) -> Result<Option<Exit>, EmuError> {
        let ex_class = self.class_of(ex).unwrap_or(0);
        while let Some(f) = self.frames.last() {
            let m = f.method;
            let at = f.pc.saturating_sub(1);
            let handler = self.methods[m as usize]
                .handlers
                .iter()
                .find(|h| {
                    at >= h.start
                        && at < h.end
                        && match h.catch {
                            Catch::Any => true,
                            Catch::Class(c) => self.is_subclass(ex_class, c),
                            Catch::Nothing => false,
                        }
                })
                .map(|h| h.target);
            if let Some(t) = handler {
                let base = f.base as usize;
                let locals =
                    (self.methods[m as usize].max_locals as usize).max(self.methods[m as usize].arg_slots as usize);
                self.stack.truncate(base + locals);
                self.stack.push(ex);
                self.frames.last_mut().expect("frame").pc = t;
                return Ok(None);
            }
            // Leave the frame: the caller is reloaded into the cache, no return bytecode runs.
            let base = f.base as usize;
            self.stack.truncate(base);
            self.frames.pop();
            if let Some(t) = &mut self.trace {
                t.events.push((false, m));
            }
            if let Some(caller) = self.frames.last() {
                let cm = caller.method;
                self.cache.access(cm, self.methods[cm as usize].words);
            }
            if self.frames.len() <= base_depth {
                break;
            }
        }
        let name = self.classes[ex_class as usize].name.replace('/', ".");
        self.frames.truncate(base_depth);
        Ok(Some(Exit::Uncaught(name)))
    }

    pub(super) fn fault(&self, m: MethodId, pc: usize, what: &str) -> EmuError {
        EmuError::Fault {
            at: self.at(m, pc as u32 - 1),
            what: what.to_string(),
        }
    }

    pub(super) fn limit_error(&self, m: MethodId, pc: usize) -> EmuError {
        EmuError::CycleLimit {
            limit: self.cfg.cycle_limit,
            at: self.at(m, pc as u32),
        }
    }
}

impl EmuError {
    pub(super) fn with_at_prefix(self) -> EmuError {
        match self {
            EmuError::Unsupported { at, what } if at.is_empty() => {
                // The trap message already names the place: split it for the one-line form.
                match what.split_once(": ") {
                    Some((a, w)) => EmuError::Unsupported {
                        at: a.to_string(),
                        what: w.to_string(),
                    },
                    None => EmuError::Unsupported { at, what },
                }
            }
            e => e,
        }
    }
}
