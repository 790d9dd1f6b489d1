//! Work-arounds for GHDL 2.0 (Debian bookworm's), each for one behaviour of
//! its synthesis or its Verilog writer that would make the Verilated JOP
//! differ from the VHDL. Each is found on jop-devel/jop; each is checked by
//! the lint step after it (`verilator --lint-only`: no circular logic, no
//! net driven twice) and by the tree tests running JOP on the result.

use regex::Regex;
use std::collections::{HashMap, HashSet};

/// GHDL 2.0 synthesizes no flip-flop for a record signal assigned in a
/// process with an asynchronous reset when the reset branch leaves a field
/// out (JOP's decode stage resets every field of `mem_in` but `wrf`): the
/// record becomes combinational logic feeding itself, so every memory
/// command the decoder issues is lost. The clocked branch of such processes
/// starts by giving each field its default (`mem_in.wrf <= '0';`); this adds
/// the defaults the reset branch lacks to it. The value differs from the
/// VHDL's only while reset is held. Returns the new text and, for each
/// addition, its 1-based line and the assignment.
pub fn reset_record_fields(text: &str) -> (String, Vec<(usize, String)>) {
    let reset = Regex::new(r"(?i)\bif\s*\(?\s*reset\s*=\s*'1'\s*\)?\s*then\b").expect("pattern");
    let clocked = Regex::new(r"(?i)\belsif\s+rising_edge\s*\(\s*\w+\s*\)\s*then\b").expect("pattern");
    let field = Regex::new(r"^\s*(\w+\.\w+)\s*<=\s*('[01]')\s*;").expect("pattern");
    let mut out = String::with_capacity(text.len() + 64);
    let mut added = Vec::new();
    let mut at = 0;
    while let Some(r) = reset.find_at(text, at) {
        let Some(c) = clocked.find_at(text, r.end()) else {
            break;
        };
        // Another reset branch before this clock edge belongs to a nested if: skip ahead.
        if reset.find_at(text, r.end()).is_some_and(|n| n.start() < c.start()) {
            out.push_str(&text[at..r.end()]);
            at = r.end();
            continue;
        }
        let reset_branch = &text[r.end()..c.start()];
        let assigned: HashSet<String> = reset_branch
            .lines()
            .filter_map(|l| field.captures(l).map(|m| m[1].to_ascii_lowercase()))
            .collect();
        // The defaults at the start of the clocked branch (blank lines and comments allowed).
        let mut missing = Vec::new();
        for l in text[c.end()..].lines().skip(1) {
            let t = l.trim();
            if t.is_empty() || t.starts_with("--") {
                continue;
            }
            let Some(m) = field.captures(l) else {
                break;
            };
            if !assigned.contains(&m[1].to_ascii_lowercase()) {
                missing.push(format!("{} <= {};", &m[1], &m[2]));
            }
        }
        let head = &text[at..c.start()];
        if missing.is_empty() {
            out.push_str(head);
        } else {
            let indent: String = reset_branch
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
                .unwrap_or_else(|| "\t\t".into());
            let line = crate::jop::vhdl::line_of(text, c.start());
            // After the reset branch's last line, before the indentation of `elsif`.
            let nl = head.rfind('\n').map_or(0, |i| i + 1);
            out.push_str(&head[..nl]);
            for m in &missing {
                out.push_str(&format!("{indent}{m} -- jopcal: GHDL 2.0 needs every field reset\n"));
                added.push((line, m.clone()));
            }
            out.push_str(&head[nl..]);
        }
        at = c.start();
        out.push_str(&text[at..c.end()]);
        at = c.end();
    }
    out.push_str(&text[at..]);
    (out, added)
}

