//! The agent's option string: `key=value` pairs separated by commas, as given
//! after `-agentpath:libjopcal_agent.so=`. Values are percent-escaped for `,`
//! and `%` ([`escape`]) so that any path can be passed.

use crate::error::OptionsError;
use std::path::PathBuf;

/// Which part of the program is profiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Region {
    /// From the return of `<marker>.start()` to the entry of `<marker>.stop()`, all threads.
    Harness { marker: String, main: Option<String> },
    /// The dynamic extent of `<class>.main(String[])`.
    Main { class: String },
    /// The dynamic extent of the first call of `<class>.<name>` (any descriptor),
    /// e.g. a JemBench benchmark's `test` method.
    Method { class: String, name: String },
}

impl Region {
    /// The program's main class, when known: calls are tracked from its
    /// `main` on (for the method cache's state), counted only in the region.
    pub fn main_class(&self) -> Option<&str> {
        match self {
            Region::Harness { main, .. } => main.as_deref(),
            Region::Main { class } | Region::Method { class, .. } => Some(class),
        }
    }

    /// The name written into the profile.
    pub fn name(&self) -> &'static str {
        match self {
            Region::Harness { .. } => "harness",
            Region::Main { .. } => "main",
            Region::Method { .. } => "method",
        }
    }
}

/// The harness class of jop-firmware, whose start()/stop() bound the region.
pub const DEFAULT_MARKER: &str = "jopcal/harness/Harness";

/// Parsed agent options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentOptions {
    /// Where the `.jopprof` file is written (atomically).
    pub out: PathBuf,
    pub benchmark: String,
    pub region: Region,
}

/// Escapes a value for the option string.
pub fn escape(value: &str) -> String {
    value.replace('%', "%25").replace(',', "%2C")
}

fn unescape(value: &str) -> String {
    value.replace("%2C", ",").replace("%2c", ",").replace("%25", "%")
}

impl AgentOptions {
    /// The option string that [`AgentOptions::parse`] reads back.
    pub fn to_option_string(&self) -> String {
        let mut s = format!(
            "out={},bench={}",
            escape(&self.out.to_string_lossy()),
            escape(&self.benchmark)
        );
        match &self.region {
            Region::Harness { marker, main } => {
                s.push_str(",region=harness");
                if marker != DEFAULT_MARKER {
                    s.push_str(&format!(",marker={}", escape(marker)));
                }
                if let Some(m) = main {
                    s.push_str(&format!(",main={}", escape(m)));
                }
            }
            Region::Main { class } => s.push_str(&format!(",region=main,main={}", escape(class))),
            Region::Method { class, name } => {
                s.push_str(&format!(",region=method,method={}", escape(&format!("{class}.{name}"))))
            }
        }
        s
    }

    /// Parses `out=PATH,bench=NAME,region=harness|main[,main=CLASS][,marker=CLASS]`.
    /// Class names may use dots or slashes.
    pub fn parse(s: &str) -> Result<AgentOptions, OptionsError> {
        let (mut out, mut bench, mut region, mut main, mut marker) = (None, None, None, None, None);
        let mut method: Option<String> = None;
        for pair in s.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| OptionsError::NotKeyValue(pair.to_string()))?;
            let v = unescape(v);
            match k {
                "out" => out = Some(PathBuf::from(v)),
                "bench" => bench = Some(v),
                "region" => region = Some(v),
                "main" => main = Some(v.replace('.', "/")),
                "marker" => marker = Some(v.replace('.', "/")),
                "method" => method = Some(v),
                other => return Err(OptionsError::UnknownOption(other.to_string())),
            }
        }
        let out = out.ok_or(OptionsError::MissingOut)?;
        let region = match region.as_deref().unwrap_or("harness") {
            "harness" => Region::Harness {
                marker: marker.unwrap_or_else(|| DEFAULT_MARKER.to_string()),
                main,
            },
            "main" => Region::Main {
                class: main.ok_or(OptionsError::MainNeedsClass)?,
            },
            "method" => {
                let m = method.ok_or(OptionsError::MethodNeedsMethod)?;
                let (class, name) = m
                    .rsplit_once('.')
                    .ok_or_else(|| OptionsError::NotClassDotName(m.clone()))?;
                Region::Method {
                    class: class.replace('.', "/"),
                    name: name.to_string(),
                }
            }
            other => return Err(OptionsError::UnknownRegion(other.to_string())),
        };
        Ok(AgentOptions {
            out,
            benchmark: bench.unwrap_or_else(|| "program".to_string()),
            region,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_regions_and_escapes() {
        let o = AgentOptions::parse(&format!("out={},bench=Sieve", escape("/tmp/a,b%c.jopprof"))).unwrap();
        assert_eq!(o.out, PathBuf::from("/tmp/a,b%c.jopprof"));
        assert_eq!(o.benchmark, "Sieve");
        assert_eq!(
            o.region,
            Region::Harness {
                marker: DEFAULT_MARKER.into(),
                main: None
            }
        );
        let o = AgentOptions::parse("out=p,region=main,main=a.b.C").unwrap();
        assert_eq!(o.region, Region::Main { class: "a/b/C".into() });
        assert_eq!(AgentOptions::parse(&o.to_option_string()).unwrap(), o);
        let o = AgentOptions::parse("out=p,region=method,method=jbe.BenchKfl.test").unwrap();
        assert_eq!(
            o.region,
            Region::Method {
                class: "jbe/BenchKfl".into(),
                name: "test".into()
            }
        );
        assert_eq!(AgentOptions::parse(&o.to_option_string()).unwrap(), o);
    }

    #[test]
    fn rejects_bad_options() {
        assert_eq!(
            AgentOptions::parse("bench=x").unwrap_err().to_string(),
            "missing option out=PATH"
        );
        assert_eq!(
            AgentOptions::parse("out=p,region=main").unwrap_err().to_string(),
            "region=main needs main=CLASS"
        );
        assert_eq!(
            AgentOptions::parse("out=p,colour=red").unwrap_err().to_string(),
            "unknown option `colour`"
        );
        assert_eq!(
            AgentOptions::parse("out").unwrap_err().to_string(),
            "option `out` is not key=value"
        );
    }
}
