//! The JOP tree's simulator: each workload's image is built by the tree's
//! toolchain and run in JopSim as a subprocess; its output is read for
//! `@jopcal` result lines like a board's and kept as the raw log. JopSim is
//! not cycle exact; its rows say so in `target_config`.

use crate::toolchain::{shell, Toolchain};
use crate::{Job, JobEnd, JobError, Prepared, Progress, Reported, Sink, Target, TargetError, TargetKind, ToolError};
use jopcal_measure::{atomic, ResultLine, Unit};
use jopcal_workloads::Suite;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// JopSim as a target.
pub struct JopsimTarget {
    tools: Toolchain,
    template: String,
    root: PathBuf,
    benches: Vec<String>,
    limit: Duration,
    suite: Option<Suite>,
    /// The method cache JopSim printed it simulates.
    cache: Option<String>,
}

/// The method cache JopSim says it simulates: its statistics end with
/// `Variable block cache <K> KB & <blocks> & ...`; as `fifo:<bytes>:<blocks>`.
pub fn reported_cache(stdout: &str) -> Option<String> {
    let rest = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("Variable block cache "))?;
    let mut fields = rest.split('&').map(str::trim);
    let kb: u32 = fields.next()?.strip_suffix("KB")?.trim().parse().ok()?;
    let blocks: u32 = fields.next()?.parse().ok()?;
    Some(format!("fifo:{}:{blocks}", kb.checked_mul(1024)?))
}

impl JopsimTarget {
    /// The suite in `root` (only `benches` if any are named), built and run
    /// by `tools`; each build and each run limited to `limit`.
    pub fn new(
        tools: Toolchain,
        root: &Path,
        benches: &[String],
        limit: Duration,
    ) -> Result<JopsimTarget, TargetError> {
        let template = tools.cfg.jopsim.clone().ok_or_else(|| TargetError::MissingTemplate {
            file: tools.cfg.file.clone(),
            key: "jopsim",
            why: "--target jopsim needs build, image and jopsim".into(),
        })?;
        Ok(JopsimTarget {
            tools,
            template,
            root: root.to_path_buf(),
            benches: benches.to_vec(),
            limit,
            suite: None,
            cache: None,
        })
    }
}

impl Target for JopsimTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::Jopsim
    }

    fn prepare(&mut self, _staging: &Path, _progress: &dyn Progress) -> Result<Prepared, TargetError> {
        let suite = Suite::load(&self.root)?;
        let jobs = suite
            .select(&self.benches)?
            .iter()
            .map(|w| Job {
                name: w.name.clone(),
                hash: String::new(),
            })
            .collect();
        self.suite = Some(suite);
        Ok(Prepared {
            jobs,
            left_out: Vec::new(),
        })
    }

    fn config(&self) -> String {
        format!(
            "JopSim via jopcal.toml ({}; not cycle exact)",
            self.tools.cfg.file.display()
        )
    }

    fn run(
        &mut self,
        job: &Job,
        _run: u32,
        out: &Path,
        sink: &mut Sink<'_>,
        progress: &dyn Progress,
    ) -> Result<JobEnd, JobError> {
        let suite = self.suite.as_ref().ok_or(JobError::NotPrepared("jopsim"))?;
        let w = suite
            .workloads
            .iter()
            .find(|w| w.name == job.name)
            .ok_or_else(|| JobError::Unknown {
                what: "workload",
                name: job.name.clone(),
            })?;
        let log = format!("logs/{}-jopsim.log", job.name);
        let image = out.join(format!("images/{}.jop", job.name));
        self.tools.build_image(suite, w, out, &image, self.limit)?;
        self.tools.tell_resident_ecj(progress);
        let cmd = self.tools.jopsim_command(&self.template, suite, w, out, &image)?;
        let (stdout, stderr) = shell(&cmd, &self.tools.home, self.limit).map_err(ToolError::Run)?;
        let text = format!("# command: {cmd}\n# ---- stdout ----\n{stdout}# ---- stderr ----\n{stderr}");
        let log_path = out.join(&log);
        atomic::write_atomic(&log_path, text.as_bytes())
            .map_err(|source| JobError::WriteLog { path: log_path, source })?;
        let t = jopcal_measure::transcript::scan(&stdout).map_err(JobError::ResultLine)?;
        for (_, r) in &t.results {
            if let ResultLine::Result {
                bench,
                iterations,
                cycles,
                ..
            } = r
            {
                sink(Reported {
                    bench: bench.clone(),
                    iterations: *iterations,
                    value: *cycles,
                    unit: Unit::Cycles,
                    log: log.clone(),
                })?;
            }
        }
        if let Some(c) = reported_cache(&stdout) {
            self.cache = Some(c);
        }
        let stop = crate::board::uncaught_exception(&stdout, &image);
        Ok(JobEnd {
            output: stdout,
            log,
            stop,
        })
    }

    fn method_cache(&self) -> Option<String> {
        self.cache.clone()
    }

    fn times_monitors_as_jopsim(&self) -> bool {
        true
    }

    fn finish(&mut self, _out: Option<&Path>) -> Result<(), TargetError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::reported_cache;

    #[test]
    fn the_cache_jopsim_reports() {
        // The end of JopSim's statistics (jop-devel/jop).
        let out = "total method cache load cycles: 1631\n\nVariable block cache 4 KB & 16 & 0.00 & 0.000 &  \\\\\n";
        assert_eq!(reported_cache(out).as_deref(), Some("fifo:4096:16"));
        assert_eq!(
            reported_cache("Variable block cache 1 KB & 8 & 1.0\n").as_deref(),
            Some("fifo:1024:8")
        );
        assert_eq!(reported_cache("JVM exit!\n"), None);
        assert_eq!(reported_cache("Variable block cache x KB & 16\n"), None);
    }
}
