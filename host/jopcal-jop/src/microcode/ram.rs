//! The on-chip memory (the stack RAM) as the tree's microcode assembler
//! leaves it before the processor starts: every word `0x12345678`, the
//! microcode's variables from word 0 in the order they are declared (0), the
//! values its `ldi` instructions load from word 32 in the order they are
//! first used, and the microcode's `version` constant at word 62 with 0
//! after it. The processor's runtime reads some of it (the version it
//! prints at boot; the variables such as the lock count), so a model of the
//! processor starts from the same words.

use super::Program;

/// The word the assembler fills the memory with.
pub const FILL: i32 = 0x1234_5678;
/// Where the `ldi` values start, and where the version is.
pub const CONSTANTS_AT: usize = 32;
pub const VERSION_AT: usize = 62;

/// Why the image cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RamError {
    #[error("the microcode's {0} variables do not fit below word {CONSTANTS_AT}")]
    TooManyVariables(usize),
    #[error("the microcode loads {count} different values; at most {fit} fit between words {CONSTANTS_AT} and {VERSION_AT}", fit = VERSION_AT - CONSTANTS_AT)]
    TooManyConstants { count: usize },
    #[error("ldi {0}: not a number or constant")]
    BadOperand(String),
    #[error("the memory of {0} words is smaller than the assembler's 64")]
    TooSmall(usize),
}

/// The memory's `words` words after assembly.
pub fn initial_ram(program: &Program, words: usize) -> Result<Vec<i32>, RamError> {
    if words < 64 {
        return Err(RamError::TooSmall(words));
    }
    let mut ram = vec![FILL; words];
    if program.variable_order.len() > CONSTANTS_AT {
        return Err(RamError::TooManyVariables(program.variable_order.len()));
    }
    for w in ram.iter_mut().take(program.variable_order.len()) {
        *w = 0;
    }
    let mut constants: Vec<i32> = Vec::new();
    for ins in program.instructions.iter().filter(|i| i.mnemonic == "ldi") {
        let op = ins.operand.as_deref().unwrap_or("");
        let v = program.value(op).ok_or_else(|| RamError::BadOperand(op.to_string()))? as i32;
        if !constants.contains(&v) {
            constants.push(v);
        }
    }
    if constants.len() > VERSION_AT - CONSTANTS_AT {
        return Err(RamError::TooManyConstants { count: constants.len() });
    }
    ram[CONSTANTS_AT..CONSTANTS_AT + constants.len()].copy_from_slice(&constants);
    // The assembler sets -1 when the microcode names no version.
    ram[VERSION_AT] = program.constants.get("version").map_or(-1, |v| *v as i32);
    ram[VERSION_AT + 1] = 0;
    Ok(ram)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn variables_constants_and_version_land_where_the_assembler_puts_them() {
        let p = Program::parse(
            "version = 20130708\nio_x = -128\nmp ?\ncp ?\nstart:\n ldi 5\n ldi io_x\n ldi 5\n ldi 7 nxt\n",
            Path::new("t.asm"),
            &[],
        )
        .unwrap();
        let ram = initial_ram(&p, 256).unwrap();
        assert_eq!(&ram[..3], &[0, 0, FILL]);
        assert_eq!(&ram[32..36], &[5, -128, 7, FILL]);
        assert_eq!(&ram[62..65], &[20130708, 0, FILL]);
        assert_eq!(ram.len(), 256);
    }
}
