//! Fitting a timing model's named parameters to measured cycles.
//!
//! The estimate of each benchmark is affine in the own-cost parameters of
//! Java-implemented bytecodes (their column is the count of those bytecodes)
//! and piecewise affine in the others (wait states enter through `max(0, ·)`
//! and through the method-cache load cost), so the fit is a Gauss-Newton
//! iteration: linearise (analytic columns where exact, forward differences
//! elsewhere), solve a non-negative least-squares problem in relative error,
//! repeat. Wait states are whole numbers: each is held at the whole number
//! below and above its fitted value, the rest fitted again, and the better
//! combination kept. A parameter the data cannot identify (no benchmark
//! depends on it, or its effect cannot be told apart from others') keeps its
//! starting value and is reported, never invented; one that a single
//! benchmark identifies is named. The method-cache configuration is chosen
//! among candidates by the best fit. Every trial of the parameters is priced
//! from each profile's replay under the cache mode ([`Memo`]), made once.
//! [`fit_without_outliers`] leaves out, by name, a benchmark the others
//! cannot explain.

use crate::error::{FitError, FitSpecError};
use crate::nnls::nnls;
use jopcal_profile::Profile;
use jopcal_timing::cache::{CacheConfig, CacheMode};
use jopcal_timing::estimate::Tally;
use jopcal_timing::model::Cost;
use jopcal_timing::TimingModel;
use nalgebra::{DMatrix, DVector};
use std::collections::HashMap;
use std::sync::Arc;

/// One benchmark: its measured cycles and its profile.
#[derive(Debug)]
pub struct Observation {
    pub benchmark: String,
    pub measured: f64,
    pub profile: Profile,
}

/// What to fit.
#[derive(Debug, Clone)]
pub struct FitSpec {
    /// Parameter names to fit.
    pub params: Vec<String>,
    /// Parameters that only take whole values (wait states).
    pub integer: Vec<String>,
    /// Cache modes to choose from (one: fixed).
    pub caches: Vec<CacheMode>,
}

impl FitSpec {
    /// Expands `r,w,impl_java,cache` style groups against `model`: `impl_java`
    /// is every routine parameter of a Java-implemented bytecode, `collector`
    /// the collector's parameters where the model has them, `cache` the
    /// candidate method caches; other names are parameters.
    pub fn parse(groups: &str, model: &TimingModel, default_cache: CacheMode) -> Result<FitSpec, FitSpecError> {
        let mut params: Vec<String> = Vec::new();
        let mut caches = vec![default_cache];
        // Each parameter once, in the order first named.
        let mut add = |p: &str| {
            if !params.iter().any(|q| q == p) {
                params.push(p.to_string());
            }
        };
        // Of `names`, those the model has.
        let present = |names: &'static [&'static str]| names.iter().filter(|p| model.params().contains_key(**p));
        for g in groups.split(',').map(str::trim).filter(|g| !g.is_empty()) {
            match g {
                "impl_java" => {
                    routine_params(model).iter().for_each(|p| add(p));
                    // With the routines, the athrow routine's walk per frame left.
                    present(&[jopcal_timing::estimate::IMPL_UNWIND]).for_each(|p| add(p));
                    // And its search of each frame's exception table.
                    present(&[
                        jopcal_timing::estimate::IMPL_HANDLER_ENTRY,
                        jopcal_timing::estimate::IMPL_HANDLER_TEST,
                    ])
                    .for_each(|p| add(p));
                    // And System.arraycopy's loop, a routine of JOP's library.
                    present(&jopcal_timing::estimate::IMPL_ARRAYCOPY).for_each(|p| add(p));
                }
                // The collector's parameters, where the model prices collections.
                "collector" => present(&[
                    jopcal_timing::collector::GC_COLLECTION,
                    jopcal_timing::collector::GC_HANDLE,
                ])
                .for_each(|p| add(p)),
                "cache" => caches = candidate_caches(),
                name if model.params().contains_key(name) => add(name),
                other => {
                    return Err(FitSpecError::Unknown {
                        name: other.to_string(),
                        model: model.name.clone(),
                    })
                }
            }
        }
        if params.is_empty() {
            return Err(FitSpecError::NoParameter);
        }
        Ok(FitSpec {
            params,
            integer: vec!["r".into(), "w".into()],
            caches,
        })
    }
}

