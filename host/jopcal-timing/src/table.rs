//! The resolved per-opcode table, in the form calibrated tables are published:
//! the opcode mnemonic, the cycles on a method-cache hit and on a miss of a
//! 32-word method, and how JOP implements the opcode.

use crate::model::TimingModel;
use jopcal_classfile::opcode;

/// Method length (words) of the published table's miss column.
pub const MISS_WORDS: u32 = 32;

/// One row of the resolved table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub opcode: String,
    pub hit: f64,
    pub miss: f64,
    /// `microcode`, `java` (dispatch + routine parameter) or `jop` (JOP's own bytecodes).
    pub implementation: &'static str,
}

/// Resolves every opcode of `model` with its current parameters.
pub fn rows(model: &TimingModel) -> Vec<Row> {
    let b_hit = model.load_cost(true, MISS_WORDS);
    let b_miss = model.load_cost(false, MISS_WORDS);
    let mut out: Vec<Row> = opcode::all()
        .map(|(op, name)| Row {
            opcode: name.to_string(),
            hit: model.cost(op, b_hit, MISS_WORDS),
            miss: model.cost(op, b_miss, MISS_WORDS),
            implementation: if model.is_java(op) { "java" } else { "microcode" },
        })
        .collect();
    for name in model.native_names() {
        let c = model.native_cost(name).unwrap_or(0.0);
        out.push(Row {
            opcode: name.to_string(),
            hit: c,
            miss: c,
            implementation: "jop",
        });
    }
    out
}

/// Output formats of `jopcal table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Markdown,
    Latex,
}

/// Integral values print as integers, others with two decimals.
pub fn number(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.2}")
    }
}

const HEADER: [&str; 4] = ["opcode", "hit_cycles", "miss32_cycles", "implementation"];

/// Renders the table.
pub fn render(model: &TimingModel, format: Format) -> String {
    let rows = rows(model);
    let mut s = String::new();
    match format {
        Format::Csv => {
            s.push_str(&HEADER.join(","));
            s.push('\n');
            for r in &rows {
                s.push_str(&format!(
                    "{},{},{},{}\n",
                    r.opcode,
                    number(r.hit),
                    number(r.miss),
                    r.implementation
                ));
            }
        }
        Format::Markdown => {
            s.push_str(&format!("| {} |\n|---|---:|---:|---|\n", HEADER.join(" | ")));
            for r in &rows {
                s.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    r.opcode,
                    number(r.hit),
                    number(r.miss),
                    r.implementation
                ));
            }
        }
        Format::Latex => {
            // Some 200 rows: a longtable breaks across pages (and columns),
            // its header repeated on each.
            s.push_str("% needs \\usepackage{longtable,booktabs}; cycles with the method cache hit, and missed (a 32-word method)\n");
            s.push_str("\\begin{longtable}{@{}lrrl@{}}\n\\toprule\nopcode & hit & miss & implementation \\\\\n\\midrule\n\\endhead\n\\bottomrule\n\\endfoot\n");
            for r in &rows {
                s.push_str(&format!(
                    "\\texttt{{{}}} & {} & {} & {} \\\\\n",
                    r.opcode.replace('_', "\\_"),
                    number(r.hit),
                    number(r.miss),
                    r.implementation
                ));
            }
            s.push_str("\\end{longtable}\n");
        }
    }
    s
}
