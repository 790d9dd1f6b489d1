//! Timing-table files (`calibration/*.toml`): loading, validation and
//! evaluation. See `calibration/jop-wcet.toml` for the format. A model is
//! checked completely when it loads (every opcode present, every name
//! defined, no formula defined through itself), so evaluation cannot fail.

use crate::error::ModelError;
use crate::expr::Expr;
use jopcal_classfile::opcode;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The `[methods]` value that prices a method by the host's profiled code.
pub const HOST_CODE: &str = "host";

/// How one opcode is charged.
#[derive(Debug, Clone, PartialEq)]
pub enum Cost {
    /// Implemented in microcode/hardware: the formula is the cost.
    Formula(Expr),
    /// Implemented in Java on JOP: dispatch cost plus the routine's own cost parameter.
    Java { dispatch: Expr, routine: String },
}

/// A loaded, validated timing model with its current parameter values.
#[derive(Debug, Clone)]
pub struct TimingModel {
    pub name: String,
    pub description: String,
    pub path: PathBuf,
    params: BTreeMap<String, f64>,
    formulas: BTreeMap<String, Expr>,
    cache_hit: Expr,
    cache_miss: Expr,
    opcodes: Vec<Cost>,
    native: BTreeMap<String, Cost>,
    /// Whole-call costs of methods whose host code is not what JOP runs
    /// (library differences), by `pkg.Class.name(desc)`.
    methods: BTreeMap<String, Expr>,
    /// Costs of bytecodes whose microcode path an operand decides (a long
    /// shift's count; `[operands]`): per opcode, (first, last operand,
    /// cost) ranges. An execution the profile recorded the operand of is
    /// priced by its range, others by the opcode's formula.
    operands: BTreeMap<u8, Vec<(u8, u8, Expr)>>,
    /// What the target's linker does to the bytecode before it runs.
    pub(crate) linker: Linker,
    /// The methods of JOP's runtime that a bytecode it implements in Java
    /// runs (`[routines]`), by the bytecode's name: the routine first, then
    /// the methods it calls, each as `pkg.Class.name(desc)`. They take the
    /// method cache's blocks as the program's own methods do.
    routines: BTreeMap<String, Vec<String>>,
    /// Upper bounds of parameters: what no such cost can exceed on the
    /// processor; a fit holds a parameter there rather than go beyond.
    max: BTreeMap<String, f64>,
}

/// Rewrites a JOP linker applies to the program before it runs (`[linker]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Linker {
    /// Every `iinc local, c` becomes `iload local; <push c>; iadd; istore
    /// local` (the original JOP tree's link step), priced from those
    /// opcodes' own entries for each (local, c) the profile recorded.
    #[serde(default)]
    pub replace_iinc: bool,
    /// A field access whose field is a reference, a long or a double becomes
    /// JOP's typed access (`putfield_ref`, `getfield_long`, ...; the original
    /// tree's linker), priced by its `[native]` entry for each access the
    /// profile recorded the field kind of.
    #[serde(default)]
    pub typed_fields: bool,
    /// A `synchronized` method gets `aload_0; monitorenter` at its start and
    /// `aload_0; monitorexit` before each return (the original tree's
    /// InsertSynchronized): priced per call and per return the profile
    /// recorded of such a method, which has no monitor bytecodes on the host.
    #[serde(default)]
    pub synchronized_methods: bool,
}

/// The memory wait states of JOP's formulas: whole numbers of cycles.
pub const WAIT_STATES: [&str; 2] = ["r", "w"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    model: RawMeta,
    #[serde(default)]
    params: BTreeMap<String, Spanned<f64>>,
    cache: Option<RawCache>,
    #[serde(default)]
    formulas: BTreeMap<String, Spanned<String>>,
    #[serde(default)]
    opcodes: BTreeMap<Spanned<String>, Spanned<RawCost>>,
    #[serde(default)]
    native: BTreeMap<String, Spanned<RawCost>>,
    #[serde(default)]
    methods: BTreeMap<String, Spanned<String>>,
    /// `[operands.<opcode>]`: `"<value>" = "cost"` or `"<first>-<last>" = "cost"`.
    #[serde(default)]
    operands: BTreeMap<Spanned<String>, BTreeMap<Spanned<String>, Spanned<String>>>,
    linker: Option<Linker>,
    /// `[routines]`: `<bytecode> = ["pkg.Class.routine(desc)", "its callee", ...]`.
    #[serde(default)]
    routines: BTreeMap<Spanned<String>, Vec<String>>,
    /// The most each named parameter can physically be (`[max]`).
    #[serde(default)]
    max: BTreeMap<String, Spanned<f64>>,
    /// Tables carried inside this file, by the name a `base` gives them
    /// (a fitted table holds the chain it derives from, so that it is one
    /// file that loads anywhere).
    #[serde(default)]
    bases: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMeta {
    name: String,
    #[serde(default)]
    description: String,
    /// A model this one derives from (path relative to this file): its
    /// parameters, formulas, cache costs, opcodes and native costs apply
    /// unless this file gives its own.
    base: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCache {
    hit: Spanned<String>,
    miss: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawCost {
    Formula(String),
    Java { java: String, routine: String },
}

/// How many carried tables deep a base may be found (a real chain is a few).
const MAX_CARRIED_DEPTH: usize = 16;

/// Names every formula may use besides parameters and formulas.
pub const CONTEXT_NAMES: [&str; 2] = ["b", "n"];

/// In an `[operands]` cost: the bytecode's own dispatch (for one JOP runs
/// in Java, the table's dispatch formula at a cache hit), so that a cost by
/// the operand adds the routine's path to the dispatch the table derives.
pub const DISPATCH: &str = "dispatch";

/// Line and column (1-based; the column in bytes) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    line_col::LineColLookup::new(text).get(offset.min(text.len()))
}

/// Makes errors that name a place in one model file.
struct Locator<'a> {
    text: &'a str,
    path: &'a str,
}

impl Locator<'_> {
    fn at(&self, offset: usize, message: String) -> ModelError {
        let (line, column) = line_col(self.text, offset);
        ModelError::At {
            path: self.path.to_string(),
            line,
            column,
            message,
        }
    }
}

