//! The shipped table reproduces every value JOP's documentation publishes
//! (docs/jop-timing-facts.md), at r=1,w=2 and at r=3,w=5.

use jopcal_timing::table::{rows, Row};
use jopcal_timing::TimingModel;
use std::path::Path;

fn model(overrides: &[&str]) -> TimingModel {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
    let mut m = TimingModel::load(&path).unwrap();
    m.apply_overrides(&overrides.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap();
    m
}

fn row(rows: &[Row], op: &str) -> (f64, f64) {
    let r = rows
        .iter()
        .find(|r| r.opcode == op)
        .unwrap_or_else(|| panic!("{op} missing"));
    (r.hit, r.miss)
}

#[test]
fn worked_invoke_and_return_values() {
    let r1 = rows(&model(&["r=1", "w=2"]));
    assert_eq!(row(&r1, "invokevirtual"), (100.0, 135.0));
    assert_eq!(row(&r1, "invokestatic"), (74.0, 109.0));
    assert_eq!(row(&r1, "invokespecial"), (74.0, 109.0));
    assert_eq!(row(&r1, "ireturn"), (23.0, 85.0));
    assert_eq!(row(&r1, "return"), (21.0, 84.0));
    let r3 = rows(&model(&["r=3", "w=5"]));
    assert_eq!(row(&r3, "invokevirtual"), (105.0, 206.0));
    assert_eq!(row(&r3, "invokestatic"), (77.0, 178.0));
    assert_eq!(row(&r3, "ireturn"), (23.0, 151.0));
    assert_eq!(row(&r3, "return"), (21.0, 150.0));
}

#[test]
fn published_simple_costs() {
    for (r, w) in [(1.0, 2.0), (3.0, 5.0)] {
        let rows = rows(&model(&[&format!("r={r}"), &format!("w={w}")]));
        let hit = |op: &str| row(&rows, op).0;
        for op in ["iadd", "iload_0", "aload_0", "aload_1", "aload_2", "aload_3"] {
            assert_eq!(hit(op), 1.0, "{op}");
        }
        assert_eq!(hit("iload"), 2.0);
        assert_eq!(hit("aload"), 2.0);
        assert_eq!(hit("ldc"), 7.0 + r);
        assert!(hit("ldc_w") > hit("ldc"), "ldc_w costs more than ldc");
        assert_eq!(hit("iaload"), 6.0 + 3.0 * r);
        assert_eq!(hit("iastore"), 10.0 + 2.0 * r + w);
        assert_eq!(hit("getstatic"), 5.0 + r);
        assert_eq!(hit("putstatic"), 5.0 + w);
        assert_eq!(hit("getfield"), 8.0 + 2.0 * r);
        assert_eq!(hit("putfield"), 9.0 + r + w);
        for op in ["ifeq", "if_icmplt", "goto", "ifnull"] {
            assert_eq!(hit(op), 4.0, "{op}");
        }
        assert_eq!(hit("imul"), 19.0);
        assert_eq!(hit("ladd"), 26.0);
        assert_eq!(hit("lsub"), 38.0);
        assert_eq!(hit("lcmp"), 85.0);
        assert_eq!(hit("jopsys_rd"), 4.0 + r);
        assert_eq!(
            hit("invokeinterface"),
            111.0 + 4.0 * r + if r > 2.0 { r - 2.0 } else { 0.0 }
        );
    }
    // getfield: 10 at r=1, 14 at r=3 (the worked values).
    assert_eq!(row(&rows(&model(&["r=1"])), "getfield").0, 10.0);
    assert_eq!(row(&rows(&model(&["r=3"])), "getfield").0, 14.0);
}

#[test]
fn java_implemented_bytecodes_cost_dispatch_plus_routine() {
    let list = [
        "fadd",
        "dadd",
        "lmul",
        "idiv",
        "ldiv",
        "irem",
        "lrem",
        "i2f",
        "tableswitch",
        "lookupswitch",
        "new",
        "newarray",
        "anewarray",
        "athrow",
        "checkcast",
        "instanceof",
        "multianewarray",
        "aastore",
    ];
    let m = model(&["r=1"]);
    let rows = rows(&m);
    for op in list {
        let r = rows.iter().find(|r| r.opcode == op).unwrap();
        assert_eq!(r.implementation, "java", "{op}");
    }
    // Dispatch 82+[r-3]+[r-2]+[b-37] (new: 92+r+...), routine 0 until calibrated.
    assert_eq!(row(&rows, "idiv").0, 82.0);
    assert_eq!(row(&rows, "new").0, 93.0);
    let m = model(&["r=3", "impl_idiv=40"]);
    assert_eq!(row(&jopcal_timing::table::rows(&m), "idiv").0, 82.0 + 1.0 + 40.0);
}

/// `jop-devel.toml` prices what the jop-devel/jop tree runs, as its timing
/// class charges it in JopSim (r=1, w=2): bytecodes its microcode implements,
/// the linker's replacement of `iinc`, JopSim's 80-cycle Java dispatch.
#[test]
fn the_jop_devel_tree_model() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-devel.toml");
    let m = TimingModel::load(&path).unwrap();
    let r = rows(&m);
    for (op, cycles) in [
        ("iinc", 4.0),
        ("laload", 47.0),
        ("daload", 47.0),
        ("lastore", 52.0),
        ("lneg", 34.0),
        ("lshl", 28.0),
        ("land", 8.0),
        ("i2l", 5.0),
        ("fconst_0", 1.0),
        ("dconst_0", 2.0),
        ("swap", 4.0),
        ("monitorenter", 19.0),
        ("monitorexit", 20.0),
        // Unchanged from the published table.
        ("iaload", 9.0),
        ("imul", 19.0),
        ("getfield", 10.0),
    ] {
        assert_eq!(row(&r, op).0, cycles, "{op}");
    }
    let (idiv, _) = m.cost_parts(0x6c, m.load_cost(true, 0), 0);
    assert_eq!(idiv, 80.0, "JopSim enters a Java-implemented bytecode in 80 cycles");
    assert!(!m.is_java(0x2f), "laload is microcode in this tree");
}
