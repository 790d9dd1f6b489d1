//! Writing a fitted table: a model file that derives from the starting one
//! (`base = ...`) and sets the fitted parameters, with the fit's statistics
//! as comments, so the result is itself a loadable timing table.

use crate::fit::Fit;
use jopcal_timing::file::{number, DerivedModel};
use jopcal_timing::model::HOST_CODE;
use std::path::Path;

/// The text of `calibrated.toml`. `base` is the starting model's path as the
/// new file should name it (relative to where it is written).
pub fn calibrated_toml(
    fit: &Fit,
    start: &jopcal_timing::TimingModel,
    carried: &[(String, String)],
    name: &str,
    loo_max_abs_pct: Option<f64>,
    notes: &[String],
) -> String {
    let mut header = vec![
        "Timing table fitted by `jopcal calibrate` to measured cycles.".to_string(),
        format!("Method cache chosen by the fit: {}", fit.cache),
        format!(
            "Largest |error| of the fitted table on the data: {:.4}%",
            fit.max_abs_error_pct()
        ),
    ];
    if let Some(l) = loo_max_abs_pct {
        header.push(format!(
            "Largest |error| in leave-one-benchmark-out cross-validation: {l:.4}%"
        ));
    }
    header.extend(notes.iter().cloned());
    let base = carried.first().map_or("", |(n, _)| n.as_str());
    let mut m = DerivedModel::new(
        &header,
        name,
        &format!("{base} fitted to measurements"),
        &base.replace('\\', "/"),
    );
    for p in &fit.params {
        match &p.unidentified {
            None => {
                let alone = p
                    .sole_benchmark
                    .as_ref()
                    .map(|b| format!("; fitted from {b} alone"))
                    .unwrap_or_default();
                let held = p
                    .above_max
                    .map(|v| format!("; held at its max: the fit wanted {}", number(v)))
                    .unwrap_or_default();
                m.param(&p.name, p.value, Some(&format!("was {}{alone}{held}", number(p.start))));
            }
            Some(why) => m.param_comment(&format!("{} not fitted: {why}; kept at {}", p.name, number(p.start))),
        }
    }
    let host = fit.host_priced(start);
    if !host.is_empty() {
        m.methods(&[
            "Calls whose whole-call cost could not be fitted: priced by the host's profiled code.".to_string(),
        ]);
        for (method, param) in host {
            m.method(&method, HOST_CODE, Some(&format!("{param} not fitted")));
        }
    }
    m.carry(
        &["The table it was fitted from, and the tables that one derives from, as they were.".to_string()],
        carried,
    );
    m.into_toml()
}

/// The base path as seen from the directory `out` is written to.
pub fn relative_base(base: &Path, out: &Path) -> String {
    let base_abs = base.canonicalize().unwrap_or_else(|_| base.to_path_buf());
    let out_dir = out
        .parent()
        .map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p })
        .unwrap_or(Path::new("."));
    let out_abs = out_dir.canonicalize().unwrap_or_else(|_| out_dir.to_path_buf());
    // Walk up from the output directory to a common ancestor.
    let mut up = 0;
    let mut anc = out_abs.as_path();
    loop {
        if let Ok(rest) = base_abs.strip_prefix(anc) {
            let mut s = "../".repeat(up);
            s.push_str(&rest.to_string_lossy());
            return s;
        }
        match anc.parent() {
            Some(p) => {
                anc = p;
                up += 1;
            }
            None => return base_abs.to_string_lossy().into_owned(),
        }
    }
}

