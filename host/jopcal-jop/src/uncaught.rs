//! JOP's reports of a program it stops, decoded: an uncaught exception, and
//! something its runtime does not implement ([`NotImplemented`]).
//!
//! An uncaught exception: When a program's
//! exception reaches the bottom of its stack, the tree's runtime
//! (`JVMHelp`) prints `Uncaught exception: <message>`, the stack pointer it
//! saved, and one `mp pc fp` row per frame (method structure, bytecode
//! position, frame pointer; six decimal digits each, innermost first), then
//! stops with `JVM exit!`. The rows name methods only by their structure's
//! address; the image's link map (`-mtab` lines) names them.

use crate::linkmap::LinkMap;

/// One frame of the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The address of the method's structure.
    pub mp: u32,
    /// Its bytecode position (in the linked code: JOP's linker rewrites some bytecodes).
    pub pc: u32,
    /// The frame pointer: the stack word the frame starts at.
    pub fp: u32,
}

/// A decoded uncaught-exception report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncaught {
    /// The exception's message (empty for the runtime's own exceptions).
    pub message: String,
    /// The stack pointer the runtime saved (the stack's depth in words).
    pub saved_sp: Option<u32>,
    /// The frames, innermost first.
    pub frames: Vec<Frame>,
}

/// The last uncaught-exception report in `output`, if there is one.
pub fn parse(output: &str) -> Option<Uncaught> {
    let start = output.rfind("Uncaught exception:")?;
    let mut lines = output[start..].lines();
    let message = lines.next()?["Uncaught exception:".len()..].trim().to_string();
    let (saved_sp, frames) = stack_dump(lines);
    Some(Uncaught {
        message,
        saved_sp,
        frames,
    })
}

/// The saved stack pointer and the `mp pc fp` rows that follow a report.
fn stack_dump<'a>(lines: impl Iterator<Item = &'a str>) -> (Option<u32>, Vec<Frame>) {
    let mut saved_sp = None;
    let mut frames = Vec::new();
    for l in lines {
        let l = l.trim();
        if let Some(sp) = l.strip_prefix("saved sp=") {
            saved_sp = sp.trim().parse().ok();
            continue;
        }
        if l.is_empty() || l.starts_with("mp") {
            continue;
        }
        // A row is three numbers; anything else ends the dump.
        let words: Vec<&str> = l.split_whitespace().collect();
        let Ok([a, b, c]) = <[&str; 3]>::try_from(words) else {
            break;
        };
        let (Ok(mp), Ok(pc), Ok(fp)) = (a.parse(), b.parse(), c.parse()) else {
            break;
        };
        frames.push(Frame { mp, pc, fp });
    }
    (saved_sp, frames)
}

/// A frame named from `map` where it is given.
fn frame_name(f: &Frame, map: Option<&LinkMap>) -> String {
    match map.and_then(|m| m.method_at_struct(f.mp)) {
        Some(m) => format!("{m} at pc {}", f.pc),
        None => format!("the method at mp {} pc {}", f.mp, f.pc),
    }
}

/// JOP's report of something its runtime does not implement: the runtime's
/// `JVMHelp.noim` prints `ni <mp> <code> <pc> <byte>`, then `JOP: bytecode
/// <byte> not implemented`, the stack pointer it saved and the `mp pc fp`
/// rows, and then waits forever (`for (;;);`). Its routines call it for
/// bytecodes they leave out and for cases they do not handle (a
/// `multianewarray` of more than two dimensions prints `3dimensions not
/// supported` first), so the byte it names is not always the bytecode
/// that stopped: the frames are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotImplemented {
    /// What the runtime printed on the line before its report, if anything.
    pub said: Option<String>,
    /// The runtime's own line (`JOP: bytecode 3 not implemented`).
    pub report: String,
    /// The stack pointer the runtime saved.
    pub saved_sp: Option<u32>,
    /// The frames, innermost first.
    pub frames: Vec<Frame>,
}

