//! Writing timing-table files: a table derived from another (`base = ...`)
//! that sets parameters and whole-call method prices, with comments saying
//! where each value came from, and re-basing a written table when its
//! directory moves. Written through toml_edit, so names and paths are quoted
//! as TOML requires whatever they hold, and what is written loads back with
//! [`crate::TimingModel::load`] (the one reader of the format).

use crate::error::ModelError;
use std::path::{Path, PathBuf};
use toml_edit::{value, DocumentMut, Item, Key, Table, Value};

/// A table that derives from a base table, built entry by entry.
#[derive(Debug, Clone)]
pub struct DerivedModel {
    doc: DocumentMut,
    /// Comment lines waiting for the next entry of the current table.
    pending: String,
    /// The table entries go to now (`params` or `methods`).
    current: &'static str,
}

impl DerivedModel {
    /// A table named `name` deriving from `base` (a path relative to where
    /// the file is written), headed by the comment lines `header`.
    pub fn new(header: &[String], name: &str, description: &str, base: &str) -> DerivedModel {
        let mut doc = DocumentMut::new();
        let mut model = Table::new();
        model.decor_mut().set_prefix(comment_lines(header) + "\n");
        model.insert("name", value(name));
        model.insert("description", value(description));
        model.insert("base", value(base));
        doc.insert("model", Item::Table(model));
        let mut params = Table::new();
        params.decor_mut().set_prefix("\n");
        doc.insert("params", Item::Table(params));
        DerivedModel {
            doc,
            pending: String::new(),
            current: "params",
        }
    }

    /// Sets parameter `name` to `v` (as [`number`] writes it), with an
    /// end-of-line comment when `note` is given.
    pub fn param(&mut self, name: &str, v: f64, note: Option<&str>) {
        let mut val: Value = number(v).parse().expect("a formatted number is a TOML value");
        self.entry("params", name, &mut val, note);
    }

    /// A comment line among the parameters, before the next entry.
    pub fn param_comment(&mut self, line: &str) {
        self.pending.push_str(&comment_lines(&[line.to_string()]));
    }

    /// Starts the `[methods]` table (whole-call prices by
    /// `pkg.Class.name(desc)`), headed by the comment lines `heading`.
    pub fn methods(&mut self, heading: &[String]) {
        let mut methods = Table::new();
        let waiting = std::mem::take(&mut self.pending);
        methods
            .decor_mut()
            .set_prefix(format!("{waiting}\n{}", comment_lines(heading)));
        self.doc.insert("methods", Item::Table(methods));
        self.current = "methods";
    }

    /// Prices method `qualified` by `price` (a formula, a parameter or
    /// [`crate::model::HOST_CODE`]), with an end-of-line comment when `note` is given.
    pub fn method(&mut self, qualified: &str, price: &str, note: Option<&str>) {
        let mut val = Value::from(price);
        self.entry("methods", qualified, &mut val, note);
    }

    fn entry(&mut self, table: &'static str, key: &str, val: &mut Value, note: Option<&str>) {
        debug_assert_eq!(table, self.current, "entries go to the table last started");
        if let Some(n) = note {
            val.decor_mut().set_suffix(format!("    # {n}"));
        }
        let mut k = Key::new(key);
        k.leaf_decor_mut().set_prefix(std::mem::take(&mut self.pending));
        let t = self.doc[table].as_table_mut().expect("a table this type made");
        t.insert_formatted(&k, Item::Value(val.clone()));
    }

    /// Carries `tables` (name, text; as [`chain`] gives them) in the
    /// file's `[bases]`, where its `base` is looked up first: the file
    /// loads on its own, wherever it is copied.
    pub fn carry(&mut self, heading: &[String], tables: &[(String, String)]) {
        let mut bases = Table::new();
        let waiting = std::mem::take(&mut self.pending);
        bases
            .decor_mut()
            .set_prefix(format!("{waiting}\n{}", comment_lines(heading)));
        for (name, text) in tables {
            bases.insert(name, value(text.as_str()));
        }
        self.doc.insert("bases", Item::Table(bases));
    }

    /// The file's text.
    pub fn into_toml(mut self) -> String {
        // Comments waiting for an entry that never came end the file.
        self.doc.set_trailing(std::mem::take(&mut self.pending));
        self.doc.to_string()
    }
}