/// One `[opcodes]` entry (`what` names it in errors): a formula, or a Java
/// routine's dispatch formula with the parameter that prices the routine.
fn opcode_cost(
    locator: &Locator,
    what: &str,
    cost: &Spanned<RawCost>,
    params: &BTreeMap<String, f64>,
) -> Result<Cost, ModelError> {
    let start = cost.span().start;
    Ok(match cost.get_ref() {
        RawCost::Formula(s) => {
            let e = Expr::parse(s).map_err(|e| locator.at(start + e.column, format!("{what}: {}", e.message)))?;
            Cost::Formula(e)
        }
        RawCost::Java { java, routine } => {
            let e = Expr::parse(java).map_err(|e| locator.at(start, format!("{what}: java: {}", e.message)))?;
            if !params.contains_key(routine) {
                return Err(locator.at(
                    start,
                    format!("{what}: routine parameter '{routine}' is not in [params]"),
                ));
            }
            Cost::Java {
                dispatch: e,
                routine: routine.clone(),
            }
        }
    })
}

/// `"5"` or `"1-31"`: the operands a `[operands]` key names.
fn operand_range(key: &str) -> Option<(u8, u8)> {
    let (a, b) = key.split_once('-').unwrap_or((key, key));
    let (a, b): (u8, u8) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some((a, b))
}

/// Formulas may use formulas, but not themselves, directly or not: the
/// first of this file's formulas that does is the error.
fn check_not_circular(
    locator: &Locator,
    own: &BTreeMap<String, Spanned<String>>,
    formulas: &BTreeMap<String, Expr>,
) -> Result<(), ModelError> {
    for k in own.keys() {
        let mut stack = vec![(k.as_str(), vec![k.as_str()])];
        while let Some((cur, path)) = stack.pop() {
            for n in formulas[cur].names() {
                if n == k {
                    return Err(locator.at(
                        own[k].span().start,
                        format!("formula '{k}' is defined through itself ({} -> {k})", path.join(" -> ")),
                    ));
                }
                if formulas.contains_key(n) && !path.contains(&n) {
                    let mut deeper = path.clone();
                    deeper.push(n);
                    stack.push((n, deeper));
                }
            }
        }
    }
    Ok(())
}

/// A closed expression's value at (`b`, `n`).
fn eval_closed(e: &Expr, b: f64, n: u32) -> f64 {
    e.eval(&|x| match x {
        "b" => b,
        "n" => f64::from(n),
        _ => 0.0,
    })
}