/// Routine parameters of the model's Java-implemented bytecodes, by first use.
pub fn routine_params(model: &TimingModel) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for op in 0..=255u8 {
        if let Some(Cost::Java { routine, .. }) = model.opcode(op) {
            // The routine's own parameter, and those its cost by the
            // operand names (lookupswitch: per case compared).
            for p in std::iter::once(routine.clone()).chain(model.operand_params(op)) {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The method caches `cache` chooses among: 512 B to 4 KB, 4 to 32 blocks.
pub fn candidate_caches() -> Vec<CacheMode> {
    let mut v = Vec::new();
    for bytes in [512, 1024, 2048, 4096] {
        for blocks in [4, 8, 16, 32] {
            let c = CacheConfig { bytes, blocks };
            if c.validate().is_ok() {
                v.push(CacheMode::Fifo(c));
            }
        }
    }
    v
}

/// Why a parameter was not fitted when no benchmark's estimate depends on it.
pub const NO_DATA: &str = "no benchmark's estimate depends on it";

/// A parameter after the fit.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedParam {
    pub name: String,
    pub start: f64,
    pub value: f64,
    /// Empty when fitted; else why the data cannot identify it.
    pub unidentified: Option<String>,
    /// The one benchmark whose estimate depends on it, when only one does:
    /// its value then explains that benchmark and nothing checks it.
    pub sole_benchmark: Option<String>,
    /// The value the fit wanted when that is above the parameter's physical
    /// bound (the model's `[max]`): the parameter is held at the bound instead,
    /// since no such cost can be that high.
    pub above_max: Option<f64>,
}

/// The outcome of a fit.
#[derive(Debug, Clone)]
pub struct Fit {
    pub cache: CacheMode,
    pub params: Vec<FittedParam>,
    /// `(benchmark, measured, estimated)` under the fitted model.
    pub rows: Vec<(String, f64, f64)>,
}

impl Fit {
    pub fn max_abs_error_pct(&self) -> f64 {
        self.rows
            .iter()
            .map(|(_, m, e)| (100.0 * (e - m) / m).abs())
            .fold(0.0, f64::max)
    }

    /// The fitted model: `start` with the fitted values set, and every
    /// method whose whole-call cost depends on a parameter no benchmark of
    /// the fit depends on priced by its host code instead of at the
    /// parameter's start (a guess: 0 for the library methods `validate`
    /// prices per call). That changes no fitted benchmark's estimate.
    pub fn apply(&self, start: &TimingModel) -> TimingModel {
        let mut m = start.clone();
        for p in &self.params {
            let _ = m.set_param(&p.name, p.value);
        }
        for p in self.depended_on_by_none() {
            m.price_host_code(&p.name);
        }
        m
    }

    /// The parameters no benchmark of the fit depends on.
    fn depended_on_by_none(&self) -> impl Iterator<Item = &FittedParam> {
        self.params
            .iter()
            .filter(|p| p.unidentified.as_deref() == Some(NO_DATA))
    }

    /// Methods `start` prices as a whole that [`Fit::apply`] prices by their
    /// host code, each with the parameter that could not be fitted.
    pub fn host_priced(&self, start: &TimingModel) -> Vec<(String, String)> {
        let mut m = start.clone();
        let mut v = Vec::new();
        for p in self.depended_on_by_none() {
            for method in m.price_host_code(&p.name) {
                v.push((method, p.name.clone()));
            }
        }
        v
    }
}

/// Profiles replayed, remembered: a benchmark's estimate under a cache mode
/// is a sum over buckets whose costs are functions of the parameters
/// ([`Tally`]), so each profile is replayed once per cache mode and every
/// trial of the parameters after that is priced from its buckets.
#[derive(Default)]
pub struct Memo {
    map: std::sync::Mutex<HashMap<MemoKey, Arc<Tally>>>,
}

/// `(benchmark, cache mode)`.
type MemoKey = (String, String);

/// Routine parameter names and the opcodes that use each.
type Routines = Vec<(String, Vec<u8>)>;

fn routines_of(model: &TimingModel) -> Routines {
    let mut m: Routines = Vec::new();
    for op in 0..=255u8 {
        if let Some(Cost::Java { routine, .. }) = model.opcode(op) {
            match m.iter_mut().find(|(r, _)| r == routine) {
                Some((_, ops)) => ops.push(op),
                None => m.push((routine.clone(), vec![op])),
            }
        }
    }
    m
}

impl Memo {
    /// The tally of `o` under `mode` (made with `model`'s structure on first use).
    pub fn tally(&self, o: &Observation, model: &TimingModel, mode: CacheMode) -> Arc<Tally> {
        let key = (o.benchmark.clone(), mode.to_string());
        if let Some(t) = self.map.lock().ok().and_then(|m| m.get(&key).cloned()) {
            if t.fits(model) {
                return t;
            }
            // A fitted model that prices some calls by their host code again.
            return Arc::new(Tally::new(&o.profile, model, mode, &|_| None));
        }
        // Method sizes are the profile's own (validate gives it its image's).
        let t = Arc::new(Tally::new(&o.profile, model, mode, &|_| None));
        if let Ok(mut m) = self.map.lock() {
            m.insert(key, t.clone());
        }
        t
    }

    /// `(cycles, per-routine counts)` of `o` under `model` and `mode`.
    fn eval(&self, o: &Observation, model: &TimingModel, routines: &Routines, mode: CacheMode) -> (f64, Vec<f64>) {
        let t = self.tally(o, model, mode);
        let counts = routines
            .iter()
            .map(|(_, ops)| ops.iter().map(|&op| t.executions(op) as f64).sum())
            .collect();
        (t.price(model), counts)
    }

    /// Replays every observation under every mode, on all cores.
    fn prepare(&self, obs: &[&Observation], model: &TimingModel, modes: &[CacheMode]) {
        let jobs: Vec<(&Observation, CacheMode)> =
            modes.iter().flat_map(|m| obs.iter().map(move |o| (*o, *m))).collect();
        parallel(&jobs, |(o, m)| {
            self.tally(o, model, *m);
        });
    }
}

/// Fits `spec.params` of `start` to `obs` under cache `mode`, iterating from
/// `init`'s values (a warm start; the result does not depend on it, only the
/// number of iterations). At most `iterations` linearisations per round.
fn fit_mode(
    obs: &[&Observation],
    start: &TimingModel,
    init: &TimingModel,
    spec: &FitSpec,
    mode: CacheMode,
    iterations: usize,
    memo: &Memo,
) -> Result<Fit, FitError> {
    let names = &spec.params;
    let routines = routines_of(start);
    // A routine parameter that an `[operands]` formula names too (lookupswitch's
    // fixed part) moves estimates the routine counts do not show: its column is
    // taken by difference, as any other parameter's.
    let by_operand: Vec<String> = (0..=255u8).flat_map(|op| start.operand_params(op)).collect();
    let estimates = |model: &TimingModel| -> Vec<(f64, Vec<f64>)> {
        obs.iter().map(|o| memo.eval(o, model, &routines, mode)).collect()
    };
    let meas = DVector::from_iterator(obs.len(), obs.iter().map(|o| o.measured));
    let mut model = start.clone();
    for n in names {
        model.set_param(n, init.params()[n])?;
    }
    let fixed: Vec<Option<f64>> = vec![None; names.len()];
    let mut unidentified: Vec<Option<String>> = vec![None; names.len()];
    // Per parameter held at its `[max]`, the value the fit wanted.
    let mut above_max: Vec<Option<f64>> = vec![None; names.len()];
    // Per parameter, the benchmarks whose estimate depends on it (last linearisation).
    let mut support: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    // Gauss-Newton on the parameters not `fixed`, from `model`.
    // A parameter that would go above its physical bound is held there (and
    // no longer moved), the others fitted around it.
    let gauss_newton = |model: &mut TimingModel,
                        fixed: &[Option<f64>],
                        unidentified: &mut Vec<Option<String>>,
                        support: &mut Vec<Vec<usize>>,
                        above_max: &mut Vec<Option<f64>>|
     -> Result<(), FitError> {
        let mut fixed = fixed.to_vec();
        for (j, f) in fixed.iter_mut().enumerate() {
            if above_max[j].is_some() {
                *f = start.max_of(&names[j]);
            }
        }
        let fixed = &mut fixed;
        for _iter in 0..iterations {
            let base = estimates(model);
            let mut a = DMatrix::zeros(obs.len(), names.len());
            let theta = DVector::from_iterator(names.len(), names.iter().map(|n| model.params()[n]));
            for (j, name) in names.iter().enumerate() {
                let counted = routines.iter().position(|(r, _)| r == name);
                if let Some(k) = counted.filter(|_| !by_operand.contains(name)) {
                    for (i, (_, counts)) in base.iter().enumerate() {
                        a[(i, j)] = counts[k];
                    }
                } else {
                    let mut m2 = model.clone();
                    m2.set_param(name, theta[j] + 1.0)?;
                    let up = estimates(&m2);
                    for i in 0..obs.len() {
                        a[(i, j)] = up[i].0 - base[i].0;
                    }
                }
            }
            // Relative error: every row divided by its measurement.
            for i in 0..obs.len() {
                for j in 0..names.len() {
                    a[(i, j)] /= meas[i];
                }
            }
            for (j, s) in support.iter_mut().enumerate() {
                *s = (0..obs.len()).filter(|&i| a[(i, j)].abs() > 1e-12).collect();
            }
            let est = DVector::from_iterator(obs.len(), base.iter().map(|e| e.0));
            let resid = (&meas - &est).component_div(&meas);
            let free = identifiable(&a, names, fixed, unidentified);
            // Solve for the new values of the free parameters; the rest stay.
            let mut target = resid.clone();
            for j in 0..names.len() {
                if free[j] {
                    target += a.column(j) * theta[j];
                }
            }
            let x = nnls(&a, &target, &free);
            let mut change = 0.0f64;
            let mut held_now = false;
            for j in 0..names.len() {
                if free[j] {
                    let mut v = x[j];
                    if let Some(bound) = start.max_of(&names[j]).filter(|b| v > *b) {
                        above_max[j] = Some(v);
                        fixed[j] = Some(bound);
                        v = bound;
                        held_now = true;
                    }
                    change = change.max((v - theta[j]).abs());
                    model.set_param(&names[j], v)?;
                }
            }
            if change < 1e-4 && !held_now {
                break;
            }
        }
        Ok(())
    };
    gauss_newton(&mut model, &fixed, &mut unidentified, &mut support, &mut above_max)?;
    // Whole wait states: each identified one is held at the whole number below
    // or above its continuous value, the rest fitted again, and the best of
    // those combinations kept (rounding alone can pick the worse neighbour).
    let integers: Vec<usize> = (0..names.len())
        .filter(|&j| spec.integer.contains(&names[j]) && unidentified[j].is_none())
        .take(4)
        .collect();
    if !integers.is_empty() {
        let sse = |m: &TimingModel| -> f64 {
            estimates(m)
                .iter()
                .zip(meas.iter())
                .map(|(e, m)| ((e.0 - m) / m).powi(2))
                .sum()
        };
        type Trial = (f64, TimingModel, Vec<Option<String>>, Vec<Vec<usize>>, Vec<Option<f64>>);
        let mut best: Option<Trial> = None;
        for combo in 0..(1usize << integers.len()) {
            let mut m = model.clone();
            let mut fx = fixed.clone();
            let mut un = unidentified.clone();
            let mut su = support.clone();
            let mut am = above_max.clone();
            for (bit, &j) in integers.iter().enumerate() {
                let v = model.params()[&names[j]];
                let whole = if combo >> bit & 1 == 0 { v.floor() } else { v.ceil() }.max(0.0);
                m.set_param(&names[j], whole)?;
                fx[j] = Some(whole);
            }
            gauss_newton(&mut m, &fx, &mut un, &mut su, &mut am)?;
            let e = sse(&m);
            if best.as_ref().is_none_or(|b| e < b.0 - 1e-15) {
                best = Some((e, m, un, su, am));
            }
        }
        if let Some((_, m, un, su, am)) = best {
            model = m;
            unidentified = un;
            support = su;
            above_max = am;
        }
    }
    let fin = estimates(&model);
    Ok(Fit {
        cache: mode,
        params: fitted_params(names, start, &model, &unidentified, &support, &above_max, obs),
        rows: obs
            .iter()
            .zip(fin)
            .map(|(o, e)| (o.benchmark.clone(), o.measured, e.0))
            .collect(),
    })
}

/// Each parameter as fitted: an unidentified one keeps its starting value;
/// one that a single benchmark supports names it.
fn fitted_params(
    names: &[String],
    start: &TimingModel,
    model: &TimingModel,
    unidentified: &[Option<String>],
    support: &[Vec<usize>],
    above_max: &[Option<f64>],
    obs: &[&Observation],
) -> Vec<FittedParam> {
    names
        .iter()
        .enumerate()
        .map(|(j, n)| FittedParam {
            name: n.clone(),
            start: start.params()[n],
            value: if unidentified[j].is_some() {
                start.params()[n]
            } else {
                model.params()[n]
            },
            unidentified: unidentified[j].clone(),
            sole_benchmark: match (&unidentified[j], support[j].as_slice()) {
                (None, [i]) => Some(obs[*i].benchmark.clone()),
                _ => None,
            },
            above_max: above_max[j],
        })
        .collect()
}

/// Identifiability: which parameters (columns of the sensitivity matrix
/// `a`) the fit can move. A fixed one cannot; one that no benchmark depends
/// on (a zero column) or whose effect the ones before already span cannot
/// either, and `unidentified` says why (naming the parameters it cannot be
/// told apart from). Returns the free ones.
fn identifiable(
    a: &DMatrix<f64>,
    names: &[String],
    fixed: &[Option<f64>],
    unidentified: &mut [Option<String>],
) -> Vec<bool> {
    let mut kept: Vec<usize> = Vec::new();
    for j in 0..names.len() {
        if fixed[j].is_some() {
            continue;
        }
        let col_norm = a.column(j).norm();
        if col_norm < 1e-12 {
            unidentified[j] = Some(NO_DATA.into());
            continue;
        }
        let mut trial = kept.clone();
        trial.push(j);
        let sub = a.select_columns(&trial);
        let sv = sub.svd(false, false).singular_values;
        let max = sv.iter().cloned().fold(0.0, f64::max);
        let min = sv.iter().cloned().fold(f64::INFINITY, f64::min);
        if min <= 1e-9 * max {
            // Name the parameters it is a combination of.
            let basis = a.select_columns(&kept);
            let col = a.column(j).into_owned();
            let coef = basis
                .svd(true, true)
                .solve(&col, 1e-12)
                .unwrap_or_else(|_| DVector::zeros(kept.len()));
            let big = coef.iter().map(|c| c.abs()).fold(0.0, f64::max);
            let with: Vec<&str> = kept
                .iter()
                .zip(coef.iter())
                .filter(|(_, c)| c.abs() > 1e-6 * big.max(1e-12))
                .map(|(k, _)| names[*k].as_str())
                .collect();
            unidentified[j] = Some(format!("its effect cannot be told apart from {}", with.join(", ")));
            continue;
        }
        unidentified[j] = None;
        kept.push(j);
    }
    (0..names.len()).map(|j| kept.contains(&j)).collect()
}

/// A benchmark the fit left out: the model cannot express what it measures.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub benchmark: String,
    /// Its error, in percent, under the fit that included it.
    pub error_pct: f64,
}

/// [`fit`], leaving out benchmarks the model cannot express, so that one of
/// them does not move every parameter: after each fit the benchmark with the
/// largest |error| is left out when that error exceeds `limit_pct` and ten
/// times the median |error|, and the rest is fitted again (at most a quarter
/// of the benchmarks are left out). Returns the fit of the rest and the
/// outliers, worst first.
/// A measurement no timing table could produce: `factor` or more times off
/// the starting table's estimate either way (a wrong region, a counter read
/// wrongly, a hand-edited file), where a table's errors are percents.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    pub benchmark: String,
    pub measured: f64,
    pub estimated: f64,
}

