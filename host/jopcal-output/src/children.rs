//! The programs jopcal starts (the tree's `make`, the JVM, Verilator
//! benches, a board's configure command) end with it. Each starts as the
//! leader of a process group of its own, registered here while it lives;
//! when a signal ends jopcal (the `interrupt` module's `finish`) every registered
//! group is sent SIGTERM, then SIGKILL: the grandchildren too (`make`'s
//! compilers, a shell's jobs), which a signal to the child alone would miss.
//! A timeout's kill ([`GroupChild::kill`]) ends the whole group as well.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::io;
use std::ops::{Deref, DerefMut};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The process groups of the children alive now.
static GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn groups() -> std::sync::MutexGuard<'static, Vec<u32>> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A child leading its own process group, registered until it is waited
/// for (or dropped). Derefs to the [`Child`] it wraps.
#[derive(Debug)]
pub struct GroupChild {
    child: Option<Child>,
}

/// Starts `cmd` in a process group of its own and registers the group.
/// A child that must not read jopcal's terminal: in a group of its own it
/// is not in the terminal's foreground, so `cmd`'s stdin should be set
/// (the default here is null unless the caller set one).
fn spawn(cmd: &mut Command) -> io::Result<GroupChild> {
    cmd.process_group(0);
    let child = cmd.spawn()?;
    groups().push(child.id());
    Ok(GroupChild { child: Some(child) })
}

/// [`Command::output`], the child in a group of its own: stdin null,
/// stdout and stderr captured.
fn output(cmd: &mut Command) -> io::Result<Output> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    spawn(cmd)?.wait_with_output()
}

/// [`spawn`] and [`output`] as methods of a [`Command`].
pub trait InGroup {
    /// [`spawn`]: the child leads a process group of its own.
    fn spawn_in_group(&mut self) -> io::Result<GroupChild>;
    /// [`output`]: stdin null, output captured, the child in a group of its own.
    fn output_in_group(&mut self) -> io::Result<Output>;
}

impl InGroup for Command {
    fn spawn_in_group(&mut self) -> io::Result<GroupChild> {
        spawn(self)
    }
    fn output_in_group(&mut self) -> io::Result<Output> {
        output(self)
    }
}

fn forget(pid: u32) {
    groups().retain(|g| *g != pid);
}

impl GroupChild {
    /// The child: held from [`spawn`] until [`Self::wait_with_output`] consumes it.
    fn held(&self) -> &Child {
        self.child
            .as_ref()
            .expect("a GroupChild holds its child until consumed")
    }

    fn held_mut(&mut self) -> &mut Child {
        self.child
            .as_mut()
            .expect("a GroupChild holds its child until consumed")
    }

    /// Kills the whole group (SIGKILL), not the leader alone.
    pub fn kill(&mut self) -> io::Result<()> {
        let c = self.held_mut();
        let _ = killpg(Pid::from_raw(c.id() as i32), Signal::SIGKILL);
        match c.kill() {
            // Already reaped or gone: the group's kill was enough.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
            r => r,
        }
    }

    /// Waits for the child; its group is forgotten.
    pub fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        let c = self.held_mut();
        let r = c.wait();
        forget(c.id());
        r
    }

    /// [`Child::wait_with_output`]; its group is forgotten.
    pub fn wait_with_output(mut self) -> io::Result<Output> {
        let c = self.child.take().expect("a GroupChild holds its child until consumed");
        let pid = c.id();
        let r = c.wait_with_output();
        forget(pid);
        r
    }
}

impl Deref for GroupChild {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.held()
    }
}

impl DerefMut for GroupChild {
    fn deref_mut(&mut self) -> &mut Child {
        self.held_mut()
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        if let Some(c) = &self.child {
            forget(c.id());
        }
    }
}

/// Ends every registered group: SIGTERM (a `make` removes its half-built
/// target, a JVM runs its shutdown hooks), then after `grace` SIGKILL.
/// Returns how many groups there were.
pub fn end_all(grace: Duration) -> usize {
    let live: Vec<u32> = groups().clone();
    for g in &live {
        let _ = killpg(Pid::from_raw(*g as i32), Signal::SIGTERM);
    }
    if !live.is_empty() {
        std::thread::sleep(grace);
        for g in &live {
            let _ = killpg(Pid::from_raw(*g as i32), Signal::SIGKILL);
        }
    }
    live.len()
}

/// Tests that register child groups, or end every registered one (the
/// `interrupt` module's, through its own `test_serial`), hold this while
/// they run: the registry is one per process and tests run on threads.
#[cfg(test)]
pub(crate) fn test_serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell's background job (a grandchild) ends with the group.
    #[test]
    fn a_timeout_kill_ends_the_grandchildren_too() {
        // An interrupt test's `finish` ends every registered group, this
        // test's shell among them, if the two run at once.
        let _serial = test_serial();
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let mut c = spawn(
            Command::new("sh")
                .arg("-c")
                .arg(format!("sleep 300 & echo $! > {}; wait", pidfile.display())),
        )
        .unwrap();
        assert!(groups().contains(&c.id()));
        let start = std::time::Instant::now();
        while std::fs::read_to_string(&pidfile).map_or(true, |s| !s.ends_with('\n')) {
            assert!(start.elapsed().as_secs() < 10, "the shell never started its job");
            std::thread::sleep(Duration::from_millis(10));
        }
        let grandchild: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        c.kill().unwrap();
        c.wait().unwrap();
        assert!(!groups().contains(&c.id()));
        // The grandchild is not ours to reap: it is gone or a zombie of init's.
        let start = std::time::Instant::now();
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat"));
            match stat {
                Err(_) => break,
                Ok(s) if s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')) => break,
                Ok(_) => {}
            }
            assert!(
                start.elapsed().as_secs() < 10,
                "sleep {grandchild} outlived its group's kill"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn output_forgets_the_group() {
        let o = output(Command::new("sh").args(["-c", "echo hi"])).unwrap();
        assert_eq!(o.stdout, b"hi\n");
        assert!(o.status.success());
    }
}