/// GHDL 2.0 slices a constant wrongly when a process assigns it whole in one
/// branch of a `case` whose other branches assign slices of the same
/// signal: JOP's system I/O reads its CPU count, `std_logic_vector(
/// to_unsigned(cpu_cnt, 32))`, as 256 instead of 1, and the runtime waits
/// for CPUs that do not exist. Driven from a signal the slices come out
/// right, so each such conversion of a generic in an assignment becomes a
/// signal of the architecture (`jopcal_<generic>_<width>`), assigned once.
/// Returns the new text and the generics so moved.
pub fn hoist_generic_conversions(text: &str) -> (String, Vec<String>) {
    let conv =
        Regex::new(r"(?i)(<=\s*)std_logic_vector\s*\(\s*to_(unsigned|signed)\s*\(\s*(\w+)\s*,\s*(\d+)\s*\)\s*\)\s*;")
            .expect("pattern");
    let arch = Regex::new(r"(?im)^\s*architecture\s+\w+\s+of\s+(\w+)\s+is\b").expect("pattern");
    let begin = Regex::new(r"(?im)^begin\b").expect("pattern");
    let stripped = crate::jop::vhdl::strip_comments(text);
    let mut out = text.to_string();
    let mut moved = Vec::new();
    // Work from the last architecture back so earlier offsets stay valid.
    let archs: Vec<(usize, String)> = arch
        .captures_iter(&stripped)
        .map(|c| (c.get(0).map_or(0, |m| m.start()), c[1].to_ascii_lowercase()))
        .collect();
    for (k, (start, entity)) in archs.iter().enumerate().rev() {
        let end = archs.get(k + 1).map_or(stripped.len(), |a| a.0);
        let Ok(Some(e)) = crate::jop::vhdl::entity(&stripped, entity) else {
            continue;
        };
        let Some(b) = begin.find_at(&stripped[..end], *start) else {
            continue;
        };
        let body = &stripped[b.end()..end];
        let mut decls = String::new();
        let mut assigns = String::new();
        let mut edits: Vec<(usize, usize, String)> = Vec::new();
        for c in conv.captures_iter(body) {
            let g = c[3].to_ascii_lowercase();
            if !e.generics.iter().any(|d| d.name == g) {
                continue;
            }
            let name = format!("jopcal_{g}_{}", &c[4]);
            if !decls.contains(&name) {
                let _ = std::fmt::Write::write_fmt(
                    &mut decls,
                    format_args!("\tsignal {name} : std_logic_vector({} downto 0); -- jopcal: GHDL 2.0 mis-slices the constant\n", c[4].parse::<u32>().unwrap_or(1).saturating_sub(1)),
                );
                let _ = std::fmt::Write::write_fmt(
                    &mut assigns,
                    format_args!("\t{name} <= std_logic_vector(to_{}({g}, {}));\n", &c[2], &c[4]),
                );
                moved.push(g.clone());
            }
            let m = c.get(0).expect("match");
            edits.push((b.end() + m.start(), b.end() + m.end(), format!("{}{name};", &c[1])));
        }
        if edits.is_empty() {
            continue;
        }
        for (s, e, r) in edits.into_iter().rev() {
            out.replace_range(s..e, &r);
        }
        out.insert_str(b.end(), &format!("\n{}", assigns.trim_end_matches('\n')));
        out.insert_str(b.start(), &decls);
    }
    moved.sort();
    moved.dedup();
    (out, moved)
}