/// `# line` for each line.
fn comment_lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("# {l}\n")).collect()
}

/// A parameter value as tables write it: a whole number without decimals,
/// anything else with four.
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

/// `text` (a table file) with its `[model] base` set to `base`; everything
/// else, comments included, stays as it was.
pub fn rebase(text: &str, base: &str) -> Result<String, toml_edit::TomlError> {
    let mut doc: DocumentMut = text.parse()?;
    if let Some(model) = doc.get_mut("model").and_then(Item::as_table_mut) {
        if model.contains_key("base") {
            let old = model["base"].as_value().map(|v| v.decor().clone());
            let mut new = Value::from(base);
            if let Some(d) = old {
                *new.decor_mut() = d;
            }
            model["base"] = Item::Value(new);
        }
    }
    Ok(doc.to_string())
}

/// Whether a table file's `[model] base` is carried inside it (`[bases]`):
/// such a file loads wherever it is copied, its base needs no re-aiming.
pub fn base_is_carried(text: &str) -> bool {
    let Ok(doc) = text.parse::<DocumentMut>() else {
        return false;
    };
    let base = doc.get("model").and_then(|m| m.get("base")).and_then(|b| b.as_str());
    match (base, doc.get("bases").and_then(Item::as_table)) {
        (Some(b), Some(bases)) => bases.contains_key(b),
        _ => false,
    }
}

/// `[model] base` of a table file's text, if it has one.
pub fn base_of(text: &str) -> Option<String> {
    let doc: DocumentMut = text.parse().ok()?;
    doc.get("model")?.get("base")?.as_str().map(str::to_string)
}

