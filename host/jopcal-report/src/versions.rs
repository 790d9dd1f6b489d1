//! Two versions of the processor compared (`jopcal regress --against`):
//! each benchmark's change taken apart by bytecode, and the report of it
//! (`regress.md`, `regress.csv`, `regress-bytecodes.csv`).
//!
//! A benchmark's change is explained twice. By the tables: each bytecode's
//! count on the baseline times the change of its cycles in the timing table
//! each side's microcode gives; what that leaves of the measured change is
//! the rest (paths that depend on operands, the method cache, a change the
//! table cannot hold). By the virtual board: each bytecode's cycles in the
//! timed region on either side, as the board as each side's processor ran
//! them, whose differences add up to the board's change exactly.

use crate::number::thousands as thousands_f;

fn thousands(v: u64) -> String {
    thousands_f(v as f64)
}
use crate::regress::Regression;
use std::fmt::Write as _;

/// One bytecode's timing in each side's table (cycles on a method-cache hit).
#[derive(Debug, Clone, PartialEq)]
pub struct TableChange {
    pub op: u8,
    pub name: String,
    pub cycles: [f64; 2],
}

impl TableChange {
    pub fn change(&self) -> f64 {
        self.cycles[1] - self.cycles[0]
    }
}

/// One bytecode in one benchmark's timed region, on each side's virtual board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpRegion {
    pub count: [u64; 2],
    pub cycles: [u64; 2],
}

impl OpRegion {
    pub fn change(&self) -> i64 {
        self.cycles[1] as i64 - self.cycles[0] as i64
    }
}

/// One benchmark on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchChange {
    pub benchmark: String,
    /// The target's counts (mean over runs), baseline then candidate.
    pub measured: [f64; 2],
    /// Per opcode, the timed region on each side's virtual board (an error
    /// saying why where a side's board could not take the region apart).
    pub by_op: Result<Box<[OpRegion; 256]>, crate::error::NotTakenApart>,
}

impl BenchChange {
    pub fn change(&self) -> f64 {
        self.measured[1] - self.measured[0]
    }

    /// The change the tables explain: baseline count times table change, summed.
    pub fn explained(&self, tables: &[TableChange]) -> Option<f64> {
        let by_op = self.by_op.as_ref().ok()?;
        Some(
            tables
                .iter()
                .map(|t| by_op[usize::from(t.op)].count[0] as f64 * t.change())
                .sum(),
        )
    }

    /// The board's own change over the region (candidate minus baseline).
    pub fn board_change(&self) -> Option<i64> {
        let by_op = self.by_op.as_ref().ok()?;
        Some(by_op.iter().map(OpRegion::change).sum())
    }
}

/// Whether the virtual board follows the change (see `jopcal_pipeline::versions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelCheck {
    /// The measurements are the RTL's own: nothing to check.
    NotNeeded(String),
    /// The hardware is the same on both sides: the board follows microcode and Java.
    SameHardware,
    /// The board agreed with the candidate's RTL, bytecode for bytecode, on this.
    Agrees(String),
    /// It did not: what differed first.
    Differs(String),
    /// The hardware differs and the check could not run: why.
    Unchecked(String),
}

impl ModelCheck {
    /// Whether the comparison can be trusted as the processor's.
    pub fn holds(&self) -> bool {
        matches!(
            self,
            ModelCheck::NotNeeded(_) | ModelCheck::SameHardware | ModelCheck::Agrees(_)
        )
    }

    pub fn sentence(&self) -> String {
        match self {
            ModelCheck::NotNeeded(why) => why.clone(),
            ModelCheck::SameHardware => {
                "the two versions' hardware description is the same: the virtual board follows a change of the microcode and the Java runtime".into()
            }
            ModelCheck::Agrees(what) => format!("the virtual board as the candidate agrees with the candidate's RTL: {what}"),
            ModelCheck::Differs(what) => format!(
                "the virtual board does not model this change: use --target verilator ({what})"
            ),
            ModelCheck::Unchecked(why) => format!(
                "the hardware description differs and the virtual board does not follow such changes; it could not be checked against the candidate's RTL ({why}): use --target verilator"
            ),
        }
    }
}

/// Everything `regress.md` says.
#[derive(Debug, Clone)]
pub struct VersionsReport {
    /// What each side is, in words.
    pub labels: [String; 2],
    pub target: String,
    pub suite: String,
    /// Files that differ between the two versions.
    pub changed: Vec<String>,
    pub tables: Vec<TableChange>,
    pub benches: Vec<BenchChange>,
    pub model: ModelCheck,
    pub regression: Regression,
    /// Benchmarks that ran to no result on a side: why, on each.
    pub failed: Vec<(String, [Option<String>; 2])>,
}

