//! A small hand-checked profile, shared by tests and documentation: `run()`
//! (20 bytes, 5 words) executes `iadd` once and calls `f` twice with
//! `invokestatic`; `f` (130 bytes, 33 words) executes `iload_0` and `ireturn`.
//! Its cycles under JOP's table are worked out by hand in the estimator tests.

use crate::model::{Event, MethodInfo, Node, Profile};

/// The two-call example profile (benchmark `T`).
pub fn two_calls() -> Profile {
    let m = |n: &str, len| MethodInfo {
        class: "t/T".into(),
        name: n.into(),
        descriptor: "(I)I".into(),
        bytecode_len: len,
        native: false,
        synchronized: false,
    };
    let mut root = Node {
        calls: 1,
        callsite: -1,
        ..Node::default()
    };
    root.opcodes.insert(0x60, 1); // iadd
    root.opcodes.insert(0xb8, 2); // invokestatic
    let mut f = Node {
        parent: Some(0),
        method: 1,
        callsite: 3,
        invoke_opcode: 0xb8,
        calls: 2,
        ..Node::default()
    };
    f.opcodes.insert(0x1a, 2); // iload_0
    f.opcodes.insert(0xac, 2); // ireturn
    f.blocks.insert(0, 2);
    Profile {
        benchmark: "T".into(),
        region: "harness".into(),
        complete: true,
        methods: vec![m("run", 20), m("f", 130)],
        nodes: vec![root, f],
        entry_stack: vec![0],
        region_start: 0,
        region_nanos: 0,
        allocations: Default::default(),
        heap_start: None,
        exceptions: Default::default(),
        events: vec![Event::Invoke(1), Event::Return, Event::Invoke(1), Event::Return],
    }
}
