//! Regression check between two measurement sets (two JOP versions, two
//! cache configurations): per-benchmark cycle deltas, a verdict against a
//! threshold, and JUnit XML with the raw logs attached for CI systems.

use crate::error::{RegressError, UnknownFailOn};
use jopcal_measure::Measurement;
use std::collections::BTreeMap;
use std::path::Path;

/// Which changes fail the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailOn {
    /// More cycles than the threshold allows (the default: a speed-up passes).
    #[default]
    Slower,
    /// Fewer cycles than the threshold allows.
    Faster,
    /// Either way.
    Any,
}

impl std::str::FromStr for FailOn {
    type Err = UnknownFailOn;
    fn from_str(s: &str) -> Result<FailOn, UnknownFailOn> {
        match s {
            "slower" => Ok(FailOn::Slower),
            "faster" => Ok(FailOn::Faster),
            "any" => Ok(FailOn::Any),
            _ => Err(UnknownFailOn(s.to_string())),
        }
    }
}

impl FailOn {
    /// Whether a change of `delta_pct` fails against `threshold_pct`.
    pub fn fails(self, delta_pct: f64, threshold_pct: f64) -> bool {
        match self {
            FailOn::Slower => delta_pct > threshold_pct,
            FailOn::Faster => -delta_pct > threshold_pct,
            FailOn::Any => delta_pct.abs() > threshold_pct,
        }
    }

    /// What fails, in words: "slower", "faster", "moved".
    pub fn verb(self) -> &'static str {
        match self {
            FailOn::Slower => "became slower",
            FailOn::Faster => "became faster",
            FailOn::Any => "moved",
        }
    }
}

/// One benchmark's change.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    pub benchmark: String,
    pub baseline: f64,
    pub candidate: f64,
    pub delta_pct: f64,
    /// It moved past the threshold in a direction that fails ([`FailOn`]).
    pub regressed: bool,
    /// Raw logs of the candidate's runs (paths relative to its file).
    pub logs: Vec<String>,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    pub deltas: Vec<Delta>,
    pub threshold_pct: f64,
    pub fail_on: FailOn,
    /// Benchmarks in only one of the two sets.
    pub missing: Vec<String>,
}

impl Regression {
    /// True when a benchmark moved more than the threshold, or one is missing.
    pub fn failed(&self) -> bool {
        self.deltas.iter().any(|d| d.regressed) || !self.missing.is_empty()
    }
}

/// Benchmarks in first-seen order, and per benchmark its mean cycles and raw logs.
type Means = (Vec<String>, BTreeMap<String, (f64, Vec<String>)>);

fn means(rows: &[Measurement]) -> Means {
    let mut order = Vec::new();
    let mut acc: BTreeMap<String, (f64, usize, Vec<String>)> = BTreeMap::new();
    for r in rows {
        let e = acc.entry(r.benchmark.clone()).or_insert_with(|| {
            order.push(r.benchmark.clone());
            (0.0, 0, Vec::new())
        });
        e.0 += r.value as f64;
        e.1 += 1;
        e.2.push(r.log.clone());
    }
    (
        order,
        acc.into_iter().map(|(k, (s, n, l))| (k, (s / n as f64, l))).collect(),
    )
}

/// Compares mean cycles per benchmark; a change past `threshold_pct` in the
/// direction `fail_on` names fails.
pub fn compare(
    baseline: &[Measurement],
    candidate: &[Measurement],
    threshold_pct: f64,
    fail_on: FailOn,
) -> Result<Regression, RegressError> {
    if let Some(r) = baseline.iter().chain(candidate).find(|r| r.value == 0) {
        return Err(RegressError::ZeroMeasurement {
            benchmark: r.benchmark.clone(),
            unit: r.unit,
        });
    }
    let units: std::collections::BTreeSet<String> =
        baseline.iter().chain(candidate).map(|r| r.unit.to_string()).collect();
    if units.len() > 1 {
        return Err(RegressError::MixedUnits(units.into_iter().collect()));
    }
    let (order, base) = means(baseline);
    let (corder, cand) = means(candidate);
    let mut deltas = Vec::new();
    let mut missing = Vec::new();
    for b in &order {
        match cand.get(b) {
            None => missing.push(format!("{b} (not in the candidate)")),
            Some((c, logs)) => {
                let base_c = base[b].0;
                let d = 100.0 * (c - base_c) / base_c;
                deltas.push(Delta {
                    benchmark: b.clone(),
                    baseline: base_c,
                    candidate: *c,
                    delta_pct: d,
                    regressed: fail_on.fails(d, threshold_pct),
                    logs: logs.clone(),
                });
            }
        }
    }
    for b in corder {
        if !base.contains_key(&b) {
            missing.push(format!("{b} (not in the baseline)"));
        }
    }
    Ok(Regression {
        deltas,
        threshold_pct,
        fail_on,
        missing,
    })
}