impl Suspect {
    /// How many times the estimate the measurement is (below 1: a fraction).
    pub fn ratio(&self) -> f64 {
        self.measured / self.estimated
    }
}

/// JOP's cycle counter is 32 bits wide: one region, timed by two reads of
/// it, cannot have taken more.
pub const COUNTER_LIMIT: f64 = 4_294_967_295.0;

/// The observations whose measurement is `factor` or more times off what
/// `start` estimates (with the method cache `mode`), or beyond what the
/// cycle counter can count ([`COUNTER_LIMIT`]). A measurement far above an
/// estimate that the fit's `routines` (the own cost of a bytecode JOP runs
/// in Java, a library method's: free, and 0 in a table derived from the
/// microcode) take part in is not suspect: a table with those costs makes it
/// (JemBench's Div runs 10,000 `idiv`s that JOP divides in Java, 17 times the
/// microcode table's estimate).
pub fn suspects(
    obs: &[&Observation],
    start: &TimingModel,
    mode: CacheMode,
    factor: f64,
    routines: &[String],
) -> Vec<Suspect> {
    // The start with every routine's cost at its table's maximum (or 10,000
    // cycles more where it has none): what the fit can reach.
    let raised = (!routines.is_empty())
        .then(|| {
            let mut m = start.clone();
            let overrides: Vec<String> = routines
                .iter()
                .map(|p| {
                    let now = start.params().get(p).copied().unwrap_or(0.0);
                    format!("{p}={}", start.max_of(p).unwrap_or(now + 10_000.0))
                })
                .collect();
            m.apply_overrides(&overrides).ok().map(|_| m)
        })
        .flatten();
    obs.iter()
        .filter_map(|o| {
            let estimated = jopcal_timing::estimate::estimate(&o.profile, start, mode).cycles;
            let r = o.measured / estimated;
            let reachable = || {
                raised
                    .as_ref()
                    .is_some_and(|m| jopcal_timing::estimate::estimate(&o.profile, m, mode).cycles > estimated)
            };
            let off = estimated > 0.0 && (!r.is_finite() || (r >= factor && !reachable()) || r <= 1.0 / factor);
            (off || o.measured > COUNTER_LIMIT).then(|| Suspect {
                benchmark: o.benchmark.clone(),
                measured: o.measured,
                estimated,
            })
        })
        .collect()
}

