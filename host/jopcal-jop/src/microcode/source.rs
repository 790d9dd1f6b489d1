//! Reading a JOP microcode source (`asm/src/jvm.asm` and the files it
//! includes) into a [`Program`]: the instructions in order with their file and
//! line, the labels, the constants (`name = value`) and the variables
//! (`name ?`). The tree's build runs the C preprocessor over the file first;
//! the few directives the microcode uses (`#include`, `#ifdef`, `#ifndef`,
//! `#else`, `#endif`, `#define`, `#undef`) are handled here with the defines
//! the caller gives (the build's `-D$(JVM_TYPE)`), and any other directive is
//! refused by name rather than guessed at.

use super::isa::{self, Operand};
use super::MicrocodeError;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// Where a line came from, for messages: `jvm_call.inc:313`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// One microinstruction as written: its mnemonic, its operand (a number, a
/// constant, a variable or a label, by instruction), and its flags: `nxt`
/// ends the bytecode, `opd` fetches an operand byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub mnemonic: String,
    pub operand: Option<String>,
    pub nxt: bool,
    pub opd: bool,
    pub at: Location,
}

/// A microcode program after preprocessing.
#[derive(Debug, Clone, Default)]
pub struct Program {
    pub instructions: Vec<Instruction>,
    /// Label to the index of the instruction it names.
    pub labels: BTreeMap<String, usize>,
    pub constants: BTreeMap<String, i64>,
    pub variables: BTreeSet<String>,
    /// The variables in the order they are declared: the assembler gives
    /// them the on-chip memory's words in this order.
    pub variable_order: Vec<String>,
}

impl Program {
    /// Reads `path` and what it includes, with `defines` set.
    pub fn read(path: &Path, defines: &[String]) -> Result<Program, MicrocodeError> {
        let mut reader = Reader {
            defines: defines.iter().cloned().collect(),
            program: Program::default(),
            pending_labels: Vec::new(),
        };
        reader.file(path, 0)?;
        // Labels at the very end name no instruction; they are harmless but
        // nothing can start there.
        Ok(reader.program)
    }

    /// Parses microcode from a string (tests and fuzzing); `#include` is
    /// refused since there is no directory to resolve it in.
    pub fn parse(text: &str, name: &Path, defines: &[String]) -> Result<Program, MicrocodeError> {
        let mut reader = Reader {
            defines: defines.iter().cloned().collect(),
            program: Program::default(),
            pending_labels: Vec::new(),
        };
        reader.text(text, name, None, 0)?;
        Ok(reader.program)
    }

    /// The value of a numeric operand: a literal or a constant.
    pub fn value(&self, operand: &str) -> Option<i64> {
        parse_number(operand).or_else(|| self.constants.get(operand).copied())
    }
}

struct Reader {
    defines: BTreeSet<String>,
    program: Program,
    pending_labels: Vec<(String, Location)>,
}

/// How deep `#include` may nest before a cycle is assumed.
const MAX_INCLUDE_DEPTH: usize = 16;

