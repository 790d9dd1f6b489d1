//! `speed::one_hot_cases` against Verilator itself: a jump table in the shape
//! GHDL writes a VHDL `case` (a selector of one comparison per choice, a
//! choice of two values among them, `case` over one-hot constants, a default)
//! and its rewrite, driven with every input in one simulation, give the same
//! output for each.

use jopcal_sim::jop::speed::one_hot_cases;
use std::fmt::Write;

/// A table of `choices` distinct 8-bit bytecodes to 11-bit addresses, the
/// last choice two bytecodes, written as GHDL writes it.
fn ghdl_table(name: &str, choices: usize) -> String {
    let code = |k: usize| (k * 37 + 11) % 256;
    let mut v = format!("module {name}\n  (input  [7:0] bcode,\n   output [10:0] q);\n");
    let mut bits = Vec::new();
    for k in 0..choices {
        writeln!(v, "  wire c{k};").unwrap();
        bits.push(format!("c{k}"));
    }
    writeln!(
        v,
        "  wire [{}:0] sel;\n  reg [10:0] n1_o;\n  wire d0;\n  wire d1;",
        choices - 1
    )
    .unwrap();
    for k in 0..choices - 1 {
        writeln!(v, "  assign c{k} = bcode == 8'b{:08b};", code(k)).unwrap();
    }
    let last = choices - 1;
    writeln!(v, "  assign d0 = bcode == 8'b{:08b};", code(last)).unwrap();
    writeln!(v, "  assign d1 = bcode == 8'b{:08b};", code(last + 1)).unwrap();
    writeln!(v, "  assign c{last} = d0 | d1;").unwrap();
    bits.reverse();
    writeln!(v, "  assign sel = {{{}}};", bits.join(", ")).unwrap();
    v.push_str("  always @*\n    case (sel)\n");
    for k in (0..choices).rev() {
        let mut pattern = vec!['0'; choices];
        pattern[choices - 1 - k] = '1';
        let p: String = pattern.into_iter().collect();
        writeln!(v, "      {choices}'b{p}: n1_o <= 11'b{:011b};", (k * 53 + 7) % 2048).unwrap();
    }
    v.push_str("      default: n1_o <= 11'b00011101100; // jopcal: GHDL 2.0 drops the default\n    endcase\n  assign q = n1_o;\nendmodule\n");
    v
}

/// How many of the 256 bytecodes `candidate` (module `table_ours`) maps
/// to another address than `original` (module `table_ghdl`), simulated.
fn differing(original: &str, candidate: &str) -> u32 {
    let tb = "module tb;\n  reg [7:0] b;\n  wire [10:0] qa, qb;\n  integer i, differ = 0;\n  table_ghdl a (.bcode(b), .q(qa));\n  table_ours o (.bcode(b), .q(qb));\n  initial begin\n    for (i = 0; i < 256; i = i + 1) begin\n      b = i[7:0];\n      #1;\n      if (qa !== qb) differ = differ + 1;\n    end\n    $display(\"COMPARED 256, %0d differ\", differ);\n    $finish;\n  end\nendmodule\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tb.sv");
    std::fs::write(&file, format!("{original}\n{candidate}\n{tb}")).unwrap();
    let o = std::process::Command::new("verilator")
        .args(["--binary", "--timing", "-Wno-fatal", "--top-module", "tb", "-Mdir"])
        .arg(dir.path().join("obj"))
        .arg(&file)
        .output()
        .expect("verilator (scripts/setup installs it)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = std::process::Command::new(dir.path().join("obj/Vtb")).output().unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    out.split("COMPARED 256, ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{out}"))
}

#[test]
fn the_rewritten_jump_table_gives_every_bytecode_the_same_address() {
    let original = ghdl_table("table_ghdl", 60);
    let (rewritten, done) = one_hot_cases(&original.replace("table_ghdl", "table_ours"));
    assert_eq!((done.rewritten, done.left), (1, 0), "{rewritten}");
    assert!(!rewritten.contains("case (sel)"), "{rewritten}");
    assert_eq!(differing(&original, &rewritten), 0);
    // The comparison sees a wrong rewrite: two choices' tests swapped.
    let broken = rewritten
        .replacen("if (c59)", "if (c58)", 1)
        .replacen("else if (c58)", "else if (c59)", 1);
    assert_eq!(differing(&original, &broken), 3, "c58 once, c59 (two bytecodes) twice");
}