impl TimingModel {
    /// Loads and validates a model file.
    pub fn load(path: &Path) -> Result<TimingModel, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::File {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates model text; `path` is used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<TimingModel, ModelError> {
        Self::parse_carried(text, path, &BTreeMap::new(), 0)
    }

    /// [`Self::parse`], with `carried`: the tables the file that derives
    /// from this one carries (`[bases]`), looked up before the file system;
    /// `depth`: how many carried tables down this one is.
    fn parse_carried(
        text: &str,
        path: &Path,
        carried: &BTreeMap<String, String>,
        depth: usize,
    ) -> Result<TimingModel, ModelError> {
        let p = path.display().to_string();
        let locator = Locator { text, path: &p };
        let at = |offset: usize, message: String| locator.at(offset, message);
        let raw: RawModel = toml::from_str(text).map_err(|e| match e.span() {
            Some(s) => at(s.start, e.message().trim().to_string()),
            None => ModelError::File {
                path: p.clone(),
                message: e.message().trim().to_string(),
            },
        })?;
        // A formula in a TOML string: its columns start one past the opening quote.
        let formula = |s: &Spanned<String>, what: &str| -> Result<Expr, ModelError> {
            Expr::parse(s.get_ref()).map_err(|e| at(s.span().start + e.column, format!("{what}: {}", e.message)))
        };
        let mut carried = carried.clone();
        carried.extend(raw.bases.iter().map(|(k, v)| (k.clone(), v.clone())));
        let base = match &raw.model.base {
            None => None,
            Some(b) if carried.contains_key(b.get_ref()) => {
                let name = b.get_ref();
                // Each carried table is strictly inside the one before, so the
                // descent ends; the bound keeps a hostile file's depth small.
                if depth >= MAX_CARRIED_DEPTH {
                    return Err(at(b.span().start, "its carried bases nest too deep".into()));
                }
                // A carried table's errors name it inside this file.
                let inside = PathBuf::from(format!("{p} [bases.\"{name}\"]"));
                let mut rest = carried.clone();
                let text = rest.remove(name).unwrap_or_default();
                Some(
                    TimingModel::parse_carried(&text, &inside, &rest, depth + 1)
                        .map_err(|e| at(b.span().start, format!("base model: {e}")))?,
                )
            }
            Some(b) => {
                let dir = path.parent().unwrap_or(Path::new("."));
                let base_path = dir.join(b.get_ref());
                if base_path == path {
                    return Err(at(b.span().start, "a model cannot derive from itself".into()));
                }
                Some(TimingModel::load(&base_path).map_err(|e| at(b.span().start, format!("base model: {e}")))?)
            }
        };
        let mut params: BTreeMap<String, f64> = base.as_ref().map(|b| b.params.clone()).unwrap_or_default();
        params.extend(raw.params.iter().map(|(k, v)| (k.clone(), *v.get_ref())));
        for (k, v) in &raw.params {
            if CONTEXT_NAMES.contains(&k.as_str()) {
                return Err(at(
                    v.span().start,
                    format!("parameter name '{k}' is reserved for the cache context"),
                ));
            }
            if !v.get_ref().is_finite() {
                return Err(at(v.span().start, format!("parameter '{k}' is not a finite number")));
            }
        }
        let mut formulas = base.as_ref().map(|b| b.formulas.clone()).unwrap_or_default();
        let mut spans: Vec<(String, usize, Expr)> = Vec::new();
        for (k, v) in &raw.formulas {
            if params.contains_key(k) {
                return Err(at(v.span().start, format!("'{k}' is both a parameter and a formula")));
            }
            let e = formula(v, &format!("formula '{k}'"))?;
            spans.push((format!("formula '{k}'"), v.span().start, e.clone()));
            formulas.insert(k.clone(), e);
        }
        let (cache_hit, cache_miss) = match (&raw.cache, &base) {
            (Some(c), _) => {
                let hit = formula(&c.hit, "cache.hit")?;
                let miss = formula(&c.miss, "cache.miss")?;
                spans.push(("cache.hit".into(), c.hit.span().start, hit.clone()));
                spans.push(("cache.miss".into(), c.miss.span().start, miss.clone()));
                (hit, miss)
            }
            (None, Some(b)) => (b.cache_hit.clone(), b.cache_miss.clone()),
            (None, None) => {
                return Err(ModelError::File {
                    path: p,
                    message: "missing [cache] (hit and miss formulas)".into(),
                })
            }
        };
        let mut opcodes: Vec<Option<Cost>> = match &base {
            Some(b) => b.opcodes.iter().cloned().map(Some).collect(),
            None => vec![None; opcode::all().count()],
        };
        for (name, cost) in &raw.opcodes {
            let Some(op) = opcode::by_mnemonic(name.get_ref()) else {
                return Err(at(name.span().start, format!("unknown opcode '{}'", name.get_ref())));
            };
            let what = format!("opcode '{}'", name.get_ref());
            let c = opcode_cost(&locator, &what, cost, &params)?;
            let e = match &c {
                Cost::Formula(e) | Cost::Java { dispatch: e, .. } => e.clone(),
            };
            spans.push((what, cost.span().start, e));
            opcodes[op as usize] = Some(c);
        }
        let mut native = base.as_ref().map(|b| b.native.clone()).unwrap_or_default();
        for (k, v) in &raw.native {
            let what = format!("native '{k}'");
            let c = opcode_cost(&locator, &what, v, &params)?;
            let e = match &c {
                Cost::Formula(e) | Cost::Java { dispatch: e, .. } => e.clone(),
            };
            spans.push((what, v.span().start, e));
            native.insert(k.clone(), c);
        }
        // An opcode this file prices anew drops the base's costs by operand,
        // unless it is still a Java routine (a table derived from microcode
        // gives the routine's dispatch anew; its cost by the operand, the
        // routine's own work, stays the base's).
        let mut operands = base.as_ref().map(|b| b.operands.clone()).unwrap_or_default();
        for name in raw.opcodes.keys() {
            if let Some(op) = opcode::by_mnemonic(name.get_ref()) {
                if !matches!(opcodes[op as usize], Some(Cost::Java { .. })) {
                    operands.remove(&op);
                }
            }
        }
        for name in raw.native.keys() {
            if let Some(op) = crate::jop::native_opcode(name) {
                if !matches!(native.get(name), Some(Cost::Java { .. })) {
                    operands.remove(&op);
                }
            }
        }
        for (name, ranges) in &raw.operands {
            // A JVM opcode, or one of JOP's own (the linker's `putfield_ref`).
            let Some(op) = opcode::by_mnemonic(name.get_ref()).or_else(|| crate::jop::native_opcode(name.get_ref()))
            else {
                return Err(at(
                    name.span().start,
                    format!("[operands]: unknown opcode '{}'", name.get_ref()),
                ));
            };
            let mut parsed: Vec<(u8, u8, Expr)> = Vec::new();
            for (key, cost) in ranges {
                let what = format!("operands of '{}' {}", name.get_ref(), key.get_ref());
                let range = operand_range(key.get_ref()).ok_or_else(|| {
                    at(
                        key.span().start,
                        format!("{what}: an operand is a number 0-255 or a range such as 1-31"),
                    )
                })?;
                if let Some(other) = parsed.iter().find(|(a, b, _)| range.0 <= *b && *a <= range.1) {
                    return Err(at(
                        key.span().start,
                        format!("{what}: overlaps the range {}-{}", other.0, other.1),
                    ));
                }
                let e = formula(cost, &what)?;
                spans.push((what, cost.span().start, e.clone()));
                parsed.push((range.0, range.1, e));
            }
            parsed.sort_by_key(|(a, _, _)| *a);
            operands.insert(op, parsed);
        }
        let mut methods = base.as_ref().map(|b| b.methods.clone()).unwrap_or_default();
        for (k, v) in &raw.methods {
            // `"host"`: this model prices the method by the host's profiled code
            // again (a calibration that could not fit its whole-call cost says so).
            if v.get_ref().trim() == HOST_CODE {
                methods.remove(k);
                continue;
            }
            let e = formula(v, &format!("method '{k}'"))?;
            spans.push((format!("method '{k}'"), v.span().start, e.clone()));
            methods.insert(k.clone(), e);
        }
        for (what, start, e) in &spans {
            for n in e.names() {
                let dispatch = n == DISPATCH && what.starts_with("operands of");
                if !(params.contains_key(n) || formulas.contains_key(n) || CONTEXT_NAMES.contains(&n) || dispatch) {
                    return Err(at(*start, format!("{what}: unknown name '{n}'")));
                }
            }
        }
        check_not_circular(&locator, &raw.formulas, &formulas)?;
        let mut max = base.as_ref().map(|b| b.max.clone()).unwrap_or_default();
        for (k, v) in &raw.max {
            let bound = *v.get_ref();
            if !params.contains_key(k) {
                return Err(at(v.span().start, format!("max: '{k}' is not a parameter")));
            }
            if !bound.is_finite() || bound < 0.0 {
                return Err(at(
                    v.span().start,
                    format!("max: '{k}' must be a finite number, 0 or more"),
                ));
            }
            max.insert(k.clone(), bound);
        }
        for (k, bound) in &max {
            let v = params[k];
            if v > *bound {
                let offset = raw.params.get(k).map_or(0, |s| s.span().start);
                return Err(at(offset, format!("parameter '{k}' = {v} is above its max {bound}")));
            }
        }
        let mut routines = base.as_ref().map(|b| b.routines.clone()).unwrap_or_default();
        for (name, methods) in &raw.routines {
            let what = format!("[routines] '{}'", name.get_ref());
            let cost = match opcode::by_mnemonic(name.get_ref()) {
                Some(op) => opcodes[op as usize].as_ref(),
                None => native.get(name.get_ref()),
            };
            if !matches!(cost, Some(Cost::Java { .. })) {
                return Err(at(
                    name.span().start,
                    format!("{what}: not a bytecode this table implements in Java"),
                ));
            }
            if let Some(bad) = methods.iter().find(|m| !is_qualified_method(m)) {
                return Err(at(
                    name.span().start,
                    format!("{what}: '{bad}' is not a method as pkg.Class.name(descriptor)"),
                ));
            }
            if methods.is_empty() {
                routines.remove(name.get_ref());
            } else {
                routines.insert(name.get_ref().clone(), methods.clone());
            }
        }
        let missing: Vec<&str> = opcode::all()
            .filter(|(op, _)| opcodes[*op as usize].is_none())
            .map(|(_, n)| n)
            .collect();
        if !missing.is_empty() {
            return Err(ModelError::File {
                path: p,
                message: format!("[opcodes] lacks {} opcode(s): {}", missing.len(), missing.join(", ")),
            });
        }
        Ok(TimingModel {
            name: raw.model.name,
            description: raw.model.description,
            path: path.to_owned(),
            params,
            formulas,
            cache_hit,
            cache_miss,
            opcodes: opcodes.into_iter().map(|c| c.expect("checked above")).collect(),
            native,
            methods,
            operands,
            linker: raw.linker.or(base.as_ref().map(|b| b.linker)).unwrap_or_default(),
            routines,
            max,
        })
    }

    /// The target linker's rewrites.
    pub fn linker(&self) -> Linker {
        self.linker
    }

    /// Sets a parameter; unknown names are an error (a typo must not be ignored).
    pub fn set_param(&mut self, name: &str, value: f64) -> Result<(), ModelError> {
        match self.params.get_mut(name) {
            Some(v) => {
                *v = value;
                Ok(())
            }
            None => Err(ModelError::UnknownParam {
                name: name.to_string(),
                known: self.params.keys().cloned().collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Applies `NAME=NUMBER` overrides (the CLI's `--param`).
    pub fn apply_overrides(&mut self, overrides: &[String]) -> Result<(), ModelError> {
        for o in overrides {
            let (k, v) = o.split_once('=').ok_or_else(|| ModelError::BadOverride(o.clone()))?;
            let v: f64 = v.trim().parse().map_err(|_| ModelError::BadOverride(o.clone()))?;
            if !v.is_finite() {
                return Err(ModelError::BadOverride(o.clone()));
            }
            let name = k.trim();
            let bad = |why| ModelError::BadValue {
                name: name.to_string(),
                value: o.split_once('=').map_or("", |(_, t)| t.trim()).to_string(),
                why,
            };
            if v < 0.0 {
                return Err(bad("a cost or a wait state count cannot be negative; give 0 or more"));
            }
            if WAIT_STATES.contains(&name) && v.fract() != 0.0 {
                return Err(bad(
                    "memory wait states are whole cycles; give an integer such as 1, 2 or 3",
                ));
            }
            if let Some(&bound) = self.max.get(name) {
                if v > bound {
                    return Err(ModelError::AboveMax {
                        name: name.to_string(),
                        value: v.to_string(),
                        max: bound.to_string(),
                    });
                }
            }
            self.set_param(name, v)?;
        }
        Ok(())
    }

    /// The most parameter `name` can physically be, where the model says.
    pub fn max_of(&self, name: &str) -> Option<f64> {
        self.max.get(name).copied()
    }

    /// Current parameter values.
    pub fn params(&self) -> &BTreeMap<String, f64> {
        &self.params
    }

    /// The cost description of an opcode.
    /// The cost of opcode `op`: a JVM opcode's `[opcodes]` entry, or for
    /// JOP's own opcodes (202 and up) their `[native]` entry.
    pub fn opcode(&self, op: u8) -> Option<&Cost> {
        match self.opcodes.get(op as usize) {
            Some(c) => Some(c),
            None => self.native.get(crate::jop::opcode_name(op)),
        }
    }

    fn lookup(&self, name: &str, b: f64, n: f64) -> f64 {
        match name {
            "b" => b,
            "n" => n,
            _ => match self.params.get(name) {
                Some(v) => *v,
                None => self
                    .formulas
                    .get(name)
                    .map_or(0.0, |f| f.eval(&|x| self.lookup(x, b, n))),
            },
        }
    }

    /// `e` with this model's parameters and formulas put in: a formula of
    /// `b` and `n` alone, whose [`Expr::eval`] gives what [`TimingModel::eval`]
    /// gives for `e`, in a fraction of the time (for costs evaluated at
    /// every method size).
    pub fn closed(&self, e: &Expr) -> Expr {
        e.fold(&|name| self.closed_name(name))
    }

    /// A name's closed expression, as [`TimingModel::lookup`] resolves it
    /// (`None` for `b` and `n`, which stay).
    fn closed_name(&self, name: &str) -> Option<Expr> {
        if CONTEXT_NAMES.contains(&name) {
            return None;
        }
        Some(match self.params.get(name) {
            Some(v) => Expr::Num(*v),
            None => self.formulas.get(name).map_or(Expr::Num(0.0), |f| self.closed(f)),
        })
    }

    /// Opcode `op`'s cost as a function of `b` and `n`, closed once: what
    /// [`TimingModel::cost`] gives.
    pub fn cost_at(&self, op: u8) -> impl Fn(f64, u32) -> f64 {
        let (formula, routine) = self.opcode_formula(op);
        let formula = formula.map(|e| self.closed(e));
        move |b, n| formula.as_ref().map_or(0.0, |e| eval_closed(e, b, n)) + routine
    }

    /// JOP's own bytecode `name`'s cost as a function of `b` and `n`, closed
    /// once: what [`TimingModel::native_cost_at`] gives.
    pub fn native_cost_fn(&self, name: &str) -> Option<impl Fn(f64, u32) -> f64> {
        let e = self.closed(self.native_formula(name)?);
        Some(move |b, n| eval_closed(&e, b, n))
    }

    /// The cache load cost as a function of a method's words, closed once:
    /// what [`TimingModel::load_cost`] gives.
    pub fn load_cost_fn(&self, hit: bool) -> impl Fn(u32) -> f64 {
        let e = self.closed(self.cache_formula(hit));
        move |n| eval_closed(&e, 0.0, n)
    }

    /// Evaluates any formula of this model in the context (`b`, `n`).
    pub fn eval(&self, e: &Expr, b: f64, n: u32) -> f64 {
        e.eval(&|x| self.lookup(x, b, f64::from(n)))
    }

    /// The cache load cost `b` of a method of `n_words` words.
    pub fn load_cost(&self, hit: bool, n_words: u32) -> f64 {
        self.eval(self.cache_formula(hit), 0.0, n_words)
    }

    /// The cache's load formula on a hit or a miss.
    fn cache_formula(&self, hit: bool) -> &Expr {
        if hit {
            &self.cache_hit
        } else {
            &self.cache_miss
        }
    }

    /// Opcode `op`'s formula (for one JOP runs in Java, its dispatch's) and
    /// the cycles of its Java routine (0 for one it runs in microcode);
    /// `None` where the model has no cost for it.
    fn opcode_formula(&self, op: u8) -> (Option<&Expr>, f64) {
        match self.opcode(op) {
            Some(Cost::Formula(e)) => (Some(e), 0.0),
            Some(Cost::Java { dispatch, routine }) => (Some(dispatch), self.params[routine]),
            None => (None, 0.0),
        }
    }

    /// JOP's own bytecode `name`'s formula (for one JOP runs in Java, its dispatch's).
    fn native_formula(&self, name: &str) -> Option<&Expr> {
        self.native.get(name).map(|c| match c {
            Cost::Formula(e) | Cost::Java { dispatch: e, .. } => e,
        })
    }

    /// `(dispatch or formula part, Java routine part)` of an opcode's cost.
    /// JOP's own opcodes (202 and up, as its linker's typed field accesses)
    /// cost their `[native]` entry, or nothing where the model has none.
    pub fn cost_parts(&self, op: u8, b: f64, n: u32) -> (f64, f64) {
        let (formula, routine) = self.opcode_formula(op);
        (formula.map_or(0.0, |e| self.eval(e, b, n)), routine)
    }

    /// Total cycles of `op` when the method it enters/returns to loads in `b` cycles and has `n` words.
    pub fn cost(&self, op: u8, b: f64, n: u32) -> f64 {
        let (a, r) = self.cost_parts(op, b, n);
        a + r
    }

    /// The cost of `op` with the operand `value` that decides its microcode
    /// path (`[operands]`), where the model has one.
    pub fn operand_cost(&self, op: u8, value: u8) -> Option<f64> {
        let (_, _, e) = self
            .operands
            .get(&op)?
            .iter()
            .find(|(a, b, _)| (*a..=*b).contains(&value))?;
        let dispatch = match self.opcode(op) {
            Some(Cost::Java { dispatch, .. }) => self.eval(dispatch, self.load_cost(true, 0), 0),
            _ => 0.0,
        };
        // In the formula, `n` is the operand (`b`, a load, is 0).
        Some(e.eval(&|x| {
            if x == DISPATCH {
                dispatch
            } else {
                self.lookup(x, 0.0, f64::from(value))
            }
        }))
    }

    /// The parameters the `[operands]` costs of `op` name (a Java routine's
    /// cost per case compared, for one).
    pub fn operand_params(&self, op: u8) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, _, e) in self.operands.get(&op).into_iter().flatten() {
            for n in e.names() {
                if self.params.contains_key(n) && !out.iter().any(|o| o == n) {
                    out.push(n.to_string());
                }
            }
        }
        out
    }

    /// True when the model prices `op` by its operand (`[operands]`).
    pub fn prices_by_operand(&self, op: u8) -> bool {
        self.operands.contains_key(&op)
    }

    /// True when JOP implements `op` in Java.
    pub fn is_java(&self, op: u8) -> bool {
        matches!(self.opcode(op), Some(Cost::Java { .. }))
    }

    /// Prices every method whose whole-call cost depends on parameter `name`
    /// by its host code instead; returns those methods.
    pub fn price_host_code(&mut self, name: &str) -> Vec<String> {
        let gone: Vec<String> = self
            .methods
            .iter()
            .filter(|(_, e)| e.names().contains(&name))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &gone {
            self.methods.remove(k);
        }
        gone
    }

    /// Methods priced as a whole (`[methods]`), by `pkg.Class.name(desc)`.
    pub fn whole_priced(&self) -> impl Iterator<Item = &str> {
        self.methods.keys().map(String::as_str)
    }

    /// The whole-call cost the model gives a method (`[methods]`), if any.
    pub fn method_cost(&self, qualified: &str) -> Option<f64> {
        self.method_cost_at(qualified, 0.0)
    }

    /// [`TimingModel::method_cost`] of a call that worked on `n` elements
    /// (`n` in the formula: `System.arraycopy`'s elements copied).
    pub fn method_cost_at(&self, qualified: &str, n: f64) -> Option<f64> {
        self.methods.get(qualified).map(|e| e.eval(&|x| self.lookup(x, 0.0, n)))
    }

    /// The cost of one of JOP's own bytecodes (`jopsys_rd`, ...), if the model has it.
    pub fn native_cost(&self, name: &str) -> Option<f64> {
        self.native_cost_at(name, 0.0, 0)
    }

    /// The cost of JOP's own bytecode `name` when the method it enters or
    /// returns to loads in `b` cycles and has `n` words (`invokesuper`
    /// depends on them as the other invokes do).
    /// (For one JOP runs in Java: its dispatch; the routine's own bytecodes
    /// are the routine's.)
    pub fn native_cost_at(&self, name: &str, b: f64, n: u32) -> Option<f64> {
        self.native_formula(name).map(|e| self.eval(e, b, n))
    }

    /// The routine parameter of JOP's own bytecode `name`, where JOP runs it in Java.
    pub fn native_routine(&self, name: &str) -> Option<&str> {
        match self.native.get(name) {
            Some(Cost::Java { routine, .. }) => Some(routine),
            _ => None,
        }
    }

    /// Names of JOP's own bytecodes in the model.
    pub fn native_names(&self) -> impl Iterator<Item = &str> {
        self.native.keys().map(String::as_str)
    }

    /// True when the table names the methods of any routine (`[routines]`).
    pub fn has_routines(&self) -> bool {
        !self.routines.is_empty()
    }

    /// The methods of JOP's runtime that bytecode `op` runs (`[routines]`):
    /// the routine, then its callees; empty where the table names none.
    pub fn routine_methods(&self, op: u8) -> &[String] {
        self.routines
            .get(crate::jop::any_opcode_name(op))
            .map_or(&[], Vec::as_slice)
    }
}

/// `pkg.Class.name(descriptor)`: a dotted class, a method name, a descriptor.
fn is_qualified_method(m: &str) -> bool {
    jopcal_profile::MethodInfo::split_qualified(m)
        .is_some_and(|(class, name, descriptor)| !class.is_empty() && !name.is_empty() && descriptor.contains(')'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of `sections` over the shipped `jop-wcet.toml`.
    fn on_wcet(sections: &str) -> Result<TimingModel, ModelError> {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let text = format!("[model]\nname = \"m\"\nbase = \"{}\"\n{sections}", base.display());
        TimingModel::parse(&text, Path::new("/tmp/m.toml"))
    }

    #[test]
    fn routines_name_bytecodes_run_in_java_and_their_methods() {
        let m = on_wcet("[routines]\nnew = [\"a.B.f(I)I\"]\n").unwrap();
        assert_eq!(m.routine_methods(0xbb), ["a.B.f(I)I"]);
        assert!(m.routine_methods(0x60).is_empty());
        let e = on_wcet("[routines]\niadd = [\"a.B.f(I)I\"]\n").unwrap_err().to_string();
        assert!(
            e.contains("'iadd': not a bytecode this table implements in Java"),
            "{e}"
        );
        let e = on_wcet("[routines]\nnew = [\"f\"]\n").unwrap_err().to_string();
        assert!(e.contains("'f' is not a method"), "{e}");
    }

    #[test]
    fn an_operands_cost_may_name_the_bytecodes_dispatch() {
        let sections = "[params]\nimpl_instanceof = 10\nstep = 3\n[operands.instanceof]\n\"0-254\" = \"dispatch + impl_instanceof + step * n\"\n";
        let m = on_wcet(sections).unwrap();
        let (dispatch, routine) = m.cost_parts(0xc1, m.load_cost(true, 0), 0);
        assert_eq!(routine, 10.0);
        assert_eq!(m.operand_cost(0xc1, 0), Some(dispatch + 10.0));
        assert_eq!(m.operand_cost(0xc1, 2), Some(dispatch + 16.0));
        // Elsewhere `dispatch` is no name.
        let bad = sections.replace(
            "[operands.instanceof]",
            "[formulas]\nx = \"dispatch\"\n[operands.instanceof]",
        );
        let e = on_wcet(&bad).unwrap_err().to_string();
        assert!(e.contains("unknown name 'dispatch'"), "{e}");
    }

    /// The closed costs give, to the bit, what evaluating the formulas
    /// gives, for every opcode and method size of the shipped tables (with
    /// their wait states changed, as a run's overrides do).
    #[test]
    fn closed_costs_are_the_formulas_values() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration");
        for file in ["jop-wcet.toml", "jop-devel.toml", "emu-board.toml"] {
            let mut m = TimingModel::load(&repo.join(file)).unwrap();
            m.apply_overrides(&["r=3".to_string(), "w=5".to_string()]).unwrap();
            for hit in [false, true] {
                let load = m.load_cost_fn(hit);
                for n in (0..1100).step_by(7) {
                    assert_eq!(
                        load(n).to_bits(),
                        m.load_cost(hit, n).to_bits(),
                        "{file} load {hit} {n}"
                    );
                }
            }
            for op in 0..=255u8 {
                let cost = m.cost_at(op);
                for n in (0..1100).step_by(13) {
                    let b = m.load_cost(false, n);
                    assert_eq!(cost(b, n).to_bits(), m.cost(op, b, n).to_bits(), "{file} op {op} n {n}");
                }
            }
            let names: Vec<String> = m.native_names().map(str::to_string).collect();
            for name in names {
                let cost = m.native_cost_fn(&name).unwrap();
                for n in (0..1100).step_by(13) {
                    let b = m.load_cost(false, n);
                    assert_eq!(
                        Some(cost(b, n).to_bits()),
                        m.native_cost_at(&name, b, n).map(f64::to_bits),
                        "{file} {name} n {n}"
                    );
                }
            }
        }
    }

    fn minimal(opcodes_extra: &str) -> String {
        let mut s = String::from("[model]\nname = \"t\"\n[params]\nr = 1\nw = 2\nimpl_x = 5\n[cache]\nhit = \"4\"\nmiss = \"6 + (n + 1) * (2 + r - 1)\"\n[opcodes]\n");
        for (_, n) in opcode::all() {
            if n != "iadd" && n != "idiv" {
                s.push_str(&format!("{n} = \"1\"\n"));
            }
        }
        s.push_str(opcodes_extra);
        s
    }

    fn parse(text: &str) -> Result<TimingModel, String> {
        TimingModel::parse(text, Path::new("m.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn max_bounds_parameters_at_load_and_on_override() {
        let base = minimal("iadd = \"1\"\nidiv = { java = \"80\", routine = \"impl_x\" }\n");
        let m = parse(&format!("{base}[max]\nimpl_x = 40\n")).unwrap();
        let shifts = parse(&format!(
            "{base}[operands.idiv]\n\"0\" = \"7\"\n\"1-31\" = \"r + 27\"\n"
        ))
        .unwrap();
        assert_eq!(shifts.operand_cost(0x6c, 0), Some(7.0));
        assert_eq!(shifts.operand_cost(0x6c, 31), Some(28.0));
        assert_eq!(shifts.operand_cost(0x6c, 32), None);
        assert!(shifts.prices_by_operand(0x6c) && !shifts.prices_by_operand(0x60));
        let e = parse(&format!("{base}[operands.idiv]\n\"0-9\" = \"7\"\n\"9-31\" = \"2\"\n")).unwrap_err();
        assert!(e.ends_with("operands of 'idiv' 9-31: overlaps the range 0-9"), "{e}");
        let e = parse(&format!("{base}[operands.idiv]\n\"40-3\" = \"7\"\n")).unwrap_err();
        assert!(
            e.contains("operands of 'idiv' 40-3: an operand is a number 0-255 or a range such as 1-31"),
            "{e}"
        );
        let e = parse(&format!("{base}[operands.idiv]\n\"4\" = \"q\"\n")).unwrap_err();
        assert!(e.ends_with("operands of 'idiv' 4: unknown name 'q'"), "{e}");
        assert_eq!(m.max_of("impl_x"), Some(40.0));
        assert_eq!(m.max_of("r"), None);
        let mut m2 = m.clone();
        assert_eq!(
            m2.apply_overrides(&["impl_x=41".to_string()]).unwrap_err().to_string(),
            "parameter impl_x=41: above its max 40 (the model's [max]: no such cost can be that high)"
        );
        m2.apply_overrides(&["impl_x=40".to_string()]).unwrap();
        let e = parse(&format!("{base}[max]\nimpl_x = 4\n")).unwrap_err();
        assert!(
            e.starts_with("m.toml:6:") && e.ends_with("parameter 'impl_x' = 5 is above its max 4"),
            "{e}"
        );
        let e = parse(&format!("{base}[max]\nq = 4\n")).unwrap_err();
        assert!(e.ends_with("max: 'q' is not a parameter"), "{e}");
    }

    #[test]
    fn loads_java_entries_and_evaluates() {
        let m = parse(&minimal(
            "iadd = \"r + w\"\nidiv = { java = \"80 + r\", routine = \"impl_x\" }\n",
        ))
        .unwrap();
        assert_eq!(m.cost(opcode::by_mnemonic("iadd").unwrap(), 4.0, 0), 3.0);
        assert_eq!(m.cost_parts(opcode::by_mnemonic("idiv").unwrap(), 4.0, 0), (81.0, 5.0));
        assert_eq!(m.load_cost(false, 32), 72.0);
    }

    #[test]
    fn errors_name_file_line_and_column() {
        let text = minimal("iadd = \"r + ww\"\nidiv = \"1\"\n");
        let line = text.lines().position(|l| l.starts_with("iadd")).unwrap() + 1;
        assert_eq!(
            parse(&text).unwrap_err(),
            format!("m.toml:{line}:8: opcode 'iadd': unknown name 'ww'")
        );

        let text = minimal("iadd = \"r + \"\nidiv = \"1\"\n");
        assert_eq!(
            parse(&text).unwrap_err(),
            format!("m.toml:{line}:13: opcode 'iadd': formula ends too early")
        );

        let text = minimal("idiv = \"1\"\n");
        assert_eq!(parse(&text).unwrap_err(), "m.toml: [opcodes] lacks 1 opcode(s): iadd");

        let text = minimal("iadd = \"1\"\nidiv = \"1\"\nfrob = \"1\"\n");
        let line = text.lines().position(|l| l.starts_with("frob")).unwrap() + 1;
        assert_eq!(
            parse(&text).unwrap_err(),
            format!("m.toml:{line}:1: unknown opcode 'frob'")
        );

        let text = minimal("iadd = \"1\"\nidiv = { java = \"1\", routine = \"impl_y\" }\n");
        assert!(parse(&text)
            .unwrap_err()
            .ends_with("opcode 'idiv': routine parameter 'impl_y' is not in [params]"));

        let text = minimal("iadd = \"1\"\nidiv = \"1\"\n") + "[formulas]\na = \"b2 + 1\"\nb2 = \"a\"\n";
        assert!(
            parse(&text).unwrap_err().contains("is defined through itself"),
            "{}",
            parse(&text).unwrap_err()
        );

        let e = parse("[model\nname=1").unwrap_err();
        assert!(e.starts_with("m.toml:1:"), "{e}");
    }

    #[test]
    fn overrides_are_checked() {
        let mut m = parse(&minimal("iadd = \"r\"\nidiv = \"1\"\n")).unwrap();
        m.apply_overrides(&["r=3".into()]).unwrap();
        assert_eq!(m.cost(opcode::by_mnemonic("iadd").unwrap(), 0.0, 0), 3.0);
        assert_eq!(
            m.apply_overrides(&["rr=3".into()]).unwrap_err().to_string(),
            "unknown parameter 'rr' (the model has: impl_x, r, w)"
        );
        assert_eq!(
            m.apply_overrides(&["r:3".into()]).unwrap_err().to_string(),
            "parameter override 'r:3' is not NAME=NUMBER"
        );
        assert!(m.apply_overrides(&["r=inf".into()]).is_err());
        assert_eq!(
            m.apply_overrides(&["r=-5".into()]).unwrap_err().to_string(),
            "parameter r=-5: a cost or a wait state count cannot be negative; give 0 or more"
        );
        assert_eq!(
            m.apply_overrides(&["w=2.5".into()]).unwrap_err().to_string(),
            "parameter w=2.5: memory wait states are whole cycles; give an integer such as 1, 2 or 3"
        );
        assert!(
            m.apply_overrides(&["impl_x=2.5".into()]).is_ok(),
            "a routine's cost may be fractional"
        );
    }
}