/// Verilog and SystemVerilog reserved words a VHDL name can be. GHDL 2.0
/// writes VHDL names as they are (JOP's UART FIFO has signals `buf` and
/// `do`), which Verilator rejects.
const RESERVED: &[&str] = &[
    "always_comb",
    "always_ff",
    "always_latch",
    "automatic",
    "bind",
    "bins",
    "bit",
    "break",
    "buf",
    "bufif0",
    "bufif1",
    "byte",
    "cell",
    "chandle",
    "checker",
    "class",
    "clocking",
    "cmos",
    "config",
    "const",
    "constraint",
    "context",
    "continue",
    "cover",
    "covergroup",
    "coverpoint",
    "cross",
    "deassign",
    "defparam",
    "design",
    "disable",
    "dist",
    "do",
    "edge",
    "endclass",
    "endgenerate",
    "endspecify",
    "endtable",
    "enum",
    "event",
    "expect",
    "export",
    "extends",
    "extern",
    "final",
    "first_match",
    "force",
    "foreach",
    "forever",
    "fork",
    "forkjoin",
    "genvar",
    "highz0",
    "highz1",
    "iff",
    "ifnone",
    "ignore_bins",
    "illegal_bins",
    "implies",
    "import",
    "incdir",
    "include",
    "inside",
    "instance",
    "int",
    "interface",
    "intersect",
    "join",
    "join_any",
    "join_none",
    "large",
    "let",
    "liblist",
    "local",
    "localparam",
    "logic",
    "longint",
    "macromodule",
    "matches",
    "medium",
    "modport",
    "nmos",
    "notif0",
    "notif1",
    "pmos",
    "priority",
    "program",
    "property",
    "pull0",
    "pull1",
    "pulldown",
    "pullup",
    "rand",
    "randc",
    "randcase",
    "randsequence",
    "rcmos",
    "real",
    "realtime",
    "ref",
    "release",
    "repeat",
    "restrict",
    "rnmos",
    "rpmos",
    "rtran",
    "rtranif0",
    "rtranif1",
    "scalared",
    "sequence",
    "shortint",
    "shortreal",
    "small",
    "solve",
    "specify",
    "specparam",
    "static",
    "string",
    "strong",
    "strong0",
    "strong1",
    "struct",
    "super",
    "supply0",
    "supply1",
    "table",
    "tagged",
    "task",
    "this",
    "throughout",
    "time",
    "timeprecision",
    "timeunit",
    "tran",
    "tranif0",
    "tranif1",
    "tri",
    "tri0",
    "tri1",
    "triand",
    "trior",
    "trireg",
    "typedef",
    "union",
    "unique",
    "unique0",
    "until",
    "uwire",
    "var",
    "vectored",
    "virtual",
    "void",
    "wait_order",
    "wand",
    "weak",
    "weak0",
    "weak1",
    "wildcard",
    "within",
    "wor",
    "xnor",
    "xor",
];

/// Renames nets GHDL named with a reserved word to `<name>_v`.
pub fn rename_reserved(verilog: &str) -> (String, Vec<String>) {
    let decl = Regex::new(r"(?m)^\s*(?:wire|reg|input|output|inout)\s*(?:signed\s*)?(?:\[[^\]]*\]\s*)?(\w+)\s*[;,]?")
        .expect("pattern");
    let reserved: HashSet<&str> = RESERVED.iter().copied().collect();
    let mut names: Vec<String> = decl
        .captures_iter(verilog)
        .map(|c| c[1].to_string())
        .filter(|n| reserved.contains(n.as_str()))
        .collect();
    names.sort();
    names.dedup();
    let mut out = verilog.to_string();
    for n in &names {
        let word = Regex::new(&format!(r"\b{}\b", regex::escape(n))).expect("pattern");
        out = word.replace_all(&out, format!("{n}_v").as_str()).into_owned();
    }
    (out, names)
}

