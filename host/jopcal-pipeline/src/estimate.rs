//! Estimating: profiles × timing model → `estimates.csv` and its breakdown
//! `estimates.json`, with method sizes from JOP's images where given.

use crate::{locate, Session};
use anyhow::{anyhow, Context, Result};
use jopcal_measure::{atomic, clock, OutDir};
use jopcal_profile::Profile;
use jopcal_report::breakdown::{Breakdown, EstimatesFile};
use jopcal_report::estimates::{write_estimates as write_estimates_csv, EstimateRow};
use jopcal_timing::cache::CacheMode;
use jopcal_timing::estimate::{estimate as run_estimate, Estimate};
use jopcal_timing::TimingModel;
use std::path::{Path, PathBuf};

/// What `jopcal estimate` estimates, with which table, and where it writes
/// (the verb's arguments as they are).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EstimateOptions {
    /// Directory of .jopprof profiles (as written by `jopcal profile`).
    #[arg(long, value_name = "DIR")]
    pub profiles: PathBuf,
    /// Timing model file (default: calibration/jop-wcet.toml of this checkout).
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Override a model parameter, e.g. --param r=3 (repeatable).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Method-cache mode: hit, miss or fifo:<bytes>:<blocks> (repeatable).
    #[arg(long = "cache", value_name = "MODE", default_values_t = ["hit".to_string(), "miss".to_string(), "fifo:1024:16".to_string()])]
    pub caches: Vec<String>,
    /// Output: a new .csv file (the JSON breakdown goes beside it), or a directory for
    /// estimates.csv (an earlier run in it is moved to previous/). Default: out/estimate-<time>/.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// JOP's image of the program: method sizes come from its method tables (with --link-map).
    #[arg(long, value_name = "FILE.jop", requires = "link_map")]
    pub jop_image: Option<PathBuf>,
    /// The JOP linker's map for --jop-image (<name>.jop.link.txt).
    #[arg(long, value_name = "FILE", requires = "jop_image")]
    pub link_map: Option<PathBuf>,
    /// A directory of JOP images, one per benchmark: <bench>.jop with the linker's
    /// <bench>.jop.link.txt (as `run` keeps them in images/); each profile takes the
    /// method sizes of its own image.
    #[arg(long, value_name = "DIR", conflicts_with = "jop_image")]
    pub images: Option<PathBuf>,
}

/// Where the CSV and the JSON breakdown go: a `.csv` file that must not
/// exist yet (an earlier result is never overwritten), or a directory,
/// `out/estimate-<time>/` by default.
fn outputs(out: Option<&Path>) -> Result<(PathBuf, PathBuf)> {
    if let Some(file) = out.filter(|o| o.extension().is_some_and(|e| e == "csv")) {
        let json = file.with_extension("json");
        jopcal_measure::new_file::ensure_new("--out", file, std::slice::from_ref(&json))?;
        locate::check_writable(
            file.parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
        )?;
        return Ok((file.to_owned(), json));
    }
    let stamp = clock::now_stamp();
    let out = locate::out_dir(out, "estimate", &stamp)?;
    let dir = OutDir::prepare(&out, &stamp).with_context(|| format!("preparing {}", out.display()))?;
    Ok((dir.join("estimates.csv"), dir.join("estimates.json")))
}

/// Estimates every profile of `a.profiles` under every cache mode; returns
/// the `estimates.csv` written.
pub fn estimate(s: Session, a: &EstimateOptions) -> Result<PathBuf> {
    let modes: Vec<CacheMode> = a
        .caches
        .iter()
        .map(|c| c.parse::<CacheMode>().map_err(|e| anyhow!(e)))
        .collect::<Result<_>>()?;
    let model_path = locate::model_path(a.model.as_deref(), s.firmware)?;
    let mut model = TimingModel::load(&model_path)?;
    model.apply_overrides(&a.params)?;
    let mut profiles =
        jopcal_profile::read_dir(&a.profiles).with_context(|| format!("--profiles {}", a.profiles.display()))?;
    let sizes = match (&a.jop_image, &a.link_map) {
        (Some(img), Some(map)) => Some(jop_sizes(s, img, map, &profiles)?),
        _ => None,
    };
    if let Some(dir) = &a.images {
        for p in &mut profiles {
            match benchmark_image(dir, &p.benchmark) {
                Some((image, map)) => {
                    let sizes = load_image_sizes(s, &image, &map)?;
                    report_disagreements(s, p, &sizes);
                    jopcal_jop::sizes::apply(p, &sizes);
                }
                None => s.say(&format!(
                    "  estimate {}: no {}.jop with its .jop.link.txt in {}: the host's method sizes",
                    p.benchmark,
                    p.benchmark,
                    dir.display()
                )),
            }
        }
    }
    let (csv_path, json_path) = outputs(a.out.as_deref())?;
    let estimates = estimate_all_sized(s, &profiles, &model, &modes, sizes.as_ref());
    write_estimates(
        &estimates,
        &profiles,
        modes.len(),
        &model,
        &model_path,
        &csv_path,
        &json_path,
    )?;
    let java: f64 = estimates
        .iter()
        .map(|e| e.java_routine_cycles + e.java_dispatch_cycles)
        .sum();
    let total: f64 = estimates.iter().map(|e| e.cycles).sum();
    if total > 0.0 {
        s.say(&format!(
            "  estimate {} benchmark(s) x {} cache mode(s); {:.1}% of the cycles come from bytecodes JOP implements in Java",
            profiles.len(),
            modes.len(),
            100.0 * java / total
        ));
    }
    Ok(csv_path)
}

