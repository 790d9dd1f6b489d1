//! The interpreter on hand-assembled class files: what it computes, what it
//! charges, and how it stops on bad programs.

use super::*;
use std::path::Path;

/// The constant pool of a hand-assembled class file.
struct ClassFileBuilder {
    pool: Vec<Vec<u8>>,
}

impl ClassFileBuilder {
    fn new() -> Self {
        ClassFileBuilder { pool: Vec::new() }
    }

    fn add(&mut self, entry: Vec<u8>) -> u16 {
        self.pool.push(entry);
        self.pool.len() as u16
    }

    fn utf8(&mut self, s: &str) -> u16 {
        let mut e = vec![1];
        e.extend_from_slice(&(s.len() as u16).to_be_bytes());
        e.extend_from_slice(s.as_bytes());
        self.add(e)
    }

    fn class(&mut self, name: &str) -> u16 {
        let n = self.utf8(name);
        let mut e = vec![7];
        e.extend_from_slice(&n.to_be_bytes());
        self.add(e)
    }

    fn method_ref(&mut self, class: u16, name: &str, desc: &str) -> u16 {
        let n = self.utf8(name);
        let d = self.utf8(desc);
        let mut nat = vec![12];
        nat.extend_from_slice(&n.to_be_bytes());
        nat.extend_from_slice(&d.to_be_bytes());
        let nat = self.add(nat);
        let mut e = vec![10];
        e.extend_from_slice(&class.to_be_bytes());
        e.extend_from_slice(&nat.to_be_bytes());
        self.add(e)
    }
}