/// GHDL 2.0 names the net of instance `i`'s output port `p` `i_p`; when the
/// architecture also has a signal `i_p` (JOP's core: signal `stk_aout` and
/// instance `stk` with port `aout`), the module declares the name twice and
/// the signal's `assign` and the instance's become a loop. This gives the
/// instance's net its own name, `i_p_o`, in its declaration, its port
/// connection and the `assign i_nNNN = i_p;` that reads it.
pub fn separate_instance_nets(verilog: &str) -> (String, Vec<String>) {
    let wire = Regex::new(r"^\s*wire\s*(?:\[[^\]]*\]\s*)?(\w+);").expect("pattern");
    let mut out = String::with_capacity(verilog.len());
    let mut fixed = Vec::new();
    for module in split_modules(verilog) {
        let mut lines: Vec<String> = module.lines().map(str::to_string).collect();
        let mut seen = HashSet::new();
        let mut dups = Vec::new();
        for l in lines.iter_mut() {
            if let Some(c) = wire.captures(l) {
                let n = c[1].to_string();
                if !seen.insert(n.clone()) {
                    *l = l.replacen(&format!("{n};"), &format!("{n}_o;"), 1);
                    dups.push(n);
                }
            }
        }
        for n in &dups {
            let port_of = |p: &str| n.len() > p.len() + 1 && n.ends_with(&format!("_{p}"));
            let conn = Regex::new(&format!(r"^(\s*\.(\w+)\(){}\)", regex::escape(n))).expect("pattern");
            let read = Regex::new(&format!(r"^(\s*assign\s+(\w+)_n\d+\s*=\s*){};", regex::escape(n))).expect("pattern");
            for l in lines.iter_mut() {
                if let Some(c) = conn.captures(l) {
                    if port_of(&c[2]) {
                        *l = conn.replace(l, format!("${{1}}{n}_o)").as_str()).into_owned();
                    }
                } else if let Some(c) = read.captures(l) {
                    if n.starts_with(&format!("{}_", &c[2])) {
                        *l = read.replace(l, format!("${{1}}{n}_o;").as_str()).into_owned();
                    }
                }
            }
            fixed.push(n.clone());
        }
        out.push_str(&lines.join("\n"));
        out.push('\n');
    }
    (out, fixed)
}

pub(crate) fn split_modules(verilog: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = verilog.match_indices("\nmodule ").map(|(i, _)| i + 1).collect();
    if verilog.starts_with("module ") {
        starts.insert(0, 0);
    }
    let mut parts = Vec::new();
    if starts.first().is_some_and(|&s| s > 0) {
        parts.push(&verilog[..starts[0]]);
    }
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(verilog.len());
        parts.push(verilog[s..e].trim_end_matches('\n'));
    }
    if starts.is_empty() {
        parts.push(verilog);
    }
    parts
}

/// Why a default could not be carried over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingDefault {
    pub module: String,
    pub net: String,
    pub why: String,
}

/// GHDL 2.0's Verilog writer drops the `when others` value of a one-hot
/// selection (a `pmux`): it writes `always @* case (s) ... endcase` without
/// `default:`, so Verilator keeps the last value instead (JOP's memory/IO
/// select then never selects memory). Its VHDL writer keeps it (`with s
/// select n <= ... v when others;`), with the same net names; this adds
/// each as `default: n <= v;`.
pub fn case_defaults(verilog: &str, netlist_vhdl: &str) -> Result<(String, usize), MissingDefault> {
    let with = Regex::new(r"(?s)with (\w+) select (\w+) <=\n(.*?);\n").expect("pattern");
    let mut defaults: HashMap<(String, String), String> = HashMap::new();
    for part in netlist_vhdl.split("\nentity ").skip(1) {
        let entity = part.split_whitespace().next().unwrap_or("").to_string();
        for c in with.captures_iter(part) {
            let last = c[3].lines().last().unwrap_or("").trim();
            if let Some(v) = last.strip_suffix(" when others") {
                defaults.insert((entity.clone(), c[2].to_string()), v.trim().to_string());
            }
        }
    }
    let case = Regex::new(r"(?s)always @\*\n(\s*)case \((\w+)\)\n(.*?)\n(\s*)endcase").expect("pattern");
    let target = Regex::new(r"^\s*[^:]+:\s*(\w+)\s*<=").expect("pattern");
    let mut out = String::with_capacity(verilog.len() + 4096);
    let mut added = 0;
    for module in split_modules(verilog) {
        let name = module
            .strip_prefix("module ")
            .and_then(|m| m.split_whitespace().next())
            .unwrap_or("")
            .to_string();
        let mut err = None;
        let fixed = case.replace_all(module, |c: &regex::Captures| {
            let body = &c[3];
            if body.contains("default:") {
                return c[0].to_string();
            }
            let Some(net) = body.lines().find_map(|l| target.captures(l).map(|t| t[1].to_string())) else {
                return c[0].to_string();
            };
            let value = match defaults.get(&(name.clone(), net.clone())) {
                Some(v) => v,
                None => {
                    err.get_or_insert(MissingDefault {
                        module: name.clone(),
                        net: net.clone(),
                        why: "the VHDL netlist has no `with ... select` for it".into(),
                    });
                    return c[0].to_string();
                }
            };
            // A default that is the output itself (`assign log = n5_o;` and
            // `log when others`) is a latch holding its value: the case without
            // a default already does that, and the default would be a loop.
            if module.contains(&format!("assign {value} = {net};")) {
                return c[0].to_string();
            }
            match vhdl_value_to_verilog(value) {
                Some(v) => {
                    added += 1;
                    format!(
                        "always @*\n{}case ({})\n{}\n{}  default: {net} <= {v}; // jopcal: GHDL 2.0 drops the default\n{}endcase",
                        &c[1], &c[2], body, &c[4], &c[4]
                    )
                }
                None => {
                    err.get_or_insert(MissingDefault {
                        module: name.clone(),
                        net: net.clone(),
                        why: format!("cannot write the VHDL value `{value}` in Verilog"),
                    });
                    c[0].to_string()
                }
            }
        });
        if let Some(e) = err {
            return Err(e);
        }
        out.push_str(&fixed);
        out.push('\n');
    }
    Ok((out, added))
}

