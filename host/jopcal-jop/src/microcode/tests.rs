//! The microcode analysis on small programs written for these tests, with the
//! access timing jopcal ships.

use super::*;
use proptest::prelude::*;

fn timing() -> AccessTiming {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-microcode.toml");
    AccessTiming::load(&path).expect("shipped access timing")
}

fn program(text: &str) -> Program {
    Program::parse(text, Path::new("t.asm"), &[]).expect("test microcode parses")
}

fn entry(text: &str, name: &str) -> Result<Entry, String> {
    let p = program(text);
    let d = Derivation::new(Path::new("t.asm"), &p, &timing(), [name]);
    d.entries
        .get(name)
        .cloned()
        .expect("label exists")
        .map_err(|e| e.to_string())
}

const HEADER: &str = "
io_exc = -124
io_lock = -123
exc_np = 2
a ?
";

#[test]
fn straight_code_costs_one_cycle_an_instruction() {
    let e = entry(
        &format!("{HEADER}\niadd:\tadd nxt\nisub: sub\n nop\n nop nxt\n"),
        "isub",
    )
    .unwrap();
    assert_eq!(e.formula(), "3");
}

#[test]
fn an_array_load_waits_for_its_reads() {
    let text = format!("{HEADER}\niaload:\n stald\n pop\n wait\n wait\n ldmrd nxt\n");
    assert_eq!(entry(&text, "iaload").unwrap().formula(), "6 + 3 * r");
}

#[test]
fn instructions_between_an_access_and_its_wait_hide_part_of_it() {
    // Two instructions beyond the access's own overlap: max(0, r - 2).
    let text = format!("{HEADER}\ngetstatic:\n ldm a\n stmra\n nop\n nop\n wait\n wait\n ldmrd nxt\n");
    assert_eq!(entry(&text, "getstatic").unwrap().formula(), "7 + max(0, r - 2)");
}

#[test]
fn io_accesses_cost_one_cycle_beyond_their_instructions() {
    let text = format!("{HEADER}\nmonitorexit:\n ldi io_lock\n stmwa\n stmwd\n wait\n wait\n nop nxt\n");
    assert_eq!(entry(&text, "monitorexit").unwrap().formula(), "7");
}

#[test]
fn branches_take_effect_after_two_delay_slots_and_both_ways_are_timed() {
    let text = format!("{HEADER}\nif_x:\n ldm a\n nop\n bz skip\n nop\n nop\n nop\n nop\n nop nxt\nskip:\n nop nxt\n");
    let e = entry(&text, "if_x").unwrap();
    // Not taken: 8 instructions; taken: 5 then skip's one.
    assert_eq!(e.formula(), "8");
    assert_eq!(e.range(1.0, 2.0, 0.0), (6.0, 8.0));
}

#[test]
fn a_loop_with_a_constant_count_runs_that_often() {
    // As JOP's imul waits for its multiplier: two trips of seven.
    let text = format!(
        "{HEADER}\nimul:\n stmul\n pop\n ldi 2\nloop:\n ldi -1\n add\n dup\n nop\n bnz loop\n nop\n nop\n pop\n ldmul nxt\n"
    );
    assert_eq!(entry(&text, "imul").unwrap().formula(), "19");
}

#[test]
fn a_loop_on_the_bytecodes_data_is_not_derived() {
    let text = format!("{HEADER}\ncopy:\n ldm a\nloop:\n ldi -1\n add\n dup\n nop\n bnz loop\n nop\n nop\n pop nxt\n");
    let why = entry(&text, "copy").unwrap_err();
    assert!(why.contains("trip count depends on the bytecode's data"), "{why}");
}

#[test]
fn a_path_that_raises_an_exception_is_not_the_bytecodes_cost() {
    let text = format!(
        "{HEADER}\narraylength:\n ldm a\n dup\n nop\n bz np\n nop\n nop\n ldmrd nxt\nnp:\n ldi io_exc\n stmwa\n ldi exc_np\n stmwd\n wait\n wait\n nop nxt\n"
    );
    let e = entry(&text, "arraylength").unwrap();
    assert_eq!(e.formula(), "7");
    assert_eq!(e.paths.exceptional, 1);
}

#[test]
fn a_bytecode_load_is_priced_by_the_method_caches_b() {
    let text = format!("{HEADER}\nreturn:\n ldm a\n stbcrd\n nop\n nop\n nop\n wait\n wait\n nop nxt\n");
    let e = entry(&text, "return").unwrap();
    assert_eq!(e.formula(), "8 + max(0, b - 3)");
    assert!(e.loads_bytecode());
}

#[test]
fn an_access_waited_for_too_early_is_refused_with_its_line() {
    let text = format!("{HEADER}\nx:\n stald\n wait\n wait\n nop nxt\n");
    let why = entry(&text, "x").unwrap_err();
    assert_eq!(
        why,
        "t.asm:8: stald is waited for after 2 instructions, fewer than the 3 it takes"
    );
}

#[test]
fn preprocessing_follows_the_defines() {
    let text = "#ifdef FPU\nfadd: nop nxt\n#else\nfadd: nop\n nop nxt\n#endif\n";
    let without = Program::parse(text, Path::new("t.asm"), &[]).unwrap();
    let with = Program::parse(text, Path::new("t.asm"), &["FPU".to_string()]).unwrap();
    assert_eq!(without.instructions.len(), 2);
    assert_eq!(with.instructions.len(), 1);
}

