//! JOP's report of an uncaught exception, decoded. When a program's
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
    Some(Uncaught {
        message,
        saved_sp,
        frames,
    })
}

impl Uncaught {
    /// One line: the exception, where it was thrown and the calls below, the
    /// methods named from `map` where it is given.
    pub fn describe(&self, map: Option<&LinkMap>) -> String {
        let name = |f: &Frame| -> String {
            match map.and_then(|m| m.method_at_struct(f.mp)) {
                Some(m) => format!("{m} at pc {}", f.pc),
                None => format!("the method at mp {} pc {}", f.mp, f.pc),
            }
        };
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