/// A value of GHDL's VHDL netlist as Verilog: `'0'`, `"01X"`, `(7 downto 0 => 'X')` or a net name.
pub fn vhdl_value_to_verilog(v: &str) -> Option<String> {
    let bit = |c: char| match c {
        '0' | '1' => Some(c),
        'X' | 'x' | 'U' | '-' => Some('x'),
        'Z' | 'z' => Some('z'),
        _ => None,
    };
    if let Some(b) = v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        let mut cs = b.chars();
        let c = bit(cs.next()?)?;
        return cs.next().is_none().then(|| format!("1'b{c}"));
    }
    if let Some(bits) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        let bits: Option<String> = bits.chars().map(bit).collect();
        let bits = bits?;
        return (!bits.is_empty()).then(|| format!("{}'b{bits}", bits.len()));
    }
    let others = Regex::new(r"^\((\d+) downto 0 => '(.)'\)$").expect("pattern");
    if let Some(c) = others.captures(v) {
        let n: usize = c[1].parse().ok()?;
        let b = bit(c[2].chars().next()?)?;
        return Some(format!("{{{}{{1'b{b}}}}}", n + 1));
    }
    (!v.is_empty() && v.chars().all(is_ident_char)).then(|| v.to_string())
}

pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reset_branch_gets_the_fields_it_lacks() {
        let v = "process(clk, reset)\nbegin\n\tif (reset='1') then\n\t\tm.rd <= '0';\n\telsif rising_edge(clk) then\n\t\tm.rd <= '0';\n\t\tm.wrf <= '0';\n\t\tx <= y;\n\tend if;\nend process;\n";
        let (out, added) = reset_record_fields(v);
        assert_eq!(added, vec![(5, "m.wrf <= '0';".to_string())]);
        assert!(out.contains("\t\tm.wrf <= '0'; -- jopcal"), "{out}");
        assert!(out.contains("\telsif rising_edge(clk) then\n\t\tm.rd"), "{out}");
        // Nothing to add: unchanged.
        let same = v.replace(
            "\t\tm.rd <= '0';\n\telsif",
            "\t\tm.rd <= '0';\n\t\tm.wrf <= '0';\n\telsif",
        );
        assert_eq!(reset_record_fields(&same), (same.clone(), vec![]));
    }

    #[test]
    fn conversions_of_generics_become_signals() {
        let v = "entity s is\ngeneric (cpu_cnt : integer);\nport (a : in std_logic);\nend s;\narchitecture rtl of s is\n\tsignal x : std_logic;\nbegin\nprocess(clk) begin\n\tcase a is\n\t\twhen \"1011\" =>\n\t\t\trd <= std_logic_vector(to_unsigned(cpu_cnt, 32));\n\tend case;\nend process;\nend rtl;\n";
        let (out, moved) = hoist_generic_conversions(v);
        assert_eq!(moved, vec!["cpu_cnt"]);
        assert!(
            out.contains("\tsignal jopcal_cpu_cnt_32 : std_logic_vector(31 downto 0);"),
            "{out}"
        );
        assert!(
            out.contains("begin\n\tjopcal_cpu_cnt_32 <= std_logic_vector(to_unsigned(cpu_cnt, 32));\n"),
            "{out}"
        );
        assert!(out.contains("rd <= jopcal_cpu_cnt_32;"), "{out}");
        // Not a generic: unchanged.
        let other = v.replace("to_unsigned(cpu_cnt", "to_unsigned(count");
        assert_eq!(hoist_generic_conversions(&other).1, Vec::<String>::new());
    }

    #[test]
    fn reserved_words_and_twice_declared_nets_are_renamed() {
        let v = "module f\n  (input clk);\n  wire [7:0] buf;\n  assign buf = 8'b0;\nendmodule\n";
        let (out, names) = rename_reserved(v);
        assert_eq!(names, vec!["buf"]);
        assert!(out.contains("wire [7:0] buf_v;") && out.contains("assign buf_v ="));
        let v = "module c\n  (input clk);\n  wire [31:0] stk_aout;\n  wire [31:0] stk_aout;\n  assign aout = stk_aout;\n  assign stk_aout = stk_n9; // (signal)\n  assign stk_n9 = stk_aout; // (signal)\n  stack stk (\n    .din(stk_aout),\n    .aout(stk_aout));\nendmodule\n";
        let (out, fixed) = separate_instance_nets(v);
        assert_eq!(fixed, vec!["stk_aout"]);
        assert!(out.contains("wire [31:0] stk_aout_o;"), "{out}");
        assert!(out.contains(".aout(stk_aout_o)"), "{out}");
        assert!(out.contains(".din(stk_aout)"), "{out}");
        assert!(out.contains("assign stk_n9 = stk_aout_o;"), "{out}");
        assert!(out.contains("assign stk_aout = stk_n9;"), "{out}");
    }

    #[test]
    fn case_statements_get_the_default_of_the_vhdl_netlist() {
        let v = "module m\n  (input [1:0] s);\n  reg n5_o;\n  always @*\n    case (s)\n      2'b10: n5_o <= 1'b0;\n      2'b01: n5_o <= 1'b0;\n    endcase\nendmodule\n";
        let vh = "library ieee;\nentity m is\nend m;\narchitecture rtl of m is\nbegin\n  with s select n5_o <=\n    '0' when \"10\",\n    '0' when \"01\",\n    '1' when others;\nend rtl;\n";
        let (out, n) = case_defaults(v, vh).unwrap();
        assert_eq!(n, 1);
        assert!(out.contains("      default: n5_o <= 1'b1;"), "{out}");
        let hold = v.replace("endmodule", "  assign q = n5_o;\nendmodule");
        let (same, n) = case_defaults(&hold, &vh.replace("'1' when others", "q when others")).unwrap();
        assert_eq!((n, same.contains("default:")), (0, false));
        let e = case_defaults(v, "entity m is\nend m;\n").unwrap_err();
        assert_eq!(e.net, "n5_o");
        assert_eq!(
            vhdl_value_to_verilog("(9 downto 0 => 'X')").as_deref(),
            Some("{10{1'bx}}")
        );
        assert_eq!(vhdl_value_to_verilog("\"X01\"").as_deref(), Some("3'bx01"));
        assert_eq!(vhdl_value_to_verilog("n12_o").as_deref(), Some("n12_o"));
        assert_eq!(vhdl_value_to_verilog("a & b"), None);
    }
}