#[test]
fn includes_are_read_beside_the_including_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.asm"), "a ?\n#include \"part.inc\"\n").unwrap();
    std::fs::write(dir.path().join("part.inc"), "pop: pop nxt\n").unwrap();
    let p = Program::read(&dir.path().join("main.asm"), &[]).unwrap();
    assert_eq!(p.labels.get("pop"), Some(&0));
    assert!(p.instructions[0].at.to_string().ends_with("part.inc:1"));
}

#[test]
fn bad_input_is_named_by_file_and_line() {
    let cases = [
        ("nop\n frob\n", "t.asm:2: unknown microinstruction 'frob'"),
        ("#if X\n", "t.asm:1: preprocessor directive #if is not supported (only #include, #ifdef, #ifndef, #else, #endif, #define, #undef)"),
        ("#ifdef X\nnop\n", "t.asm:2: #ifdef without #endif"),
        ("x: nop\nx: nop\n", "t.asm:2: label x is defined twice"),
        ("ldi\n", "t.asm:1: ldi needs an operand"),
        ("k = banana\n", "t.asm:1: constant k: 'banana' is not a number"),
    ];
    for (text, want) in cases {
        let e = Program::parse(text, Path::new("t.asm"), &[]).unwrap_err().to_string();
        assert_eq!(e, want);
    }
}

proptest! {
    /// Any text either parses or is refused with a message; a parsed
    /// program's every label is timed or refused, never a panic.
    #[test]
    fn arbitrary_microcode_never_panics(lines in proptest::collection::vec(
        prop_oneof![
            Just("nop".to_string()), Just("wait".to_string()), Just("stald".to_string()),
            Just("stmra".to_string()), Just("ldi 3".to_string()), Just("ldi io_exc".to_string()),
            Just("stmwa".to_string()), Just("stmwd".to_string()), Just("dup".to_string()),
            Just("add".to_string()), Just("pop nxt".to_string()), Just("bz l0".to_string()),
            Just("bnz l1".to_string()), Just("jmp l0".to_string()), Just("l0:".to_string()),
            Just("l1:".to_string()), Just("stbcrd".to_string()), Just("#endif".to_string()),
            "[ -~]{0,12}",
        ], 0..40)) {
        let text = format!("{HEADER}\n{}", lines.join("\n"));
        if let Ok(p) = Program::parse(&text, Path::new("t.asm"), &[]) {
            let _ = Derivation::new(Path::new("t.asm"), &p, &timing(), ["l0", "l1"]);
        }
    }
}

#[test]
fn operand_costs_come_from_running_the_microcode_with_each_value() {
    // A long shift that returns at once for a count of 0 (the tree's shape),
    // an lcmp whose path the sign of the high words decides, and an lshr whose
    // path depends on the long itself, which the profile does not record.
    let text = format!(
        "{HEADER}\nlshl:\n ldi 63\n and\n dup\n bnz lshl_not0\n nop\n nop\n pop nxt\nlshl_not0:\n stm a\n nop\n nop nxt\n\
         lcmp:\n stm a\n stm a\n stm a\n dup\n ldi 31\n shr\n nop\n bnz lcmp_neg\n nop\n nop\n pop\n ldi 1 nxt\nlcmp_neg:\n pop\n nop\n ldi -1 nxt\n\
         lshr:\n pop\n pop\n nop\n bz lshr_z\n nop\n nop\n nop nxt\nlshr_z:\n nop nxt\n"
    );
    let section = table::operand_section(&program(&text), &timing(), 1.0, 2.0);
    assert!(
        section.contains("[operands.lshl]   # the microcode's path by the operands' recorded value, run with each\n\"0\" = \"7\"\n\"1-63\" = \"9\"\n"),
        "{section}"
    );
    // lcmp's classes (signs and order) with a negative first operand take the other path.
    assert!(section.contains("[operands.lcmp]"), "{section}");
    // (Classes 3, 4, 7 and 8 cannot happen: a sign and an order that disagree.)
    assert!(
        section.contains("[operands.lcmp]   # the microcode's path by the operands' recorded value, run with each\n\"0-2\" = \"12\"\n\"5\" = \"12\"\n\"6\" = \"13\"\n\"9-11\" = \"13\"\n"),
        "{section}"
    );
    assert!(!section.contains("[operands.lshr]"), "{section}");
}

#[test]
fn a_monitor_exit_costs_by_whether_it_releases_the_lock() {
    // The lock count reaching 0 takes the longer path (the interrupts enabled again).
    let text = format!(
        "{HEADER}lockcnt ?\nmonitorexit:\n ldm lockcnt\n ldi 1\n sub\n dup\n stm lockcnt\n bnz nested\n nop\n nop\n nop\n nop\nnested: nop nxt\n"
    );
    let section = table::operand_section(&program(&text), &timing(), 1.0, 2.0);
    assert!(
        section.contains("[operands.monitorexit]   # the microcode's path by the operands' recorded value, run with each\n\"0\" = \"11\"\n\"1\" = \"9\"\n"),
        "{section}"
    );
}