/// The last "not implemented" report in `output`, if there is one.
pub fn parse_not_implemented(output: &str) -> Option<NotImplemented> {
    let report_at = output.rfind("JOP: bytecode ")?;
    let mut lines = output[report_at..].lines();
    let report = lines.next()?.trim().to_string();
    if !report.ends_with("not implemented") {
        return None;
    }
    let (saved_sp, frames) = stack_dump(lines);
    // The line before the `ni` line, where a routine says what it lacks.
    let before: Vec<&str> = output[..report_at].lines().map(str::trim).collect();
    let ni = before.iter().rposition(|l| l.starts_with("ni "))?;
    let said = ni
        .checked_sub(1)
        .map(|i| before[i])
        .filter(|l| !l.is_empty() && !l.starts_with("JOP start") && !l.contains(" MHz, "))
        .map(str::to_string);
    Some(NotImplemented {
        said,
        report,
        saved_sp,
        frames,
    })
}

impl NotImplemented {
    /// One line: what the runtime said, where, and that it waits forever.
    pub fn describe(&self, map: Option<&LinkMap>) -> String {
        let mut s = String::from("the processor's runtime stopped the program: it does not implement what ");
        match self.frames.first() {
            Some(top) => s.push_str(&frame_name(top, map)),
            None => s.push_str("the program"),
        }
        s.push_str(" asks");
        let rest: Vec<String> = self.frames.iter().skip(1).map(|f| frame_name(f, map)).collect();
        if !rest.is_empty() {
            s.push_str(&format!(" (called from {})", rest.join(" <- ")));
        }
        s.push_str(": it printed ");
        if let Some(said) = &self.said {
            s.push_str(&format!("\"{said}\", "));
        }
        s.push_str(&format!("\"{}\"", self.report));
        if let Some(sp) = self.saved_sp {
            s.push_str(&format!("; stack at word {sp}"));
        }
        s.push_str("; it then waits forever (JVMHelp.noim): a limit of the processor's runtime, which the host JVM does not have");
        s
    }
}