pub(crate) fn xml(s: &str) -> String {
    s.chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || !c.is_control())
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML: one test case per benchmark; a moved benchmark is a failure
/// with its numbers; the candidate's raw logs (read from beside `candidate_csv`) go to system-out.
pub fn junit(r: &Regression, candidate_csv: &Path) -> String {
    let dir = candidate_csv.parent().unwrap_or(Path::new("."));
    let failures = r.deltas.iter().filter(|d| d.regressed).count() + r.missing.len();
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"jopcal regress\" tests=\"{}\" failures=\"{failures}\">\n",
        r.deltas.len() + r.missing.len()
    );
    for d in &r.deltas {
        s.push_str(&format!(
            "<testcase classname=\"cycles\" name=\"{}\">\n",
            xml(&d.benchmark)
        ));
        if d.regressed {
            s.push_str(&format!(
                "<failure message=\"{}\"/>\n",
                xml(&format!(
                    "{} {} by {:+.3}% ({:.0} -> {:.0} cycles), more than {}%",
                    d.benchmark,
                    r.fail_on.verb(),
                    d.delta_pct,
                    d.baseline,
                    d.candidate,
                    r.threshold_pct
                ))
            ));
        }
        let mut out = format!(
            "baseline {:.0} cycles, candidate {:.0} cycles, {:+.3}%\n",
            d.baseline, d.candidate, d.delta_pct
        );
        for l in d.logs.iter().filter(|l| !l.is_empty()) {
            let text = std::fs::read(dir.join(l)).map(|b| String::from_utf8_lossy(&b).into_owned());
            out.push_str(&format!(
                "---- {l} ----\n{}\n",
                text.unwrap_or_else(|e| format!("(cannot read: {e})"))
            ));
        }
        s.push_str(&format!("<system-out>{}</system-out>\n</testcase>\n", xml(&out)));
    }
    for m in &r.missing {
        s.push_str(&format!(
            "<testcase classname=\"cycles\" name=\"{}\">\n<failure message=\"missing: {}\"/>\n</testcase>\n",
            xml(m),
            xml(m)
        ));
    }
    s.push_str("</testsuite>\n</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(b: &str, c: u64) -> Measurement {
        crate::testutil::measurement(b, c)
    }

    #[test]
    fn deltas_threshold_and_junit() {
        let r = compare(
            &[m("A", 1000), m("B", 1000)],
            &[m("A", 1005), m("B", 1100), m("C", 1)],
            1.0,
            FailOn::Slower,
        )
        .unwrap();
        assert_eq!(r.deltas.len(), 2);
        assert!(!r.deltas[0].regressed && r.deltas[1].regressed);
        assert_eq!(r.missing, vec!["C (not in the baseline)"]);
        assert!(r.failed());
        let x = junit(&r, Path::new("/nonexistent/measurements.csv"));
        assert!(x.contains("tests=\"3\" failures=\"2\""), "{x}");
        assert!(
            x.contains("B became slower by +10.000% (1000 -&gt; 1100 cycles), more than 1%"),
            "{x}"
        );
        let ok = compare(&[m("A", 1000)], &[m("A", 1009)], 1.0, FailOn::Slower).unwrap();
        assert!(!ok.failed());
        assert!(compare(&[m("A", 0)], &[m("A", 1)], 1.0, FailOn::Slower).is_err());
        // A speed-up fails only where faster changes are asked to.
        let faster = |on| compare(&[m("A", 1000)], &[m("A", 900)], 1.0, on).unwrap().failed();
        assert!(!faster(FailOn::Slower) && faster(FailOn::Faster) && faster(FailOn::Any));
        let slower = |on| compare(&[m("A", 1000)], &[m("A", 1100)], 1.0, on).unwrap().failed();
        assert!(slower(FailOn::Slower) && !slower(FailOn::Faster) && slower(FailOn::Any));
        assert_eq!("any".parse::<FailOn>(), Ok(FailOn::Any));
        assert!("up".parse::<FailOn>().is_err());
    }
}
