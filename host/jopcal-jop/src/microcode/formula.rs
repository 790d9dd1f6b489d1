//! Cycle formulas of microcode paths: a sum of a linear form in the read and
//! write wait states `r`, `w` and the method-cache load `b`, and of clamped
//! forms `max(0, ...)` for memory accesses the microcode partly hides behind
//! instructions that run while the access is under way. Rendered in the
//! timing model's formula language, so a derived table is an ordinary model.

use std::fmt;

/// `c + r·r + w·w + b·b`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Linear {
    pub c: i64,
    pub r: i64,
    pub w: i64,
    pub b: i64,
}

impl Linear {
    pub fn constant(c: i64) -> Linear {
        Linear { c, ..Linear::default() }
    }

    pub fn plus(self, o: Linear) -> Linear {
        Linear {
            c: self.c + o.c,
            r: self.r + o.r,
            w: self.w + o.w,
            b: self.b + o.b,
        }
    }

    pub fn eval(&self, r: f64, w: f64, b: f64) -> f64 {
        self.c as f64 + self.r as f64 * r + self.w as f64 * w + self.b as f64 * b
    }

    fn is_zero(&self) -> bool {
        *self == Linear::default()
    }
}

impl fmt::Display for Linear {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut term = |f: &mut fmt::Formatter<'_>, k: i64, name: &str| -> fmt::Result {
            if k == 0 {
                return Ok(());
            }
            let sign = if k < 0 { "-" } else { "+" };
            let mag = k.unsigned_abs();
            let body = match (name, mag) {
                ("", m) => m.to_string(),
                (n, 1) => n.to_string(),
                (n, m) => format!("{m} * {n}"),
            };
            match (first, k < 0) {
                (true, false) => write!(f, "{body}")?,
                (true, true) => write!(f, "-{body}")?,
                (false, _) => write!(f, " {sign} {body}")?,
            }
            first = false;
            Ok(())
        };
        // Constants first as the published tables write them ("6 + 3 * r"),
        // except before a negative constant ("r - 3").
        if self.c >= 0 {
            term(f, self.c, "")?;
            term(f, self.r, "r")?;
            term(f, self.w, "w")?;
            term(f, self.b, "b")?;
        } else {
            term(f, self.r, "r")?;
            term(f, self.w, "w")?;
            term(f, self.b, "b")?;
            term(f, self.c, "")?;
        }
        if first {
            write!(f, "0")?;
        }
        Ok(())
    }
}

/// The cycles of one path: `fixed + Σ max(0, clamped_i)`.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Formula {
    pub fixed: Linear,
    pub clamped: Vec<Linear>,
}

impl Formula {
    /// Adds an access of `cycles` of which `hidden` run behind other instructions.
    pub fn add_access(&mut self, cycles: Linear, hidden: i64) {
        let left = cycles.plus(Linear::constant(-hidden));
        if cycles.r == 0 && cycles.w == 0 && cycles.b == 0 {
            self.fixed.c += left.c.max(0);
        } else if left.c >= 0 && left.r >= 0 && left.w >= 0 && left.b >= 0 {
            // Never negative for any wait states: no clamp needed.
            self.fixed = self.fixed.plus(left);
        } else {
            self.clamped.push(left);
        }
    }

    pub fn eval(&self, r: f64, w: f64, b: f64) -> f64 {
        self.fixed.eval(r, w, b) + self.clamped.iter().map(|l| l.eval(r, w, b).max(0.0)).sum::<f64>()
    }

    /// Whether the cycles depend on the method cache's load (`b`).
    pub fn loads_bytecode(&self) -> bool {
        self.fixed.b != 0 || self.clamped.iter().any(|l| l.b != 0)
    }
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if !self.fixed.is_zero() || self.clamped.is_empty() {
            parts.push(self.fixed.to_string());
        }
        parts.extend(self.clamped.iter().map(|l| format!("max(0, {l})")));
        write!(f, "{}", parts.join(" + "))
    }
}

/// The worst case over several paths, as one formula text: the paths'
/// distinct formulas under `max(...)`.
pub fn worst_case(paths: &[Formula]) -> String {
    // Paths of constant cycles: the dearest is the worst case.
    if paths
        .iter()
        .all(|f| f.clamped.is_empty() && f.fixed.r == 0 && f.fixed.w == 0 && f.fixed.b == 0)
    {
        return paths.iter().map(|f| f.fixed.c).max().unwrap_or(0).to_string();
    }
    let mut distinct: Vec<&Formula> = paths.iter().collect();
    distinct.sort();
    distinct.dedup();
    let mut text = distinct.last().map_or_else(|| "0".to_string(), |f| f.to_string());
    for f in distinct.iter().rev().skip(1) {
        text = format!("max({f}, {text})");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_as_the_published_tables_do() {
        let l = Linear {
            c: 6,
            r: 3,
            ..Linear::default()
        };
        assert_eq!(l.to_string(), "6 + 3 * r");
        let h = Linear {
            c: -3,
            r: 1,
            ..Linear::default()
        };
        assert_eq!(h.to_string(), "r - 3");
        let mut f = Formula {
            fixed: Linear {
                c: 73,
                r: 1,
                ..Linear::default()
            },
            clamped: vec![],
        };
        f.add_access(
            Linear {
                b: 1,
                ..Linear::default()
            },
            37,
        );
        assert_eq!(f.to_string(), "73 + r + max(0, b - 37)");
        assert_eq!(f.eval(1.0, 2.0, 4.0), 74.0);
        assert_eq!(f.eval(1.0, 2.0, 40.0), 77.0);
        assert_eq!(Formula::default().to_string(), "0");
    }

    #[test]
    fn worst_case_names_each_distinct_path_once() {
        let a = Formula {
            fixed: Linear::constant(14),
            clamped: vec![],
        };
        let b = Formula {
            fixed: Linear::constant(20),
            clamped: vec![],
        };
        assert_eq!(worst_case(&[a.clone(), a.clone()]), "14");
        assert_eq!(worst_case(&[b.clone(), a.clone(), a.clone()]), "20");
        let r = Formula {
            fixed: Linear {
                c: 10,
                r: 1,
                ..Linear::default()
            },
            clamped: vec![],
        };
        assert_eq!(worst_case(&[b, r, a]), "max(10 + r, max(14, 20))");
    }
}