impl Uncaught {
    /// One line: the exception, where it was thrown and the calls below, the
    /// methods named from `map` where it is given.
    pub fn describe(&self, map: Option<&LinkMap>) -> String {
        let name = |f: &Frame| frame_name(f, map);
        let mut s = String::from("the program stopped on an uncaught exception");
        if !self.message.is_empty() {
            s.push_str(&format!(" (\"{}\")", self.message));
        }
        if let Some(top) = self.frames.first() {
            s.push_str(&format!(" thrown in {}", name(top)));
            let rest: Vec<String> = self.frames[1..].iter().map(name).collect();
            if !rest.is_empty() {
                s.push_str(&format!(", called from {}", rest.join(" <- ")));
            }
        }
        if let Some(sp) = self.saved_sp {
            s.push_str(&format!("; stack at word {sp}"));
        }
        if let Some(m) = map.and_then(|m| self.frames.first().and_then(|f| m.method_at_struct(f.mp))) {
            if m.ends_with("JVMHelp.monitorState()V") {
                s.push_str(
                    "; this tree's processor enters JVMHelp.monitorState for the exceptions it raises itself (a null reference, an index out of bounds, a division by zero): its microcode's sys_exc invokes the method 6 words into JVMHelp's table, which in this tree is monitorState, and it throws IllegalMonitorStateException, which the program's catch of the exception it expected does not take",
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "JOP start V 20130708 \r\n80 MHz, 1024 KB RAM, 1 CPUs\r\nUncaught exception: lang.Character: works only for radix 10\r\nsaved sp=000142 \r\n  mp     pc     fp\r\n011319 000016 000138 \r\n012310 000088 000074 \r\n\r\n\r\nJVM exit!\r\n";

    #[test]
    fn the_dump_is_decoded_and_named_from_the_link_map() {
        let u = parse(DUMP).unwrap();
        assert_eq!(u.message, "lang.Character: works only for radix 10");
        assert_eq!(u.saved_sp, Some(142));
        assert_eq!(
            u.frames,
            [
                Frame {
                    mp: 11319,
                    pc: 16,
                    fp: 138
                },
                Frame {
                    mp: 12310,
                    pc: 88,
                    fp: 74
                }
            ]
        );
        let map = LinkMap::parse(
            " -mtab java.lang.Character.digit(CI)I 11319\n -mtab com.jopdesign.sys.Startup.boot()V 12310\n",
        )
        .unwrap();
        assert_eq!(
            u.describe(Some(&map)),
            "the program stopped on an uncaught exception (\"lang.Character: works only for radix 10\") thrown in java.lang.Character.digit(CI)I at pc 16, called from com.jopdesign.sys.Startup.boot()V at pc 88; stack at word 142"
        );
        assert_eq!(
            u.describe(None),
            "the program stopped on an uncaught exception (\"lang.Character: works only for radix 10\") thrown in the method at mp 11319 pc 16, called from the method at mp 12310 pc 88; stack at word 142"
        );
        assert_eq!(parse("@jopcal done\n"), None);
    }

    const NOIM: &str = "JOP start V 20130708 \r\n80 MHz, 1024 KB RAM, 1 CPUs\r\n3dimensions not supported\r\nni 015167  007647  109  003 \r\nJOP: bytecode 3 not implemented\r\nsaved sp=000114 \r\n  mp     pc     fp\r\n015167 000110 000110 \r\n012849 000007 000087 \r\n\r\n\r\nvirtual board error: the program waits forever\r\n";

    #[test]
    fn a_not_implemented_report_is_decoded_with_what_the_routine_said_and_the_frames_named() {
        let n = parse_not_implemented(NOIM).unwrap();
        assert_eq!(n.said.as_deref(), Some("3dimensions not supported"));
        assert_eq!(n.report, "JOP: bytecode 3 not implemented");
        assert_eq!(n.saved_sp, Some(114));
        assert_eq!(
            n.frames.iter().map(|f| (f.mp, f.pc)).collect::<Vec<_>>(),
            [(15167, 110), (12849, 7)]
        );
        let map = LinkMap::parse(
            " -mtab ho.Grid.main([Ljava/lang/String;)V 15167\n -mtab jopcal.program.Main.main([Ljava/lang/String;)V 12849\n",
        )
        .unwrap();
        assert_eq!(
            n.describe(Some(&map)),
            "the processor's runtime stopped the program: it does not implement what ho.Grid.main([Ljava/lang/String;)V at pc 110 asks (called from jopcal.program.Main.main([Ljava/lang/String;)V at pc 7): it printed \"3dimensions not supported\", \"JOP: bytecode 3 not implemented\"; stack at word 114; it then waits forever (JVMHelp.noim): a limit of the processor's runtime, which the host JVM does not have"
        );
        // Without a routine's line before it, only the runtime's own.
        let bare = NOIM.replace("3dimensions not supported\r\n", "");
        assert_eq!(parse_not_implemented(&bare).unwrap().said, None);
        assert_eq!(parse_not_implemented(DUMP), None);
        assert_eq!(parse(NOIM), None);
    }

    proptest::proptest! {
        /// Any output, a "not implemented" report cut anywhere included, decodes without a panic.
        #[test]
        fn any_not_implemented_output_decodes_without_panic(cut in 0usize..NOIM.len(), tail in ".{0,40}") {
            let text = format!("{}{tail}", &NOIM[..cut]);
            if let Some(n) = parse_not_implemented(&text) {
                let _ = n.describe(None);
            }
        }
    }

    proptest::proptest! {
        /// Any output, a dump cut anywhere included, decodes without a panic.
        #[test]
        fn any_output_decodes_without_panic(cut in 0usize..DUMP.len(), tail in ".{0,40}") {
            let text = format!("{}{tail}", &DUMP[..cut]);
            if let Some(u) = parse(&text) {
                let _ = u.describe(None);
            }
        }
    }
}