pub fn fit_without_outliers(
    obs: &[&Observation],
    start: &TimingModel,
    spec: &FitSpec,
    memo: &Memo,
    limit_pct: f64,
) -> Result<(Fit, Vec<Outlier>), FitError> {
    let mut kept: Vec<&Observation> = obs.to_vec();
    let mut outliers = Vec::new();
    loop {
        let f = fit(&kept, start, spec, memo)?;
        let mut errors: Vec<(usize, f64)> = f
            .rows
            .iter()
            .enumerate()
            .map(|(i, (_, m, e))| (i, 100.0 * (e - m) / m))
            .collect();
        let mut abs: Vec<f64> = errors.iter().map(|(_, e)| e.abs()).collect();
        abs.sort_by(f64::total_cmp);
        let median = abs.get(abs.len() / 2).copied().unwrap_or(0.0);
        errors.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        let worst = errors.first().copied();
        match worst {
            Some((i, e)) if e.abs() > limit_pct && e.abs() > 10.0 * median && outliers.len() < obs.len() / 4 => {
                outliers.push(Outlier {
                    benchmark: f.rows[i].0.clone(),
                    error_pct: e,
                });
                kept.retain(|o| o.benchmark != f.rows[i].0);
            }
            _ => return Ok((f, outliers)),
        }
    }
}