impl Reader {
    fn file(&mut self, path: &Path, depth: usize) -> Result<(), MicrocodeError> {
        let bytes = std::fs::read(path).map_err(|e| MicrocodeError::Read {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        // The tree's sources are Latin-1 in places; only ASCII matters here.
        let text: String = bytes.iter().map(|&b| b as char).collect();
        self.text(&text, path, path.parent(), depth)
    }

    fn text(&mut self, text: &str, name: &Path, dir: Option<&Path>, depth: usize) -> Result<(), MicrocodeError> {
        // Each open conditional: (this branch is live, an enclosing one is live, #else seen).
        let mut conds: Vec<(bool, bool, bool)> = Vec::new();
        let live = |conds: &[(bool, bool, bool)]| conds.last().is_none_or(|c| c.0 && c.1);
        for (i, raw) in text.lines().enumerate() {
            let at = Location {
                file: name.to_path_buf(),
                line: i + 1,
            };
            let line = strip_comment(raw).trim();
            if let Some(directive) = line.strip_prefix('#') {
                let mut words = directive.split_whitespace();
                let word = words.next().unwrap_or("");
                let arg = words.next();
                let need = |arg: Option<&str>| {
                    arg.map(str::to_string)
                        .ok_or_else(|| MicrocodeError::syntax(&at, format!("#{word} needs a name")))
                };
                match word {
                    "ifdef" | "ifndef" => {
                        let name = need(arg)?;
                        let set = self.defines.contains(&name);
                        let outer = live(&conds);
                        conds.push((if word == "ifdef" { set } else { !set }, outer, false));
                    }
                    "else" => match conds.last_mut() {
                        Some(c) if !c.2 => {
                            c.0 = !c.0;
                            c.2 = true;
                        }
                        Some(_) => return Err(MicrocodeError::syntax(&at, "a second #else")),
                        None => return Err(MicrocodeError::syntax(&at, "#else without #ifdef")),
                    },
                    "endif" => {
                        if conds.pop().is_none() {
                            return Err(MicrocodeError::syntax(&at, "#endif without #ifdef"));
                        }
                    }
                    _ if !live(&conds) => {}
                    "define" => {
                        self.defines.insert(need(arg)?);
                    }
                    "undef" => {
                        self.defines.remove(&need(arg)?);
                    }
                    "include" => {
                        let file = arg
                            .map(|a| a.trim_matches(|c| c == '"' || c == '<' || c == '>'))
                            .filter(|a| !a.is_empty())
                            .ok_or_else(|| MicrocodeError::syntax(&at, "#include needs a file name"))?;
                        let Some(dir) = dir else {
                            return Err(MicrocodeError::syntax(&at, format!("#include \"{file}\": no directory to look in")));
                        };
                        if depth >= MAX_INCLUDE_DEPTH {
                            return Err(MicrocodeError::syntax(&at, format!("#include \"{file}\": nested too deep (a cycle?)")));
                        }
                        let path = dir.join(file);
                        if !path.is_file() {
                            return Err(MicrocodeError::syntax(&at, format!("#include \"{file}\": {} does not exist", path.display())));
                        }
                        self.file(&path, depth + 1)?;
                    }
                    other => {
                        return Err(MicrocodeError::syntax(
                            &at,
                            format!("preprocessor directive #{other} is not supported (only #include, #ifdef, #ifndef, #else, #endif, #define, #undef)"),
                        ))
                    }
                }
                continue;
            }
            if line.is_empty() || !live(&conds) {
                continue;
            }
            self.line(line, &at)?;
        }
        if !conds.is_empty() {
            let at = Location {
                file: name.to_path_buf(),
                line: text.lines().count(),
            };
            return Err(MicrocodeError::syntax(&at, "#ifdef without #endif"));
        }
        Ok(())
    }

    fn line(&mut self, line: &str, at: &Location) -> Result<(), MicrocodeError> {
        // `name = value` defines a constant.
        if let Some((name, value)) = line.split_once('=') {
            let (name, value) = (name.trim(), value.trim());
            if !is_symbol(name) {
                return Err(MicrocodeError::syntax(at, format!("'{name}' is not a constant name")));
            }
            let v = parse_number(value)
                .or_else(|| self.program.constants.get(value).copied())
                .ok_or_else(|| MicrocodeError::syntax(at, format!("constant {name}: '{value}' is not a number")))?;
            self.program.constants.insert(name.to_string(), v);
            return Ok(());
        }
        let mut rest = line;
        // Labels: `name:` before an instruction or alone.
        while let Some((head, tail)) = rest.split_once(':') {
            let head = head.trim();
            if !is_symbol(head) {
                return Err(MicrocodeError::syntax(at, format!("'{head}' is not a label")));
            }
            self.pending_labels.push((head.to_string(), at.clone()));
            rest = tail.trim();
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        match words.as_slice() {
            [] => Ok(()),
            [name, "?"] if is_symbol(name) => {
                if self.program.variables.insert(name.to_string()) {
                    self.program.variable_order.push(name.to_string());
                }
                Ok(())
            }
            [mnemonic, rest @ ..] => self.instruction(mnemonic, rest, at),
        }
    }

    fn instruction(&mut self, mnemonic: &str, rest: &[&str], at: &Location) -> Result<(), MicrocodeError> {
        let Some(info) = isa::lookup(mnemonic) else {
            return Err(MicrocodeError::syntax(
                at,
                format!("unknown microinstruction '{mnemonic}'"),
            ));
        };
        let (operand, flags) = match (info.operand, rest) {
            (Operand::None, flags) => (None, flags),
            (_, [op, flags @ ..]) if *op != "nxt" && *op != "opd" => (Some(op.to_string()), flags),
            _ => return Err(MicrocodeError::syntax(at, format!("{mnemonic} needs an operand"))),
        };
        let (mut nxt, mut opd) = (false, false);
        for f in flags {
            match *f {
                "nxt" => nxt = true,
                "opd" => opd = true,
                other => return Err(MicrocodeError::syntax(at, format!("{mnemonic}: unexpected '{other}'"))),
            }
        }
        let index = self.program.instructions.len();
        for (label, where_) in self.pending_labels.drain(..) {
            if self.program.labels.insert(label.clone(), index).is_some() {
                return Err(MicrocodeError::syntax(
                    &where_,
                    format!("label {label} is defined twice"),
                ));
            }
        }
        self.program.instructions.push(Instruction {
            mnemonic: mnemonic.to_string(),
            operand,
            nxt,
            opd,
            at: at.clone(),
        });
        Ok(())
    }
}

/// The line without its `//` comment.
fn strip_comment(line: &str) -> &str {
    line.split_once("//").map_or(line, |(code, _)| code)
}

fn is_symbol(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A decimal or `0x` hexadecimal literal, with an optional sign.
pub fn parse_number(s: &str) -> Option<i64> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let v = if let Some(hex) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}