/// A model deriving from `base` (a path relative to the new file) that
/// charges each call of `methods` (`pkg.Class.name(desc)`: library code that
/// ran on the host but that JOP's image does not have) a cost of its own, a
/// parameter starting at 0 for the fit to find. Returns the TOML text and the
/// parameter names, in the order of `methods`.
pub fn library_model_toml(base: &str, name: &str, methods: &[String]) -> (String, Vec<String>) {
    let params: Vec<String> = methods
        .iter()
        .enumerate()
        .map(|(i, m)| {
            // `pkg.Class.name(desc)` -> `lib<i>_Class_name`: short, and a valid name.
            let head = m.split('(').next().unwrap_or(m);
            let short: String = head
                .rsplit('.')
                .take(2)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("_")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            format!("lib{i}_{short}")
        })
        .collect();
    let mut m = DerivedModel::new(
        &[
            "Written by jopcal validate: library methods that ran on the host but are not in".to_string(),
            "the JOP image, each call priced by a parameter of its own (fitted by calibrate).".to_string(),
        ],
        name,
        &format!("{base} with per-call costs of {} library method(s)", methods.len()),
        base,
    );
    for p in &params {
        m.param(p, 0.0, None);
    }
    m.methods(&[]);
    for (method, p) in methods.iter().zip(&params) {
        m.method(method, p, None);
    }
    let s = m.into_toml();
    (s, params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::tests::{calls_library, measured_on, mixes, spec, table, value};
    use crate::fit::{fit, Memo, Observation};
    use jopcal_timing::cache::CacheMode;
    use jopcal_timing::estimate::estimate;
    use jopcal_timing::TimingModel;

    #[test]
    fn a_library_call_no_benchmark_fits_is_priced_by_its_host_code() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let (text, _) = library_model_toml(&base.display().to_string(), "lib", &["java.util.X.f()V".to_string()]);
        let file = dir.path().join("lib.toml");
        std::fs::write(&file, text).unwrap();
        let start = TimingModel::load(&file).unwrap();
        let mut truth = start.clone();
        truth.set_param("impl_ldiv", 500.0).unwrap();
        let obs = measured_on(&truth, &mixes());
        let refs: Vec<&Observation> = obs.iter().collect();
        let memo = Memo::default();
        let f = fit(&refs, &start, &spec(&["impl_ldiv", "lib0_X_f"]), &memo).unwrap();
        assert_eq!(value(&f, "lib0_X_f"), 0.0);
        assert_eq!(
            f.host_priced(&start),
            [("java.util.X.f()V".to_string(), "lib0_X_f".to_string())]
        );
        // The start prices the call at 0 cycles; the fitted model by f's 100 iadds and its return.
        let p = calls_library("UsesLib");
        let o = Observation {
            benchmark: "UsesLib".into(),
            measured: 1.0,
            profile: p.clone(),
        };
        let fitted = f.apply(&start);
        assert_eq!(fitted.method_cost("java.util.X.f()V"), None);
        let host = estimate(&p, &table(), CacheMode::Hit).cycles;
        // The replay the fit made prices the call as a whole; the fitted model gets its own.
        assert!(memo.tally(&o, &start, CacheMode::Hit).fits(&start));
        assert_eq!(memo.tally(&o, &fitted, CacheMode::Hit).price(&fitted), host);
        assert!(estimate(&p, &start, CacheMode::Hit).cycles < host - 100.0);
        // calibrated.toml says so and loads with the call priced by its host code.
        let carried = jopcal_timing::file::chain(&file).unwrap();
        let text = calibrated_toml(&f, &start, &carried, "lib-calibrated", None, &[]);
        assert!(
            text.contains("\"java.util.X.f()V\" = \"host\"    # lib0_X_f not fitted"),
            "{text}"
        );
        // It carries its base: it loads alone, anywhere.
        let alone = tempfile::tempdir().unwrap();
        let out = alone.path().join("calibrated.toml");
        std::fs::write(&out, text).unwrap();
        let reloaded = TimingModel::load(&out).unwrap();
        assert_eq!(reloaded.method_cost("java.util.X.f()V"), None);
        assert_eq!(estimate(&p, &reloaded, CacheMode::Hit).cycles, host);
    }

    #[test]
    fn library_model_loads_and_prices_each_method_by_its_parameter() {
        let dir = tempfile::tempdir().unwrap();
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let methods = vec![
            "java.lang.StringBuilder.append(I)Ljava/lang/StringBuilder;".to_string(),
            "java.util.Arrays.fill([II)V".to_string(),
        ];
        let (text, params) = library_model_toml(&base.display().to_string(), "jop-wcet+library", &methods);
        assert_eq!(params, ["lib0_StringBuilder_append", "lib1_Arrays_fill"]);
        let file = dir.path().join("library.toml");
        std::fs::write(&file, text).unwrap();
        let mut m = jopcal_timing::TimingModel::load(&file).unwrap();
        assert_eq!(m.method_cost(&methods[1]), Some(0.0));
        m.set_param("lib1_Arrays_fill", 420.0).unwrap();
        assert_eq!(m.method_cost(&methods[1]), Some(420.0));
        assert_eq!(m.method_cost("java.util.Arrays.sort([I)V"), None);
    }
}
