//! Basic blocks of a method, in two variants. `Control`: only control-flow
//! bytecodes (branches, switches, returns, athrow, jsr/ret) end a block, and
//! branch targets and exception handlers start one. `Precise`: in addition,
//! every bytecode that may throw ends a block, so a block's count is exact
//! even when an exception leaves it early.

use crate::decode::Instruction;
use crate::opcode::{is_control, may_throw};
use std::collections::BTreeSet;

/// Which instructions end a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlockMode {
    #[default]
    Control,
    Precise,
}

/// A basic block: instructions `[first, first + count)` of the method,
/// covering bytecode indices `[start_pc, end_pc)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BasicBlock {
    pub start_pc: u32,
    pub end_pc: u32,
    pub first: usize,
    pub count: usize,
}

/// Splits decoded `code` into basic blocks. `handlers` are exception handler pcs.
pub fn basic_blocks(code: &[Instruction], handlers: &[u32], mode: BlockMode) -> Vec<BasicBlock> {
    if code.is_empty() {
        return vec![];
    }
    let mut leaders: BTreeSet<u32> = BTreeSet::new();
    leaders.insert(0);
    leaders.extend(handlers.iter().copied());
    for ins in code {
        let ends = is_control(ins.opcode) || (mode == BlockMode::Precise && may_throw(ins.opcode));
        if ends {
            leaders.insert(ins.pc + ins.len);
        }
        leaders.extend(ins.targets());
    }
    let mut blocks = Vec::new();
    let mut first = 0;
    for (i, ins) in code.iter().enumerate() {
        let next_pc = ins.pc + ins.len;
        let last = i + 1 == code.len() || leaders.contains(&next_pc);
        if last {
            blocks.push(BasicBlock {
                start_pc: code[first].pc,
                end_pc: next_pc,
                first,
                count: i + 1 - first,
            });
            first = i + 1;
        }
    }
    blocks
}

/// Index of the block containing bytecode index `pc`.
pub fn block_of(blocks: &[BasicBlock], pc: u32) -> Option<usize> {
    let i = blocks.partition_point(|b| b.end_pc <= pc);
    (i < blocks.len() && blocks[i].start_pc <= pc).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode;

    #[test]
    fn loop_blocks_in_both_modes() {
        // 0 iconst_0; 1 istore_0; 2 iload_0; 3 bipush 10; 5 if_icmpge +13 -> 18;
        // 8 aload_1; 9 iload_0; 10 iaload; 11 pop; 12 iinc 0 1; 15 goto -13 -> 2; 18 return
        let code = decode(&[
            0x03, 0x3b, 0x1a, 0x10, 10, 0xa2, 0, 13, 0x2b, 0x1a, 0x2e, 0x57, 0x84, 0, 1, 0xa7, 0xff, 0xf3, 0xb1,
        ])
        .unwrap();
        let b = basic_blocks(&code, &[], BlockMode::Control);
        let spans: Vec<(u32, u32)> = b.iter().map(|b| (b.start_pc, b.end_pc)).collect();
        assert_eq!(spans, vec![(0, 2), (2, 8), (8, 18), (18, 19)]);
        let p = basic_blocks(&code, &[], BlockMode::Precise);
        let spans: Vec<(u32, u32)> = p.iter().map(|b| (b.start_pc, b.end_pc)).collect();
        assert_eq!(spans, vec![(0, 2), (2, 8), (8, 11), (11, 18), (18, 19)]);
        assert_eq!(block_of(&b, 10), Some(2));
        assert_eq!(block_of(&b, 19), None);
        assert_eq!(b.iter().map(|b| b.count).sum::<usize>(), code.len());
    }
}