fn signed(v: f64) -> String {
    let s = thousands(v.abs().round() as u64);
    if v.round() > 0.0 {
        format!("+{s}")
    } else if v.round() < 0.0 {
        format!("-{s}")
    } else {
        "0".into()
    }
}

fn per_execution(cycles: u64, count: u64) -> String {
    if count == 0 {
        "-".into()
    } else {
        let v = cycles as f64 / count as f64;
        if (v - v.round()).abs() < 0.005 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    }
}

/// The opcodes of a benchmark whose region cycles or counts changed, largest change first.
pub fn moved_ops(by_op: &[OpRegion; 256]) -> Vec<(u8, OpRegion)> {
    let mut v: Vec<(u8, OpRegion)> = by_op
        .iter()
        .enumerate()
        .filter(|(_, o)| o.cycles[0] != o.cycles[1] || o.count[0] != o.count[1])
        .map(|(k, o)| (k as u8, *o))
        .collect();
    v.sort_by_key(|(op, o)| (std::cmp::Reverse(o.change().unsigned_abs()), *op));
    v
}

impl VersionsReport {
    /// Why the comparison fails, or `None` when it passes: the target not
    /// following the change (its counts are then not the processor's),
    /// benchmarks that moved past the threshold the way that fails, and
    /// benchmarks that ran to no result on the candidate only. One that
    /// fails alike on both is the processor's as it was: listed, not failed.
    pub fn failure(&self) -> Option<String> {
        let mut why = Vec::new();
        if !self.model.holds() {
            why.push(self.model.sentence());
        }
        let moved: Vec<String> = self
            .regression
            .deltas
            .iter()
            .filter(|d| d.regressed)
            .map(|d| format!("{} {:+.3}%", d.benchmark, d.delta_pct))
            .collect();
        if !moved.is_empty() {
            why.push(format!(
                "{} benchmark(s) {} by more than {}%: {}",
                moved.len(),
                self.regression.fail_on.verb(),
                self.regression.threshold_pct,
                moved.join(", ")
            ));
        }
        let newly: Vec<&str> = self
            .failed
            .iter()
            .filter(|(_, w)| w[0].is_none() && w[1].is_some())
            .map(|(b, _)| b.as_str())
            .collect();
        if !newly.is_empty() {
            why.push(format!("{} failed on the candidate only", newly.join(", ")));
        }
        // In the baseline's measurements, not the candidate's, and not among
        // the failed runs either (the candidate's suite left it out).
        let gone: Vec<&str> = self
            .regression
            .missing
            .iter()
            .filter(|m| m.ends_with("(not in the candidate)"))
            .map(|m| m.trim_end_matches(" (not in the candidate)"))
            .filter(|b| !newly.contains(b))
            .collect();
        if !gone.is_empty() {
            why.push(format!("{} not measured on the candidate", gone.join(", ")));
        }
        if self.regression.deltas.is_empty() {
            why.push("no benchmark ran on both versions".into());
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// JUnit XML with the verdict of [`VersionsReport::failure`]: a case for
    /// the model, one per benchmark compared, one per benchmark that ran on
    /// the baseline and not on the candidate. The candidate's raw logs (read
    /// from beside `candidate_csv`) go to each benchmark's output.
    pub fn junit(&self, candidate_csv: &std::path::Path) -> String {
        use crate::regress::xml;
        let dir = candidate_csv.parent().unwrap_or(std::path::Path::new("."));
        let mut cases: Vec<(String, Option<String>, String)> = vec![(
            "model".into(),
            (!self.model.holds()).then(|| self.model.sentence()),
            self.model.sentence(),
        )];
        for d in &self.regression.deltas {
            let mut out = format!(
                "baseline {:.0} cycles, candidate {:.0} cycles, {:+.3}%\n",
                d.baseline, d.candidate, d.delta_pct
            );
            for l in d.logs.iter().filter(|l| !l.is_empty()) {
                if let Ok(t) = std::fs::read_to_string(dir.join(l)) {
                    out.push_str(&format!("--- {l}\n{t}"));
                }
            }
            let failure = d.regressed.then(|| {
                format!(
                    "{} {} by {:+.3}% ({:.0} -> {:.0} cycles), more than {}%",
                    d.benchmark,
                    self.regression.fail_on.verb(),
                    d.delta_pct,
                    d.baseline,
                    d.candidate,
                    self.regression.threshold_pct
                )
            });
            cases.push((d.benchmark.clone(), failure, out));
        }
        for (b, why) in &self.failed {
            if why[0].is_none() {
                let reason = why[1].clone().unwrap_or_default();
                cases.push((
                    b.clone(),
                    Some(format!("{b} failed on the candidate only: {reason}")),
                    reason,
                ));
            }
        }
        let failures = cases.iter().filter(|c| c.1.is_some()).count();
        let mut s = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"jopcal regress\" tests=\"{}\" failures=\"{failures}\">\n",
            cases.len()
        );
        for (name, failure, out) in &cases {
            s.push_str(&format!("<testcase classname=\"cycles\" name=\"{}\">\n", xml(name)));
            if let Some(f) = failure {
                s.push_str(&format!("<failure message=\"{}\"/>\n", xml(f)));
            }
            s.push_str(&format!("<system-out>{}</system-out>\n</testcase>\n", xml(out)));
        }
        s.push_str("</testsuite>\n</testsuites>\n");
        s
    }

    /// `regress.md`.
    pub fn markdown(&self, name: impl Fn(u8) -> String) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Regression: {} against {}\n", self.labels[1], self.labels[0]);
        let _ = writeln!(
            s,
            "Suite `{}` on `{}`. Baseline: {}. Candidate: {}.\n",
            self.suite, self.target, self.labels[0], self.labels[1]
        );
        if self.changed.is_empty() {
            let _ = writeln!(s, "The two versions hold the same files.\n");
        } else {
            let shown: Vec<String> = self.changed.iter().take(12).map(|f| format!("`{f}`")).collect();
            let more = self.changed.len().saturating_sub(12);
            let _ = writeln!(
                s,
                "Files that differ ({}): {}{}.\n",
                self.changed.len(),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        let _ = writeln!(
            s,
            "**Model:** {}.{}\n",
            self.model.sentence(),
            if self.model.holds() {
                ""
            } else {
                " The counts below are not the processor's."
            }
        );
        let _ = writeln!(
            s,
            "**Verdict:** {} (a benchmark fails when it {} by more than {}%).\n",
            match self.failure() {
                None => "passed".to_string(),
                Some(why) => format!("failed: {why}"),
            },
            self.regression.fail_on.verb(),
            self.regression.threshold_pct
        );
        for m in &self.regression.missing {
            let _ = writeln!(s, "- Measured on one version only: {m}.");
        }
        if !self.regression.missing.is_empty() {
            s.push('\n');
        }
        if !self.failed.is_empty() {
            let _ = writeln!(s, "**Ran to no result:**\n");
            for (b, why) in &self.failed {
                let on = match why {
                    [Some(_), Some(_)] => "on both versions, as before",
                    [None, Some(_)] => "on the candidate only: a regression",
                    _ => "on the baseline only: the candidate runs it",
                };
                let reason = why[1].as_ref().or(why[0].as_ref()).map_or("", |r| r.as_str());
                let _ = writeln!(s, "- {b}, {on}: {reason}");
            }
            s.push('\n');
        }
        let _ = writeln!(s, "## Bytecodes whose timing changed\n");
        if self.tables.is_empty() {
            let _ = writeln!(s, "No bytecode's cycles differ between the two microcode tables.\n");
        } else {
            let _ = writeln!(
                s,
                "Cycles on a method-cache hit, in the table each side's microcode gives.\n"
            );
            let _ = writeln!(s, "| bytecode | opcode | baseline | candidate | change |");
            let _ = writeln!(s, "|---|---:|---:|---:|---:|");
            for t in &self.tables {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {:+} |",
                    t.name,
                    t.op,
                    t.cycles[0],
                    t.cycles[1],
                    t.change()
                );
            }
            s.push('\n');
        }
        let _ = writeln!(s, "## Benchmarks\n");
        let _ = writeln!(
            s,
            "The change, and how much of it the tables explain (each bytecode's count on the baseline times its change in cycles); the rest is what they do not.\n"
        );
        let _ = writeln!(
            s,
            "| benchmark | baseline | candidate | change | change % | explained by the tables | rest |"
        );
        let _ = writeln!(s, "|---|---:|---:|---:|---:|---:|---:|");
        for b in &self.benches {
            let pct = 100.0 * b.change() / b.measured[0];
            let (exp, rest) = match b.explained(&self.tables) {
                Some(e) => (signed(e), signed(b.change() - e)),
                None => ("-".into(), "-".into()),
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {:+.3}% | {} | {} |",
                b.benchmark,
                thousands(b.measured[0].round() as u64),
                thousands(b.measured[1].round() as u64),
                signed(b.change()),
                pct,
                exp,
                rest
            );
        }
        s.push('\n');
        let _ = writeln!(s, "## Where the cycles moved\n");
        let _ = writeln!(
            s,
            "Per benchmark, the bytecodes whose cycles in the timed region changed on the virtual board as each side's processor: executions, cycles per execution on each side, and the change they add up to.\n"
        );
        for b in &self.benches {
            match &b.by_op {
                Err(why) => {
                    let _ = writeln!(s, "- **{}**: not taken apart ({why}).", b.benchmark);
                }
                Ok(by_op) => {
                    let moved = moved_ops(by_op);
                    let board: i64 = by_op.iter().map(OpRegion::change).sum();
                    // Where the board's change is not the target's, the board does not follow it all.
                    let target = if (board as f64 - b.change()).abs() > 0.5 {
                        format!(
                            "{} the target measured {}: the board does not follow {}this change",
                            if moved.is_empty() { ", but" } else { ";" },
                            signed(b.change()),
                            if moved.is_empty() { "" } else { "all of " }
                        )
                    } else {
                        String::new()
                    };
                    if moved.is_empty() {
                        let _ = writeln!(
                            s,
                            "- **{}**: no bytecode's cycles changed on the board{target}.",
                            b.benchmark
                        );
                        continue;
                    }
                    let parts: Vec<String> = moved
                        .iter()
                        .take(6)
                        .map(|(op, o)| {
                            if o.count[0] == o.count[1] {
                                format!(
                                    "`{}` {} × ({} → {}) = {}",
                                    name(*op),
                                    thousands(o.count[0]),
                                    per_execution(o.cycles[0], o.count[0]),
                                    per_execution(o.cycles[1], o.count[1]),
                                    signed(o.change() as f64)
                                )
                            } else {
                                format!(
                                    "`{}` {} → {} executions, {}",
                                    name(*op),
                                    thousands(o.count[0]),
                                    thousands(o.count[1]),
                                    signed(o.change() as f64)
                                )
                            }
                        })
                        .collect();
                    let more = moved.len().saturating_sub(6);
                    let _ = writeln!(
                        s,
                        "- **{}** ({} on the board{target}): {}{}.",
                        b.benchmark,
                        signed(board as f64),
                        parts.join("; "),
                        if more > 0 {
                            format!("; and {more} more bytecodes")
                        } else {
                            String::new()
                        }
                    );
                }
            }
        }
        s
    }

    /// `regress.csv`: a row per benchmark.
    pub fn csv(&self) -> String {
        let mut s = String::from("benchmark,baseline,candidate,change,change_pct,explained,rest,board_change,status\n");
        for b in &self.benches {
            let d = self.regression.deltas.iter().find(|d| d.benchmark == b.benchmark);
            let status = match d {
                Some(d) if d.regressed => "fail",
                Some(_) => "pass",
                None => "missing",
            };
            let exp = b.explained(&self.tables);
            let _ = writeln!(
                s,
                "{},{},{},{},{:.6},{},{},{},{status}",
                b.benchmark,
                b.measured[0],
                b.measured[1],
                b.change(),
                100.0 * b.change() / b.measured[0],
                exp.map_or(String::new(), |e| e.to_string()),
                exp.map_or(String::new(), |e| (b.change() - e).to_string()),
                b.board_change().map_or(String::new(), |c| c.to_string()),
            );
        }
        s
    }

    /// `regress-bytecodes.csv`: per benchmark, each bytecode of its region
    /// on either side, with both tables' cycles.
    pub fn bytecodes_csv(&self, name: impl Fn(u8) -> String, table: impl Fn(u8) -> [f64; 2]) -> String {
        let mut s = String::from(
            "benchmark,opcode,bytecode,count_baseline,count_candidate,cycles_baseline,cycles_candidate,table_baseline,table_candidate\n",
        );
        for b in &self.benches {
            let Ok(by_op) = &b.by_op else { continue };
            for (k, o) in by_op.iter().enumerate() {
                if o.count == [0, 0] {
                    continue;
                }
                let t = table(k as u8);
                let _ = writeln!(
                    s,
                    "{},{k},{},{},{},{},{},{},{}",
                    b.benchmark,
                    name(k as u8),
                    o.count[0],
                    o.count[1],
                    o.cycles[0],
                    o.cycles[1],
                    t[0],
                    t[1]
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regress::{compare, FailOn};
    use crate::testutil::measurement;

    fn report() -> VersionsReport {
        // iadd one cycle slower; 1,000 of them in the region.
        let mut by_op = Box::new([OpRegion::default(); 256]);
        by_op[0x60] = OpRegion {
            count: [1000, 1000],
            cycles: [1000, 2000],
        };
        by_op[0x15] = OpRegion {
            count: [500, 500],
            cycles: [1000, 1000],
        };
        let base = vec![measurement("Kfl", 100_000)];
        let cand = vec![measurement("Kfl", 101_000)];
        VersionsReport {
            labels: ["HEAD (abc)".into(), "the tree as it is".into()],
            target: "emu".into(),
            suite: "jembench".into(),
            changed: vec!["asm/src/jvm.asm".into()],
            tables: vec![TableChange {
                op: 0x60,
                name: "iadd".into(),
                cycles: [1.0, 2.0],
            }],
            benches: vec![BenchChange {
                benchmark: "Kfl".into(),
                measured: [100_000.0, 101_000.0],
                by_op: Ok(by_op),
            }],
            model: ModelCheck::SameHardware,
            regression: compare(&base, &cand, 0.5, FailOn::Slower).unwrap(),
            failed: vec![(
                "Raytrace".into(),
                [Some("stack overflow".into()), Some("stack overflow".into())],
            )],
        }
    }

    #[test]
    fn a_one_cycle_change_is_explained_by_its_bytecode_alone() {
        let r = report();
        let b = &r.benches[0];
        assert_eq!(b.explained(&r.tables), Some(1000.0));
        assert_eq!(b.board_change(), Some(1000));
        let md = r.markdown(|op| if op == 0x60 { "iadd".into() } else { format!("op{op}") });
        assert!(md.contains("| iadd | 96 | 1 | 2 | +1 |"), "{md}");
        assert!(
            md.contains("| Kfl | 100,000 | 101,000 | +1,000 | +1.000% | +1,000 | 0 |"),
            "{md}"
        );
        assert!(md.contains("`iadd` 1,000 × (1 → 2) = +1,000"), "{md}");
        assert!(
            md.contains("**Verdict:** failed: 1 benchmark(s) became slower by more than 0.5%: Kfl +1.000%"),
            "{md}"
        );
        assert!(
            md.contains("- Raytrace, on both versions, as before: stack overflow"),
            "{md}"
        );
        let csv = r.csv();
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("Kfl,100000,101000,1000,1.000000,1000,0,1000,fail"),
            "{csv}"
        );
        let ops = r.bytecodes_csv(
            |op| format!("op{op}"),
            |op| if op == 0x60 { [1.0, 2.0] } else { [2.0, 2.0] },
        );
        assert_eq!(ops.lines().count(), 3, "{ops}");
    }

    #[test]
    fn a_hardware_change_the_board_cannot_follow_never_reads_as_no_change() {
        for m in [
            ModelCheck::Differs("x".into()),
            ModelCheck::Unchecked("no verilator".into()),
        ] {
            assert!(!m.holds());
            assert!(m.sentence().contains("use --target verilator"), "{}", m.sentence());
        }
        assert!(ModelCheck::SameHardware.holds());
        let mut r = report();
        r.model = ModelCheck::Differs("putstatic 7 against 8".into());
        let md = r.markdown(|op| format!("op{op}"));
        assert!(
            md.contains("**Verdict:** failed: the virtual board does not model this change"),
            "{md}"
        );
        assert!(md.contains("The counts below are not the processor's."), "{md}");
        // Failing on both versions is listed, not failed; on the candidate only, failed.
        let mut r = report();
        r.regression.deltas[0].regressed = false;
        assert_eq!(r.failure(), None);
        r.failed = vec![("Queens".into(), [None, Some("stack overflow".into())])];
        assert_eq!(r.failure().as_deref(), Some("Queens failed on the candidate only"));
        let x = r.junit(std::path::Path::new("/nonexistent/measurements.csv"));
        assert!(x.contains("tests=\"3\" failures=\"1\""), "{x}");
        assert!(x.contains("Queens failed on the candidate only: stack overflow"), "{x}");
    }
}