/// Fits, choosing the best of `spec.caches`: every candidate gets a short
/// fit (in parallel), the best one the full fit.
pub fn fit(obs: &[&Observation], start: &TimingModel, spec: &FitSpec, memo: &Memo) -> Result<Fit, FitError> {
    fit_from(obs, start, start, spec, memo)
}

fn fit_from(
    obs: &[&Observation],
    start: &TimingModel,
    init: &TimingModel,
    spec: &FitSpec,
    memo: &Memo,
) -> Result<Fit, FitError> {
    if obs.len() < 2 {
        return Err(FitError::TooFew(obs.len()));
    }
    memo.prepare(obs, start, &spec.caches);
    let mode = if spec.caches.len() == 1 {
        spec.caches[0]
    } else {
        let scored: Vec<Result<(f64, CacheMode), FitError>> = parallel(&spec.caches, |mode| {
            let f = fit_mode(obs, start, init, spec, *mode, 3, memo)?;
            Ok((f.rows.iter().map(|(_, m, e)| ((e - m) / m).powi(2)).sum::<f64>(), *mode))
        });
        let mut best: Option<(f64, CacheMode)> = None;
        for r in scored {
            let (sse, mode) = r?;
            if best.is_none_or(|(b, _)| sse < b - 1e-15) {
                best = Some((sse, mode));
            }
        }
        best.expect("at least one cache mode").1
    };
    fit_mode(obs, start, init, spec, mode, 8, memo)
}

/// Maps `f` over `items` on all cores, keeping the order.
fn parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()).max(1);
    let chunk = items.len().div_ceil(cores).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("fit worker"))
            .collect()
    })
}

/// Leave-one-benchmark-out: for each benchmark, fit on the others (under
/// `mode`, iterating from `warm`, which only saves iterations) and predict
/// it. Returns `(benchmark, measured, predicted)`; `on_predicted` hears of
/// each as it is done (from worker threads, in no particular order).
pub fn leave_one_out(
    obs: &[&Observation],
    start: &TimingModel,
    warm: &TimingModel,
    spec: &FitSpec,
    mode: CacheMode,
    memo: &Memo,
    on_predicted: &(dyn Fn(&str, f64, f64) + Sync),
) -> Result<Vec<(String, f64, f64)>, FitError> {
    let mut spec1 = spec.clone();
    spec1.caches = vec![mode];
    let idx: Vec<usize> = (0..obs.len()).collect();
    parallel(&idx, |&i| {
        let rest: Vec<&Observation> = obs
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .map(|(_, o)| *o)
            .collect();
        let f = fit_from(&rest, start, warm, &spec1, memo)?;
        let m = f.apply(start);
        let (e, _) = memo.eval(obs[i], &m, &routines_of(start), mode);
        on_predicted(&obs[i].benchmark, obs[i].measured, e);
        Ok((obs[i].benchmark.clone(), obs[i].measured, e))
    })
    .into_iter()
    .collect()
}