/// The table at `table` and every table it derives from, as (name, text)
/// from `table` down: each named by its own file name (`-2`, `-3` ... where
/// two share one), its base re-aimed at the next one's name.
pub fn chain(table: &Path) -> Result<Vec<(String, String)>, ModelError> {
    let fail = |p: &Path, message: String| ModelError::File {
        path: p.display().to_string(),
        message,
    };
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    let mut next = Some(table.to_path_buf());
    while let Some(p) = next.take() {
        if files.len() > 16 || files.iter().any(|(q, _)| q == &p) {
            return Err(fail(table, "its bases form a loop".into()));
        }
        let text = std::fs::read_to_string(&p).map_err(|e| fail(&p, e.to_string()))?;
        // A table that carries its base (a fitted one) ends the chain: its
        // text holds the rest.
        next = base_of(&text)
            .filter(|_| !base_is_carried(&text))
            .map(|b| p.parent().unwrap_or(Path::new(".")).join(b));
        files.push((p, text));
    }
    let mut names: Vec<String> = Vec::new();
    for (p, _) in &files {
        let stem = p
            .file_stem()
            .map_or("table".into(), |s| s.to_string_lossy().into_owned());
        let mut name = format!("{stem}.toml");
        let mut n = 1;
        while names.contains(&name) {
            n += 1;
            name = format!("{stem}-{n}.toml");
        }
        names.push(name);
    }
    files
        .iter()
        .enumerate()
        .map(|(i, (p, text))| {
            let text = match names.get(i + 1) {
                Some(base) => rebase(text, base).map_err(|e| fail(p, e.to_string()))?,
                None => text.clone(),
            };
            Ok((names[i].clone(), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_carrying_its_chain_loads_alone() {
        let src = tempfile::tempdir().unwrap();
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration");
        std::fs::copy(repo.join("jop-wcet.toml"), src.path().join("jop-wcet.toml")).unwrap();
        std::fs::create_dir(src.path().join("sub")).unwrap();
        let derived = src.path().join("sub/jop-wcet.toml");
        std::fs::write(
            &derived,
            "[model]\nname = \"d\"\ndescription = \"d\"\nbase = \"../jop-wcet.toml\"\n\n[params]\nr = 3\n",
        )
        .unwrap();
        let tables = chain(&derived).unwrap();
        let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["jop-wcet.toml", "jop-wcet-2.toml"]);
        let mut m = DerivedModel::new(&[], "fitted", "f", &tables[0].0);
        m.param("w", 7.0, None);
        m.carry(&["the tables it derives from".into()], &tables);
        let text = m.into_toml();
        drop(src);
        let out = tempfile::tempdir().unwrap();
        let file = out.path().join("fitted.toml");
        std::fs::write(&file, &text).unwrap();
        let m = crate::TimingModel::load(&file).unwrap();
        assert_eq!((m.params()["r"], m.params()["w"]), (3.0, 7.0));
        // An error inside a carried table names it.
        let broken = text.replace("r = 3", "r = \\\"x\\\"");
        assert_ne!(broken, text);
        std::fs::write(&file, &broken).unwrap();
        let e = crate::TimingModel::load(&file).unwrap_err().to_string();
        assert!(e.contains("[bases.\"jop-wcet.toml\"]"), "{e}");
        // A fitted table fitted again: its chain ends at it, and the new one loads alone too.
        std::fs::write(&file, &text).unwrap();
        let again = chain(&file).unwrap();
        assert_eq!(again.len(), 1, "{again:?}");
        let mut m = DerivedModel::new(&[], "twice", "f", &again[0].0);
        m.param("w", 9.0, None);
        m.carry(&[], &again);
        let twice = out.path().join("sub");
        std::fs::create_dir(&twice).unwrap();
        std::fs::write(twice.join("twice.toml"), m.into_toml()).unwrap();
        let m = crate::TimingModel::load(&twice.join("twice.toml")).unwrap();
        assert_eq!((m.params()["r"], m.params()["w"]), (3.0, 9.0));
        // A carried table whose own base is carried nowhere (nor on disk) is an error naming it.
        let selfish = "[model]\nname = \"s\"\nbase = \"s.toml\"\n\n[bases]\n\"s.toml\" = '''\n[model]\nname = \"s\"\nbase = \"s.toml\"\n\n[bases]\n\"s.toml\" = \"[model]\\nname = \\\"s\\\"\\nbase = \\\"s.toml\\\"\\n\"\n'''\n";
        std::fs::write(&file, selfish).unwrap();
        let e = crate::TimingModel::load(&file).unwrap_err().to_string();
        assert!(e.contains("[bases.\"s.toml\"]") && e.contains("base model"), "{e}");
    }

    #[test]
    fn a_derived_table_is_written_with_its_comments_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../calibration/jop-wcet.toml");
        let mut m = DerivedModel::new(
            &["fitted".to_string()],
            "t",
            "a \"quoted\" description",
            &base.display().to_string(),
        );
        m.param("r", 3.0, Some("was 1"));
        m.param_comment("w not fitted; kept at 2");
        m.param("impl_new", 55.05861, Some("was 0"));
        m.param_comment("impl_athrow not fitted");
        m.methods(&["whole calls".to_string()]);
        m.method("a.B.c(\"x\\y\")V", crate::model::HOST_CODE, Some("lib0 not fitted"));
        let text = m.into_toml();
        let expected_start = format!(
            "# fitted\n\n[model]\nname = \"t\"\ndescription = 'a \"quoted\" description'\nbase = \"{}\"\n\n[params]\nr = 3    # was 1\n# w not fitted; kept at 2\nimpl_new = 55.0586    # was 0\n# impl_athrow not fitted\n\n# whole calls\n[methods]\n",
            base.display()
        );
        assert!(text.starts_with(&expected_start), "{text}");
        let file = dir.path().join("t.toml");
        std::fs::write(&file, &text).unwrap();
        let loaded = crate::TimingModel::load(&file).unwrap();
        assert_eq!(loaded.params()["r"], 3.0);
        assert_eq!(loaded.params()["impl_new"], 55.0586);
        assert_eq!(loaded.description, "a \"quoted\" description");
        // Re-based, the rest stays byte for byte.
        let moved = rebase(&text, "../elsewhere/x.toml").unwrap();
        assert_eq!(base_of(&moved).as_deref(), Some("../elsewhere/x.toml"));
        assert_eq!(moved.replace("../elsewhere/x.toml", &base.display().to_string()), text);
    }

    #[test]
    fn numbers_are_whole_or_four_decimals() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(-2.0), "-2");
        assert_eq!(number(26.02734), "26.0273");
        assert_eq!(number(0.5), "0.5000");
    }
}
