//! The built-in suite's measured regions call no library code: everything
//! reachable from each workload's run() is the suite's own code, plus
//! Object's constructor. Checked statically on the class files javac made,
//! following every invoke (all implementations of a virtual/interface call)
//! and every field access.

use jopcal_classfile::{decode, parse_class, ClassFile, Operands};
use jopcal_workloads::{build_suite, Jdk, Suite};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

fn classes(dir: &Path, out: &mut HashMap<String, ClassFile>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            classes(&p, out);
        } else if p.extension().is_some_and(|x| x == "class") {
            let c = parse_class(&std::fs::read(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            out.insert(c.this_class.clone(), c);
        }
    }
}

fn own(class: &str) -> bool {
    class.starts_with("jopcal/")
}

#[test]
fn measured_regions_reach_only_the_suites_own_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../jop-firmware");
    let suite = Suite::load(&root).unwrap();
    let jdk = Jdk::detect().expect("a JDK (scripts/setup installs one)");
    let scratch = tempfile::tempdir().unwrap();
    let cache: PathBuf = scratch.path().to_path_buf();
    let built = build_suite(&root, &jdk, &cache).unwrap();
    let mut all = HashMap::new();
    classes(&built.classes, &mut all);

    let mut violations = Vec::new();
    for w in &suite.workloads {
        let start_class = w.main.replace('.', "/");
        let mut seen: BTreeSet<(String, String, String)> = BTreeSet::new();
        let mut todo = vec![(start_class.clone(), "run".to_string(), "(I)I".to_string())];
        while let Some((class, name, desc)) = todo.pop() {
            if !seen.insert((class.clone(), name.clone(), desc.clone())) {
                continue;
            }
            let Some(cf) = all.get(&class) else { continue };
            let Some(m) = cf.method(&name, &desc) else { continue };
            let Some(code) = &m.code else { continue };
            for ins in decode(&code.bytecode).unwrap() {
                let cp = match ins.operands {
                    Operands::Cp(cp) | Operands::InvokeInterface { cp, .. } => cp,
                    Operands::InvokeDynamic { .. } => {
                        violations.push(format!("{}: {class}.{name} uses invokedynamic", w.name));
                        continue;
                    }
                    _ => continue,
                };
                let Some((target, tname, tdesc)) = cf.member_ref(cp) else {
                    continue;
                };
                let is_invoke = matches!(ins.opcode, 0xb6..=0xb9);
                if !own(target) {
                    if is_invoke && target == "java/lang/Object" && tname == "<init>" {
                        continue;
                    }
                    violations.push(format!("{}: {class}.{name}{desc} uses {target}.{tname}{tdesc}", w.name));
                    continue;
                }
                if is_invoke {
                    // Every suite class that declares the method may be the receiver.
                    for (cn, c) in &all {
                        if c.method(tname, tdesc).is_some() {
                            todo.push((cn.clone(), tname.to_string(), tdesc.to_string()));
                        }
                    }
                }
            }
        }
        let start = all
            .get(&start_class)
            .and_then(|c| c.method("run", "(I)I"))
            .and_then(|m| m.code.as_ref());
        assert!(start.is_some(), "{}: no run(I)I with code in {start_class}", w.name);
    }
    assert!(
        violations.is_empty(),
        "library use inside measured regions:\n{}",
        violations.join("\n")
    );
}