/// Opcodes that executed and whose fitted cost (on a cache hit) differs from
/// the starting table by more than `pct` percent: `(mnemonic, start, fitted)`.
pub fn inconsistencies(
    obs: &[&Observation],
    start: &TimingModel,
    fitted: &TimingModel,
    pct: f64,
) -> Vec<(String, f64, f64)> {
    let mut seen = [false; 256];
    for o in obs {
        for n in &o.profile.nodes {
            for op in n.opcodes.keys() {
                seen[*op as usize] = true;
            }
        }
    }
    let b0 = start.load_cost(true, 0);
    let b1 = fitted.load_cost(true, 0);
    let mut out = Vec::new();
    for op in 0..=255u8 {
        if !seen[op as usize] {
            continue;
        }
        let (c0, c1) = (start.cost(op, b0, 0), fitted.cost(op, b1, 0));
        let differs = if c0 == 0.0 {
            c1 != 0.0
        } else {
            ((c1 - c0) / c0).abs() * 100.0 > pct
        };
        if differs {
            out.push((
                jopcal_classfile::opcode::mnemonic(op).unwrap_or("?").to_string(),
                c0,
                c1,
            ));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use jopcal_profile::{MethodInfo, Node};
    use jopcal_timing::estimate::estimate;

    /// JOP's published table, the starting point of every fit here.
    pub(crate) fn table() -> TimingModel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        TimingModel::load(&path).unwrap()
    }

    /// A benchmark of one method executing `ops` (opcode, count) once.
    fn profile(name: &str, ops: &[(u8, u64)]) -> Profile {
        Profile {
            benchmark: name.into(),
            methods: vec![MethodInfo {
                class: "t/T".into(),
                name: "run".into(),
                descriptor: "()V".into(),
                bytecode_len: 40,
                native: false,
                synchronized: false,
            }],
            nodes: vec![Node {
                parent: None,
                method: 0,
                calls: 1,
                opcodes: ops.iter().copied().collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    const GETFIELD: u8 = 0xb4;
    const PUTFIELD: u8 = 0xb5;
    const IADD: u8 = 0x60;
    const LDIV: u8 = 0x6d;
    const IREM: u8 = 0x70;
    const LREM: u8 = 0x71;

    /// Benchmarks measured on a "board" that is `truth` exactly.
    pub(crate) fn measured_on(truth: &TimingModel, mixes: &[(&str, Vec<(u8, u64)>)]) -> Vec<Observation> {
        mixes
            .iter()
            .map(|(name, ops)| {
                let p = profile(name, ops);
                Observation {
                    benchmark: name.to_string(),
                    measured: estimate(&p, truth, CacheMode::Hit).cycles,
                    profile: p,
                }
            })
            .collect()
    }

    #[test]
    fn a_measurement_no_table_could_make_is_suspect() {
        let t = table();
        let mut obs = measured_on(&t, &mixes());
        obs[0].measured *= 1.3;
        assert!(suspects(&obs.iter().collect::<Vec<_>>(), &t, CacheMode::Hit, 10.0, &[]).is_empty());
        obs[1].measured = 99_999_999_999.0;
        obs[2].measured /= 50.0;
        let found = suspects(&obs.iter().collect::<Vec<_>>(), &t, CacheMode::Hit, 10.0, &[]);
        let names: Vec<&str> = found.iter().map(|x| x.benchmark.as_str()).collect();
        assert_eq!(names, [obs[1].benchmark.as_str(), obs[2].benchmark.as_str()]);
        assert!(found[0].ratio() > 10.0 && found[1].ratio() < 0.1);
        // Far above, but a routine the fit sets takes part: a table makes it.
        let mut high = measured_on(&t, &mixes());
        high[2].measured *= 40.0;
        let refs: Vec<&Observation> = high.iter().collect();
        assert_eq!(suspects(&refs, &t, CacheMode::Hit, 10.0, &[]).len(), 1);
        let routines = routine_params(&t);
        assert!(!routines.is_empty());
        assert!(suspects(&refs, &t, CacheMode::Hit, 10.0, &routines).is_empty());
        // ... but not a measurement beyond the counter, nor one far below.
        high[1].measured = 99_999_999_999.0;
        high[3].measured /= 50.0;
        let refs: Vec<&Observation> = high.iter().collect();
        assert_eq!(suspects(&refs, &t, CacheMode::Hit, 10.0, &routines).len(), 2);
    }

    pub(crate) fn mixes() -> Vec<(&'static str, Vec<(u8, u64)>)> {
        vec![
            (
                "Reads",
                vec![(GETFIELD, 9000), (IADD, 20000), (PUTFIELD, 100), (LDIV, 3), (IREM, 40)],
            ),
            (
                "Writes",
                vec![(GETFIELD, 500), (IADD, 5000), (PUTFIELD, 7000), (LDIV, 10), (IREM, 2)],
            ),
            (
                "Divides",
                vec![(GETFIELD, 300), (IADD, 9000), (PUTFIELD, 300), (LDIV, 400), (IREM, 10)],
            ),
            (
                "Remainders",
                vec![(GETFIELD, 1000), (IADD, 3000), (PUTFIELD, 50), (LDIV, 1), (IREM, 900)],
            ),
            (
                "Mixed",
                vec![(GETFIELD, 4000), (IADD, 4000), (PUTFIELD, 4000), (LDIV, 40), (IREM, 40)],
            ),
            ("Plain", vec![(GETFIELD, 100), (IADD, 60000), (PUTFIELD, 100)]),
        ]
    }

    pub(crate) fn spec(params: &[&str]) -> FitSpec {
        FitSpec {
            params: params.iter().map(|p| p.to_string()).collect(),
            integer: vec!["r".into(), "w".into()],
            caches: vec![CacheMode::Hit],
        }
    }

    pub(crate) fn value(f: &Fit, name: &str) -> f64 {
        f.params.iter().find(|p| p.name == name).unwrap().value
    }

    #[test]
    fn recovers_known_wait_states_and_routine_costs_exactly() {
        let start = table();
        let mut truth = start.clone();
        for (p, v) in [("r", 3.0), ("w", 5.0), ("impl_ldiv", 700.0), ("impl_irem", 150.0)] {
            truth.set_param(p, v).unwrap();
        }
        let obs = measured_on(&truth, &mixes());
        let refs: Vec<&Observation> = obs.iter().collect();
        let f = fit(
            &refs,
            &start,
            &spec(&["r", "w", "impl_ldiv", "impl_irem"]),
            &Memo::default(),
        )
        .unwrap();
        assert_eq!(value(&f, "r"), 3.0, "whole wait states");
        assert_eq!(value(&f, "w"), 5.0);
        assert!((value(&f, "impl_ldiv") - 700.0).abs() < 1e-6, "{:?}", f.params);
        assert!((value(&f, "impl_irem") - 150.0).abs() < 1e-6, "{:?}", f.params);
        assert!(f.params.iter().all(|p| p.unidentified.is_none()));
        assert!(f.max_abs_error_pct() < 1e-9, "{:?}", f.rows);
        // The fitted model, applied, is the truth on every benchmark.
        let fitted = f.apply(&start);
        for o in &obs {
            let e = estimate(&o.profile, &fitted, CacheMode::Hit).cycles;
            assert!((e - o.measured).abs() < 1e-6 * o.measured);
        }
    }

    #[test]
    fn a_routine_parameter_an_operand_formula_names_too_is_fitted_from_both() {
        // jop-devel.toml's shape: lookupswitch priced by the cases it compared,
        // its formula naming the routine parameter of the bytecode itself.
        const LOOKUPSWITCH: u8 = 0xab;
        let wcet = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let text = format!(
            "[model]\nname = \"switches\"\nbase = \"{}\"\n[params]\ncase = 0\n\
             [operands.lookupswitch]\n\"0-255\" = \"java_dispatch + impl_switch + case * n\"\n",
            wcet.canonicalize().unwrap().display()
        );
        let start = TimingModel::parse(&text, std::path::Path::new("/tmp/switches.toml")).unwrap();
        let mut truth = start.clone();
        truth.set_param("impl_switch", 110.0).unwrap();
        truth.set_param("case", 24.0).unwrap();
        // Only lookupswitches: the routine's count column alone would be empty.
        let obs: Vec<Observation> = [("Near", 1u8), ("Far", 5u8)]
            .iter()
            .map(|&(name, n)| {
                let mut p = profile(name, &[(IADD, 1000), (LOOKUPSWITCH, 200)]);
                p.nodes[0].operands.insert((LOOKUPSWITCH, n), 200);
                Observation {
                    benchmark: name.to_string(),
                    measured: estimate(&p, &truth, CacheMode::Hit).cycles,
                    profile: p,
                }
            })
            .collect();
        let refs: Vec<&Observation> = obs.iter().collect();
        let f = fit(&refs, &start, &spec(&["impl_switch", "case"]), &Memo::default()).unwrap();
        assert!((value(&f, "impl_switch") - 110.0).abs() < 1e-6, "{:?}", f.params);
        assert!((value(&f, "case") - 24.0).abs() < 1e-6, "{:?}", f.params);
    }

    #[test]
    fn a_parameter_is_held_at_its_physical_bound_and_says_what_the_fit_wanted() {
        let wcet = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let text = format!(
            "[model]\nname = \"bounded\"\nbase = \"{}\"\n[max]\nimpl_irem = 100\n",
            wcet.canonicalize().unwrap().display()
        );
        let start = TimingModel::parse(&text, std::path::Path::new("/tmp/bounded.toml")).unwrap();
        let mut truth = table();
        truth.set_param("impl_ldiv", 700.0).unwrap();
        truth.set_param("impl_irem", 150.0).unwrap();
        let obs = measured_on(&truth, &mixes());
        let refs: Vec<&Observation> = obs.iter().collect();
        let f = fit(&refs, &start, &spec(&["impl_ldiv", "impl_irem"]), &Memo::default()).unwrap();
        let irem = f.params.iter().find(|p| p.name == "impl_irem").unwrap();
        assert_eq!(irem.value, 100.0, "held at its max");
        assert!(irem.above_max.is_some_and(|v| v > 100.0), "{irem:?}");
        let ldiv = f.params.iter().find(|p| p.name == "impl_ldiv").unwrap();
        assert_eq!(ldiv.above_max, None);
        assert!(ldiv.value > 0.0 && ldiv.unidentified.is_none(), "{ldiv:?}");
        // Without the bound the same data gives the truth.
        let free = fit(&refs, &table(), &spec(&["impl_ldiv", "impl_irem"]), &Memo::default()).unwrap();
        assert!((value(&free, "impl_irem") - 150.0).abs() < 1e-6);
    }

    #[test]
    fn a_parameter_only_one_benchmark_depends_on_is_flagged_with_its_name() {
        let start = table();
        let mut truth = start.clone();
        truth.set_param("impl_lrem", 900.0).unwrap();
        truth.set_param("impl_ldiv", 500.0).unwrap();
        let mut mix = mixes();
        mix.push(("OnlyLrem", vec![(IADD, 100), (LREM, 50)]));
        let obs = measured_on(&truth, &mix);
        let refs: Vec<&Observation> = obs.iter().collect();
        let f = fit(&refs, &start, &spec(&["impl_ldiv", "impl_lrem"]), &Memo::default()).unwrap();
        let lrem = f.params.iter().find(|p| p.name == "impl_lrem").unwrap();
        assert!((lrem.value - 900.0).abs() < 1e-6, "{lrem:?}");
        assert_eq!(lrem.sole_benchmark.as_deref(), Some("OnlyLrem"));
        let ldiv = f.params.iter().find(|p| p.name == "impl_ldiv").unwrap();
        assert_eq!(ldiv.sole_benchmark, None, "five benchmarks divide");
    }

    #[test]
    fn a_benchmark_the_model_cannot_express_is_left_out_by_name() {
        let start = table();
        let mut truth = start.clone();
        for (p, v) in [("impl_ldiv", 700.0), ("impl_irem", 150.0)] {
            truth.set_param(p, v).unwrap();
        }
        let mut obs = measured_on(&truth, &mixes());
        // A benchmark whose measurement no table explains (+30% on its own).
        let mut odd = measured_on(&truth, &[("Odd", vec![(GETFIELD, 500), (IADD, 500), (LDIV, 20)])]);
        odd[0].measured *= 1.3;
        obs.append(&mut odd);
        let refs: Vec<&Observation> = obs.iter().collect();
        let s = spec(&["impl_ldiv", "impl_irem"]);
        let (f, outliers) = fit_without_outliers(&refs, &start, &s, &Memo::default(), 5.0).unwrap();
        assert_eq!(outliers.len(), 1, "{outliers:?}");
        assert_eq!(outliers[0].benchmark, "Odd");
        assert!(
            (value(&f, "impl_ldiv") - 700.0).abs() < 1e-6,
            "the others fit exactly: {:?}",
            f.params
        );
        // Without the limit the outlier moves the parameters.
        let (all, none) = fit_without_outliers(&refs, &start, &s, &Memo::default(), 1e9).unwrap();
        assert!(none.is_empty());
        assert!((value(&all, "impl_ldiv") - 700.0).abs() > 1.0);
    }

    /// `run` calls the library method `java.util.X.f()V` once; `f` adds 100 times.
    pub(crate) fn calls_library(name: &str) -> Profile {
        let mut p = profile(name, &[(IADD, 50), (0xb8, 1)]);
        p.methods.push(MethodInfo {
            class: "java/util/X".into(),
            name: "f".into(),
            descriptor: "()V".into(),
            bytecode_len: 120,
            native: false,
            synchronized: false,
        });
        p.nodes.push(Node {
            parent: Some(0),
            method: 1,
            callsite: 3,
            invoke_opcode: 0xb8,
            calls: 1,
            opcodes: [(IADD, 100), (0xb1, 1)].into_iter().collect(),
            ..Default::default()
        });
        p.entry_stack = vec![0];
        p.events = vec![jopcal_profile::Event::Invoke(1), jopcal_profile::Event::Return];
        p.complete = true;
        p
    }

    #[test]
    fn a_parameter_no_benchmark_depends_on_keeps_its_start_and_says_why() {
        let start = table();
        let mut truth = start.clone();
        truth.set_param("impl_ldiv", 500.0).unwrap();
        let obs = measured_on(&truth, &mixes());
        let refs: Vec<&Observation> = obs.iter().collect();
        let f = fit(&refs, &start, &spec(&["impl_ldiv", "impl_lrem"]), &Memo::default()).unwrap();
        let lrem = f.params.iter().find(|p| p.name == "impl_lrem").unwrap();
        assert_eq!(lrem.value, lrem.start, "never invented");
        assert_eq!(
            lrem.unidentified.as_deref(),
            Some("no benchmark's estimate depends on it")
        );
        assert!((value(&f, "impl_ldiv") - 500.0).abs() < 1e-6);
    }

    #[test]
    fn parameters_the_data_cannot_tell_apart_are_named() {
        let start = table();
        let mut truth = start.clone();
        truth.set_param("impl_ldiv", 300.0).unwrap();
        truth.set_param("impl_lrem", 300.0).unwrap();
        // ldiv and lrem always run together, one for one: only their sum is known.
        let together: Vec<(&str, Vec<(u8, u64)>)> = (1..=4u64)
            .map(|k| {
                let name: &'static str = ["A", "B", "C", "D"][k as usize - 1];
                (name, vec![(IADD, 1000 * k * k), (LDIV, 50 * k), (LREM, 50 * k)])
            })
            .collect();
        let obs = measured_on(&truth, &together);
        let refs: Vec<&Observation> = obs.iter().collect();
        let f = fit(&refs, &start, &spec(&["impl_ldiv", "impl_lrem"]), &Memo::default()).unwrap();
        let lrem = f.params.iter().find(|p| p.name == "impl_lrem").unwrap();
        assert_eq!(
            lrem.unidentified.as_deref(),
            Some("its effect cannot be told apart from impl_ldiv")
        );
        assert_eq!(lrem.value, 0.0, "kept at its start");
        // The identified one absorbs the pair, and the fit still explains the data.
        assert!((value(&f, "impl_ldiv") - 600.0).abs() < 1e-6, "{:?}", f.params);
        assert!(f.max_abs_error_pct() < 1e-9);
    }

    #[test]
    fn one_benchmark_is_too_few_to_fit() {
        let start = table();
        let obs = measured_on(&start, &mixes()[..1]);
        let refs: Vec<&Observation> = obs.iter().collect();
        let e = fit(&refs, &start, &spec(&["r"]), &Memo::default())
            .unwrap_err()
            .to_string();
        assert_eq!(e, "1 observation(s): too few to fit anything");
    }

    #[test]
    fn leave_one_out_predicts_exact_data_exactly_and_noisy_data_out_of_sample() {
        let start = table();
        let mut truth = start.clone();
        truth.set_param("r", 2.0).unwrap();
        truth.set_param("impl_irem", 80.0).unwrap();
        let mut obs = measured_on(&truth, &mixes());
        let s = spec(&["r", "impl_irem"]);
        let memo = Memo::default();
        let heard = std::sync::Mutex::new(Vec::new());
        let refs: Vec<&Observation> = obs.iter().collect();
        let loo = leave_one_out(&refs, &start, &start, &s, CacheMode::Hit, &memo, &|b, _, _| {
            heard.lock().unwrap().push(b.to_string())
        })
        .unwrap();
        assert_eq!(
            heard.into_inner().unwrap().len(),
            obs.len(),
            "one callback per benchmark"
        );
        for (b, m, p) in &loo {
            assert!((p - m).abs() < 1e-6 * m, "{b}: measured {m}, predicted {p}");
        }
        // One benchmark off by 10%: its own prediction, fitted without it, shows it.
        obs[2].measured *= 1.10;
        let refs: Vec<&Observation> = obs.iter().collect();
        let loo = leave_one_out(
            &refs,
            &start,
            &start,
            &s,
            CacheMode::Hit,
            &Memo::default(),
            &|_, _, _| {},
        )
        .unwrap();
        let (b, m, p) = &loo[2];
        assert_eq!(b, "Divides");
        let err = 100.0 * (p - m) / m;
        assert!((err + 100.0 / 11.0).abs() < 0.5, "leave-one-out error {err}%");
    }
}