/// Exception handlers: `(start, end, target, catch class or "")`.
type Handlers<'a> = &'a [(u16, u16, u16, &'a str)];

/// A class file with one class `T` (superclass `java/lang/Object`) whose
/// public static methods are `(name, descriptor, max_locals, code, handlers)`.
/// Their code calls `System.exit(I)V` with [`EXIT`] and `T.f()I` with [`CALL_F`].
fn class_file(methods: &[(&str, &str, u16, &[u8], Handlers)]) -> Vec<u8> {
    // The order fixes the indices the tests' code names: 6 and 12.
    let mut b = ClassFileBuilder::new();
    let system = b.class("java/lang/System"); // 1, 2
    let exit = b.method_ref(system, "exit", "(I)V"); // 3..=6
    let this = b.class("T"); // 7, 8
    let f = b.method_ref(this, "f", "()I"); // 9..=12
    assert_eq!((exit, f), (EXIT[2].into(), CALL_F[2].into()));
    let object = b.class("java/lang/Object");
    let code_name = b.utf8("Code");
    let mut named = Vec::new();
    for (name, desc, max_locals, code, handlers) in methods {
        let n = b.utf8(name);
        let d = b.utf8(desc);
        let hs: Vec<(u16, u16, u16, u16)> = handlers
            .iter()
            .map(|(s, e, t, c)| (*s, *e, *t, if c.is_empty() { 0 } else { b.class(c) }))
            .collect();
        named.push((n, d, *max_locals, code.to_vec(), hs));
    }
    let mut out = vec![0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52];
    out.extend_from_slice(&(b.pool.len() as u16 + 1).to_be_bytes());
    for e in &b.pool {
        out.extend_from_slice(e);
    }
    out.extend_from_slice(&0x0021u16.to_be_bytes());
    out.extend_from_slice(&this.to_be_bytes());
    out.extend_from_slice(&object.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // no interfaces, no fields
    out.extend_from_slice(&(named.len() as u16).to_be_bytes());
    for (n, d, max_locals, code, hs) in named {
        out.extend_from_slice(&0x0009u16.to_be_bytes()); // public static
        out.extend_from_slice(&n.to_be_bytes());
        out.extend_from_slice(&d.to_be_bytes());
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&code_name.to_be_bytes());
        let len = 2 + 2 + 4 + code.len() + 2 + 8 * hs.len() + 2;
        out.extend_from_slice(&(len as u32).to_be_bytes());
        out.extend_from_slice(&16u16.to_be_bytes());
        out.extend_from_slice(&max_locals.to_be_bytes());
        out.extend_from_slice(&(code.len() as u32).to_be_bytes());
        out.extend_from_slice(&code);
        out.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        for (s, e, t, c) in hs {
            for v in [s, e, t, c] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
        out.extend_from_slice(&0u16.to_be_bytes());
    }
    out.extend_from_slice(&0u16.to_be_bytes());
    out
}

fn board(limit: u64) -> BoardConfig {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/emu-board.toml");
    let mut cfg = BoardConfig::load(&path, &[]).expect("the board's own table");
    cfg.cycle_limit = limit;
    cfg
}

const MAIN: &str = "([Ljava/lang/String;)V";
/// `invokestatic System.exit(I)V`.
const EXIT: [u8; 3] = [0xb8, 0, 6];
/// `invokestatic T.f()I`.
const CALL_F: [u8; 3] = [0xb8, 0, 12];

fn run(methods: &[(&str, &str, u16, &[u8], Handlers)], limit: u64) -> (Result<Exit, EmuError>, Vm) {
    let mut vm = Vm::new(&[class_file(methods)], board(limit)).expect("loads");
    let exit = vm.run_main("T");
    (exit, vm)
}

#[test]
fn computes_and_exits_with_the_result() {
    // exit(6 * 7 - f()), f() = 2
    let main: Vec<u8> = [&[0x10, 6, 0x10, 7, 0x68][..], &CALL_F, &[0x64], &EXIT, &[0xb1]].concat();
    let f = [0x05, 0xac]; // iconst_2; ireturn
    let (exit, _) = run(&[("main", MAIN, 1, &main, &[]), ("f", "()I", 0, &f, &[])], 1 << 30);
    assert_eq!(exit, Ok(Exit::Exit(40)));
}

#[test]
fn every_instruction_and_the_call_are_charged_from_the_model() {
    let main: Vec<u8> = [&CALL_F[..], &[0x57, 0xb1]].concat(); // f(); pop; return
    let f = [0x05, 0xac];
    let (exit, vm) = run(&[("main", MAIN, 1, &main, &[]), ("f", "()I", 0, &f, &[])], 1 << 30);
    assert_eq!(exit, Ok(Exit::Returned));
    let model = &vm.config().model;
    let words = |name: &str, desc: &str| {
        let class = &vm.classes[vm.class_id("T").unwrap() as usize];
        vm.methods[class.methods[&(name.to_string(), desc.to_string())] as usize].words
    };
    let (fw, mw) = (words("f", "()I"), words("main", MAIN));
    // A cold cache: f misses on the invoke; main is still cached on return.
    let hit = model.load_cost(true, 0);
    let expected = model.cost(0xb8, model.load_cost(false, fw), fw)
        + model.cost(0x05, hit, 0)
        + model.cost(0xac, model.load_cost(true, mw), mw)
        + model.cost(0x57, hit, 0);
    // main's own return leaves the program: nothing is returned to or charged.
    assert_eq!(vm.cycles, expected as u64);
}

#[test]
fn a_division_by_zero_is_caught_by_its_handler() {
    // try { 1 / 0 } catch (ArithmeticException) { exit(7) }
    let main: Vec<u8> = [&[0x04, 0x03, 0x6c, 0x57, 0xb1][..], &[0x57, 0x10, 7], &EXIT, &[0xb1]].concat();
    let handlers: Handlers = &[(0, 4, 5, "java/lang/ArithmeticException")];
    let (exit, _) = run(&[("main", MAIN, 1, &main, handlers)], 1 << 30);
    assert_eq!(exit, Ok(Exit::Exit(7)));
}

#[test]
fn an_exception_no_handler_catches_ends_the_program_by_name() {
    let main = [0x04, 0x03, 0x70, 0x57, 0xb1]; // 1 % 0
    let handlers: Handlers = &[(0, 4, 4, "java/lang/NullPointerException")];
    let (exit, _) = run(&[("main", MAIN, 1, &main, handlers)], 1 << 30);
    assert_eq!(exit, Ok(Exit::Uncaught("java.lang.ArithmeticException".into())));
}

#[test]
fn an_endless_loop_stops_at_the_cycle_limit_naming_the_method() {
    let main = [0xa7, 0, 0]; // goto 0
    let (exit, vm) = run(&[("main", MAIN, 1, &main, &[])], 10_000);
    let e = exit.unwrap_err();
    assert!(matches!(e, EmuError::CycleLimit { limit: 10_000, .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "cycle limit of 10000 cycles reached in T.main([Ljava/lang/String;)V bytecode index 0 (an endless loop?)"
    );
    assert!(vm.cycles > 10_000 && vm.cycles < 10_100);
}

#[test]
fn an_unsupported_bytecode_fails_only_where_it_runs_and_names_its_place() {
    // if (0 == 0) skip the fconst_0; exit(3)
    let skips: Vec<u8> = [&[0x03, 0x99, 0, 5, 0x0b, 0x57, 0x10, 3][..], &EXIT, &[0xb1]].concat();
    assert_eq!(run(&[("main", MAIN, 1, &skips, &[])], 1 << 30).0, Ok(Exit::Exit(3)));
    let runs = [0x03, 0x0b, 0xb1];
    let e = run(&[("main", MAIN, 1, &runs, &[])], 1 << 30).0.unwrap_err();
    assert_eq!(
        e.to_string(),
        "T.main([Ljava/lang/String;)V bytecode index 1: bytecode fconst_0 is not supported by the virtual board (no floating point)"
    );
}

#[test]
fn a_local_outside_the_frame_is_refused_when_it_runs() {
    let main = [0x15, 9, 0xb1]; // iload 9 with 1 local
    let e = run(&[("main", MAIN, 1, &main, &[])], 1 << 30).0.unwrap_err();
    assert!(
        e.to_string()
            .ends_with("local variable 9 is outside the frame of 1 slots"),
        "{e}"
    );
}

#[test]
fn switches_jump_to_their_targets() {
    // tableswitch on 1 (low 0, high 1): case 0 -> exit(10), case 1 -> exit(11), default -> exit(12)
    let mut main = vec![0x04, 0xaa, 0, 0]; // iconst_1; tableswitch; 2 bytes of padding to offset 4
    let table_at = 1i32;
    let (case0, case1, default) = (24i32, 30i32, 36i32);
    for v in [default - table_at, 0, 1, case0 - table_at, case1 - table_at] {
        main.extend_from_slice(&v.to_be_bytes());
    }
    assert_eq!(main.len(), 24);
    for k in [10u8, 11, 12] {
        main.extend_from_slice(&[0x10, k]);
        main.extend_from_slice(&EXIT);
        main.push(0xb1);
    }
    assert_eq!(run(&[("main", MAIN, 1, &main, &[])], 1 << 30).0, Ok(Exit::Exit(11)));
}