/// `<dir>/<bench>.jop` and the linker's `<dir>/<bench>.jop.link.txt`, when both are there.
pub fn benchmark_image(dir: &Path, bench: &str) -> Option<(PathBuf, PathBuf)> {
    let image = dir.join(format!("{bench}.jop"));
    let map = jopcal_jop::linkmap::beside(&image);
    (image.is_file() && map.is_file()).then_some((image, map))
}

/// An image's link map (`<image>.link.txt`), a bad line named by file and line.
pub fn read_link_map(map: &Path) -> Result<jopcal_jop::linkmap::LinkMap> {
    let text = std::fs::read_to_string(map).with_context(|| format!("reading {}", map.display()))?;
    jopcal_jop::linkmap::LinkMap::parse(&text).map_err(|e| anyhow!("{}:{e}", map.display()))
}

/// The method sizes JOP's image holds, found through its link map.
pub fn load_image_sizes(s: Session, image: &Path, map: &Path) -> Result<jopcal_jop::sizes::MethodSizes> {
    let img = jopcal_link::JopImage::load(image, None).map_err(|e| anyhow!(e))?;
    let link = read_link_map(map)?;
    let (sizes, missing) = jopcal_jop::sizes::method_sizes(&img, &link);
    s.say(&format!(
        "  estimate method sizes of {} methods from {} ({} in the link map not found in its method tables)",
        sizes.len(),
        image.display(),
        missing.len()
    ));
    Ok(sizes)
}

/// Names (the first five of) the methods `p` executed that the image lacks or sizes differently.
fn report_disagreements(s: Session, p: &Profile, sizes: &jopcal_jop::sizes::MethodSizes) {
    let d = jopcal_jop::compare::compare(p, sizes);
    for x in d.iter().take(5) {
        match x {
            jopcal_jop::compare::Disagreement::NotInImage(m, n) => s.say(&format!(
                "  estimate {}: {m} ran {n} bytecodes on the host but is not in the JOP image",
                p.benchmark
            )),
            jopcal_jop::compare::Disagreement::Size(m, h, j) => s.say(&format!(
                "  estimate {}: {m} is {h} words on the host, {j} in the JOP image",
                p.benchmark
            )),
        }
    }
    if d.len() > 5 {
        s.say(&format!(
            "  estimate {}: {} more methods disagree",
            p.benchmark,
            d.len() - 5
        ));
    }
}

/// Method sizes from one JOP image and link map for every profile; reports
/// what the host profiles executed that the image lacks or sizes differently.
fn jop_sizes(s: Session, image: &Path, map: &Path, profiles: &[Profile]) -> Result<jopcal_jop::sizes::MethodSizes> {
    let sizes = load_image_sizes(s, image, map)?;
    for p in profiles {
        report_disagreements(s, p, &sizes);
    }
    Ok(sizes)
}

/// Every profile under every cache mode, in profile order.
pub fn estimate_all(s: Session, profiles: &[Profile], model: &TimingModel, modes: &[CacheMode]) -> Vec<Estimate> {
    estimate_all_sized(s, profiles, model, modes, None)
}

/// [`estimate_all`] with method sizes from JOP's image where known.
pub fn estimate_all_sized(
    s: Session,
    profiles: &[Profile],
    model: &TimingModel,
    modes: &[CacheMode],
    sizes: Option<&jopcal_jop::sizes::MethodSizes>,
) -> Vec<Estimate> {
    let mut estimates: Vec<Estimate> = Vec::new();
    for p in profiles {
        if !p.complete {
            s.say(&format!(
                "  estimate warning: profile of {} is marked incomplete (the program ended inside the region)",
                p.benchmark
            ));
        }
        for m in modes {
            estimates.push(match sizes {
                Some(sz) => {
                    jopcal_timing::estimate::estimate_sized(p, model, *m, &|mi| sz.get(&mi.qualified()).copied())
                }
                None => run_estimate(p, model, *m),
            });
        }
    }
    estimates
}

/// Writes estimates.csv and the JSON breakdown beside it (each atomically).
pub fn write_estimates(
    estimates: &[Estimate],
    profiles: &[Profile],
    n_modes: usize,
    model: &TimingModel,
    model_path: &Path,
    csv_path: &Path,
    json_path: &Path,
) -> Result<()> {
    let file = EstimatesFile {
        estimates: estimates
            .iter()
            .zip(profiles.iter().flat_map(|p| std::iter::repeat_n(p, n_modes)))
            .map(|(e, p)| Breakdown::of(e, p))
            .collect(),
        model: model.name.clone(),
        model_file: model_path.display().to_string(),
        params: model.params().clone(),
    };
    let rows: Vec<EstimateRow> = estimates.iter().map(EstimateRow::from).collect();
    write_estimates_csv(csv_path, &rows).with_context(|| format!("writing {}", csv_path.display()))?;
    atomic::write_atomic(json_path, file.to_json().as_bytes())
        .with_context(|| format!("writing {}", json_path.display()))?;
    Ok(())
}
