//! Micro-benchmarks for calibration, generated as Java workloads: each one
//! repeats one bytecode group N times (`<Group>1`) or 2N times (`<Group>2`)
//! in otherwise identical loops, so the difference of the two isolates that
//! group's cost (the differential method of instruction-timing studies).
//! They use jop-firmware's harness and join the calibration set.

use crate::error::WriteError;
use crate::suite::{write_generated, WorkloadSpec};
use std::path::Path;

/// A bytecode group: its name, declarations before the loop, and one repetition.
struct Group {
    name: &'static str,
    what: &'static str,
    decl: &'static str,
    body: &'static str,
    result: &'static str,
}

const GROUPS: &[Group] = &[
    Group { name: "Idiv", what: "idiv", decl: "int a = 1 << 30; int d = 3 + iterations;", body: "a = a / d + 1000000;", result: "a" },
    Group { name: "Irem", what: "irem", decl: "int a = 1 << 30; int d = 7 + iterations;", body: "a = a % d + 1000000;", result: "a" },
    Group { name: "Ldiv", what: "ldiv", decl: "long x = 1L << 50; long y = 5 + iterations;", body: "x = x / y + 1000000000L;", result: "(int) x" },
    Group { name: "Lrem", what: "lrem", decl: "long x = 1L << 50; long y = 9 + iterations;", body: "x = x % y + 1000000000L;", result: "(int) x" },
    Group { name: "Lmul", what: "lmul", decl: "long x = 3; long y = 7 + iterations;", body: "x = x * y;", result: "(int) x" },
    Group { name: "Lshift", what: "lshl, lushr", decl: "long x = 12345; int s = 3 + (iterations & 1);", body: "x = (x << s) >>> 2;", result: "(int) x" },
    Group { name: "Llogic", what: "lxor, land, lor", decl: "long x = 12345; long y = 0x5555L * iterations;", body: "x = (x ^ y) & (x | y);", result: "(int) x" },
    Group { name: "Lneg", what: "lneg", decl: "long x = 12345 + iterations;", body: "x = -x;", result: "(int) x" },
    Group { name: "Conv", what: "i2b, i2c, i2l", decl: "int a = iterations; long x = 0;", body: "a = (byte) (a + 1); a = (char) (a + 3); x += a;", result: "(int) x" },
    Group { name: "Switch", what: "tableswitch", decl: "int a = iterations; int s = 0;", body: "switch (a & 3) { case 0: s += 1; break; case 1: s += 3; break; case 2: s += 5; break; default: s += 7; } a++;", result: "s" },
    Group { name: "New", what: "new, Object.<init>", decl: "Object o = null; int s = 0;", body: "o = new Object(); s += (o == null) ? 0 : 1;", result: "s" },
    Group { name: "Newarray", what: "newarray", decl: "int[] arr = null; int s = 0;", body: "arr = new int[3]; s += arr.length;", result: "s" },
    Group { name: "Anewarray", what: "anewarray", decl: "Object[] arr = null; int s = 0;", body: "arr = new Object[2]; s += arr.length;", result: "s" },
    Group { name: "Multianewarray", what: "multianewarray", decl: "int[][] m = null; int s = 0;", body: "m = new int[2][2]; s += m.length;", result: "s" },
    // Half the stores fill an empty slot (as appending to a Vector or a
    // Stack does), half replace a reference (as a swap does): JOP's write
    // barrier costs more over a reference. A tree's host profile records
    // which (its bridge reads the slot, docs/notes/jop-tree.md section 26),
    // so the fit separates impl_aastore from the barrier the field stores
    // fit; without the record aastore is priced halfway.
    Group { name: "Aastore", what: "aastore into an empty slot and over a reference", decl: "Object[] arr = new Object[4]; Object o = arr; int s = 0;", body: "arr[s & 3] = o; arr[s & 3] = null; s++;", result: "s" },
    Group { name: "Larray", what: "laload, lastore", decl: "long[] la = new long[4]; la[1] = iterations; int s = 0;", body: "la[(s + 1) & 3] = la[s & 3] + 1; s++;", result: "(int) la[s & 3]" },
    // checkcast and instanceof apart, and the superclass step of their
    // routines (`{self}` is the benchmark's own class: no step; Workload,
    // its superclass: one).
    Group { name: "Instanceof", what: "instanceof of its own class", decl: "Object o = this; int s = 0;", body: "if (o instanceof {self}) { s++; }", result: "s" },
    Group { name: "InstanceofSuper", what: "instanceof of its superclass", decl: "Object o = this; int s = 0;", body: "if (o instanceof Workload) { s++; }", result: "s" },
    Group { name: "Checkcast", what: "checkcast to its own class", decl: "Object o = this; int s = 0;", body: "s += (({self}) o).field;", result: "s" },
    Group { name: "Invoke", what: "invokestatic, ireturn", decl: "int s = iterations;", body: "s = step(s);", result: "s" },
    Group { name: "Field", what: "getfield, putfield", decl: "int s = 0;", body: "field = field + 3; s += field;", result: "s" },
    Group { name: "Iarray", what: "iaload, iastore", decl: "int[] arr = new int[4]; int s = 0;", body: "arr[s & 3] = arr[(s + 1) & 3] + s; s++;", result: "arr[2] + s" },
];

/// The groups only a JOP tree's images run (JOP's runtime routines, its
/// collector, its monitors as its microcode times them).
const TREE_GROUPS: &[&[Group]] = &[
    FLOAT_GROUPS,
    TYPE_CHECK_GROUPS,
    REFERENCE_GROUPS,
    MONITOR_GROUPS,
    SWITCH_GROUPS,
    COLLECTOR_GROUPS,
    EXCEPTION_GROUPS,
    COPY_GROUPS,
];

/// Floating point, which JOP runs in software (Java routines of its
/// runtime): only where a JOP tree's images run.
const FLOAT_GROUPS: &[Group] = &[
    Group {
        name: "Dadd",
        what: "dadd, dsub",
        decl: "double x = 1.5 + iterations; double y = 0.375;",
        body: "x = x + y; x = x - 0.125;",
        result: "(int) x",
    },
    Group {
        name: "Dmul",
        what: "dmul",
        decl: "double x = 1.5 + iterations; double y = 1.0009765625;",
        body: "x = x * y;",
        result: "(int) x",
    },
    Group {
        name: "Ddiv",
        what: "ddiv",
        decl: "double x = 1e9 + iterations; double y = 1.0009765625;",
        body: "x = x / y;",
        result: "(int) x",
    },
    Group {
        name: "Dcmp",
        what: "dcmpl, dcmpg",
        decl: "double x = iterations; double y = 0.5; int s = 0;",
        body: "if (x > y) { s++; } if (x < y) { s--; }",
        result: "s",
    },
    Group {
        name: "Fadd",
        what: "fadd, fsub",
        decl: "float x = 1.5f + iterations; float y = 0.375f;",
        body: "x = x + y; x = x - 0.125f;",
        result: "(int) x",
    },
    Group {
        name: "Fmul",
        what: "fmul",
        decl: "float x = 1.5f + iterations; float y = 1.0009765625f;",
        body: "x = x * y;",
        result: "(int) x",
    },
    Group {
        name: "Fdiv",
        what: "fdiv",
        decl: "float x = 1e9f + iterations; float y = 1.0009765625f;",
        body: "x = x / y;",
        result: "(int) x",
    },
    Group {
        name: "Fcmp",
        what: "fcmpl, fcmpg",
        decl: "float x = iterations; float y = 0.5f; int s = 0;",
        body: "if (x > y) { s++; } if (x < y) { s--; }",
        result: "s",
    },
    Group {
        name: "Fpconv",
        what: "i2d, d2i",
        decl: "int a = iterations; double d = 0;",
        body: "d = a; a = (int) d + 1;",
        result: "a",
    },
];

/// The type checks' other paths in JOP's routine (beside the climb to a
/// superclass the base groups time): a class the object is not (the climb
/// past all three of its classes fails), and an interface (the object's
/// class has an interface table to read). Only where a JOP tree's images run.
const TYPE_CHECK_GROUPS: &[Group] = &[
    Group {
        name: "InstanceofFail",
        what: "instanceof of a class it is not",
        decl: "Object o = this; int s = 0;",
        body: "if (o instanceof Harness) { s++; }",
        result: "s",
    },
    Group {
        name: "InstanceofIface",
        what: "instanceof of an interface its class implements",
        decl: "Object o = new Runnable() { public void run() { } }; int s = 0;",
        body: "if (o instanceof Runnable) { s++; }",
        result: "s",
    },
];

/// Stores of references into a field and a static, which JOP's linker
/// turns into `putfield_ref` and `putstatic_ref`, run by the runtime's Java
/// routines (its write barrier) on the original tree: with the
/// floating-point groups, only where a JOP tree's images run.
const REFERENCE_GROUPS: &[Group] = &[
    Group {
        name: "Putref",
        what: "putfield of a reference",
        decl: "Object o = this; int s = 0;",
        body: "ref = o; s++;",
        result: "s + (ref == null ? 0 : 1)",
    },
    Group {
        name: "PutrefClear",
        what: "putfield of a reference into an empty field and of null over one",
        decl: "Object o = this; int s = 0;",
        body: "ref = o; ref = null; s++;",
        result: "s + (ref == null ? 0 : 1)",
    },
    Group {
        name: "Putsref",
        what: "putstatic of a reference",
        decl: "Object o = this; int s = 0;",
        body: "sref = o; s++;",
        result: "s + (sref == null ? 0 : 1)",
    },
];

/// `lookupswitch`, whose Java routine on JOP compares the key with one case
/// after another: a key its first case matches, and one none does (every
/// case compared), so that the fit tells the routine's fixed cost from its
/// cost per case. Only where a JOP tree's images run, with the
/// floating-point groups.
const SWITCH_GROUPS: &[Group] = &[
    Group {
        name: "LookupNear",
        what: "lookupswitch, the first case",
        decl: "int k = iterations - iterations + 3; int s = 0;",
        body: "switch (k) { case 3: s += 1; break; case 300: s += 2; break; case 3000: s += 3; break; case 30000: s += 5; break; case 300000: s += 6; break; default: s += 7; }",
        result: "s",
    },
    Group {
        name: "LookupLast",
        what: "lookupswitch, the last case",
        decl: "int k = iterations - iterations + 300000; int s = 0;",
        body: "switch (k) { case 3: s += 1; break; case 300: s += 2; break; case 3000: s += 3; break; case 30000: s += 5; break; case 300000: s += 6; break; default: s += 7; }",
        result: "s",
    },
    Group {
        name: "LookupFar",
        what: "lookupswitch, no case (every one compared)",
        decl: "int k = iterations - iterations + 4; int s = 0;",
        body: "switch (k) { case 3: s += 1; break; case 300: s += 2; break; case 3000: s += 3; break; case 30000: s += 5; break; case 300000: s += 6; break; default: s += 7; }",
        result: "s",
    },
];

/// Allocation enough to make JOP's collector run in the timed region:
/// arrays that fill the heap's words (a collection each few hundred arrays)
/// and objects without fields that use up its handles (a collection each
/// some thousands), so that the fit tells a collection's own cost from its
/// cost per handle in use (`jopcal_timing::collector`). Only where a JOP
/// tree's images run, with the floating-point groups.
const COLLECTOR_GROUPS: &[Group] = &[
    Group {
        name: "Collect",
        what: "newarray of 120 ints, the collector",
        decl: "int[] arr = null; int s = 0;",
        body: "arr = new int[120]; s += arr.length;",
        result: "s",
    },
    Group {
        name: "CollectObjects",
        what: "new of 8 objects without fields, the collector",
        decl: "Object o = null; int s = 0;",
        body: "o = new Object(); o = new Object(); o = new Object(); o = new Object(); o = new Object(); o = new Object(); o = new Object(); o = new Object(); s += (o == null) ? 0 : 1;",
        result: "s",
    },
];

/// Exceptions, which JOP's `athrow` routine delivers by walking the stack:
/// one caught where it is thrown, one thrown by a callee (a frame left),
/// and one made anew each time (its constructors), each in a method whose
/// exception table has that one handler (the routine searches the table
/// in order: a loop of repeated try blocks would cost more per throw the
/// later its block). Only where a JOP tree's
/// images run, with the floating-point groups.
const EXCEPTION_GROUPS: &[Group] = &[
    Group {
        name: "Throw",
        what: "athrow caught in the same method",
        decl: "RuntimeException x = new RuntimeException(); int s = 0;",
        body: "s = caught(s, x);",
        result: "s",
    },
    Group {
        name: "ThrowCall",
        what: "athrow in a callee, caught in its caller",
        decl: "RuntimeException x = new RuntimeException(); int s = 0;",
        body: "s = caughtFromCall(s, x);",
        result: "s",
    },
    Group {
        name: "ThrowNew",
        what: "new RuntimeException, athrow, caught",
        decl: "int s = 0;",
        body: "s = caughtNew(s);",
        result: "s",
    },
    // The routine's search of the table, entry by entry: three entries
    // before the one that covers the throw, and three that cover it, two
    // naming a class the exception is not (each a failed instanceof).
    Group {
        name: "ThrowScan",
        what: "athrow caught by a method's fourth handler, the first three not covering it",
        decl: "RuntimeException x = new RuntimeException(); int s = 0;",
        body: "s = caughtLate(s, x);",
        result: "s",
    },
    Group {
        name: "ThrowTest",
        what: "athrow caught by the third of three handlers that cover it",
        decl: "RuntimeException x = new RuntimeException(); int s = 0;",
        body: "s = caughtTested(s, x);",
        result: "s",
    },
];

/// `System.arraycopy`, a loop of JOP's library over the elements (the host
/// profile counts them): copies of two lengths tell the call's cost from
/// the element's. Only where a JOP tree's images run.
const COPY_GROUPS: &[Group] = &[
    Group {
        name: "CopyShort",
        what: "System.arraycopy of 4 ints",
        decl: "int[] from = new int[40]; int[] to = new int[40]; int s = 0;",
        body: "System.arraycopy(from, s & 3, to, 1, 4); s++;",
        result: "s + to[1]",
    },
    Group {
        name: "CopyLong",
        what: "System.arraycopy of 32 ints",
        decl: "int[] from = new int[40]; int[] to = new int[40]; int s = 0;",
        body: "System.arraycopy(from, s & 3, to, 1, 32); s++;",
        result: "s + to[1]",
    },
];

/// Monitors (`synchronized`), whose cost on the processor is its
/// microcode's and its lock device's (JopSim's is another): a block, nested
/// blocks, a synchronized method, and a synchronized method that calls
/// itself (the lock count nests in the microcode). Only where a JOP tree's
/// images run, with the floating-point groups. (A monitor contended by a
/// second thread needs a second processor core: on one, JOP's
/// `Thread.start()` finds no CPU to run it on.)
const MONITOR_GROUPS: &[Group] = &[
    Group {
        name: "Sync",
        what: "monitorenter, monitorexit",
        decl: "int s = 0;",
        body: "synchronized (this) { s++; }",
        result: "s",
    },
    Group {
        name: "SyncNested",
        what: "nested monitorenter, monitorexit",
        decl: "int s = 0;",
        body: "synchronized (this) { synchronized (lock) { s++; } }",
        result: "s",
    },
    Group {
        name: "SyncMethod",
        what: "a synchronized method's call",
        decl: "int s = iterations;",
        body: "s = syncStep(s);",
        result: "s",
    },
    Group {
        name: "SyncRecursive",
        what: "a synchronized method calling itself",
        decl: "int s = iterations;",
        body: "s = syncDepth(3, s);",
        result: "s",
    },
];

/// Repetitions of the body per loop trip in the `1` variant.
pub const REPEAT: usize = 8;
/// Loop trips per run.
pub const ITERATIONS: u32 = 200;
/// Loop trips per run of a floating-point group: JOP's software double
/// division takes about 245,000 cycles, and 200 trips of 16 made Ddiv2 a
/// 1.6 G-cycle run (its check run included), 27 minutes of the simulated RTL.
pub const FLOAT_ITERATIONS: u32 = 20;

/// The loop trips of group `g`'s runs.
fn trips(g: &Group) -> u32 {
    if FLOAT_GROUPS.iter().any(|f| f.name == g.name) {
        FLOAT_ITERATIONS
    } else {
        ITERATIONS
    }
}

fn source(g: &Group, times: usize) -> String {
    let trips = trips(g);
    let class = format!("{}{}", g.name, times / REPEAT);
    let body = format!("            {}\n", g.body.replace("{self}", &class)).repeat(times);
    format!(
        r#"package jopcal.micro;

import jopcal.harness.Harness;
import jopcal.harness.Workload;

/** Generated by `jopcal calibrate --generate-micro`: {what}, {times} times per trip. */
public final class {class} extends Workload {{
    private int field;
    private Object ref;
    private static Object sref;

    public static void main(String[] args) {{
        Harness.runOne(new {class}());
    }}

    static int step(int s) {{
        return s + 1;
    }}

    // The exception groups' bodies: one try block in a method of its own,
    // so that JOP's athrow routine finds each handler as the first entry of
    // the method's exception table (it searches the table in order).
    static void raise(RuntimeException x) {{
        throw x;
    }}

    static int caught(int s, RuntimeException x) {{
        try {{
            if (s >= 0) {{
                throw x;
            }}
        }} catch (RuntimeException e) {{
            s++;
        }}
        return s;
    }}

    static int caughtFromCall(int s, RuntimeException x) {{
        try {{
            raise(x);
        }} catch (RuntimeException e) {{
            s++;
        }}
        return s;
    }}

    static int caughtLate(int s, RuntimeException x) {{
        try {{
            s += 1;
        }} catch (IllegalStateException e) {{
            s--;
        }}
        try {{
            s += 2;
        }} catch (IllegalArgumentException e) {{
            s--;
        }}
        try {{
            s -= 3;
        }} catch (ArithmeticException e) {{
            s--;
        }}
        try {{
            if (s >= 0) {{
                throw x;
            }}
        }} catch (RuntimeException e) {{
            s++;
        }}
        return s;
    }}

    static int caughtTested(int s, RuntimeException x) {{
        try {{
            if (s >= 0) {{
                throw x;
            }}
        }} catch (IllegalStateException e) {{
            s--;
        }} catch (IllegalArgumentException e) {{
            s -= 2;
        }} catch (RuntimeException e) {{
            s++;
        }}
        return s;
    }}

    static int caughtNew(int s) {{
        try {{
            if (s >= 0) {{
                throw new IllegalStateException();
            }}
        }} catch (IllegalStateException e) {{
            s++;
        }}
        return s;
    }}

    private final Object lock = new Object();

    synchronized int syncStep(int s) {{
        return s + 1;
    }}

    synchronized int syncDepth(int d, int s) {{
        return d == 0 ? s + 1 : syncDepth(d - 1, s);
    }}

    public String name() {{
        return "{class}";
    }}

    public int iterations() {{
        return {trips};
    }}

    /** The check value: the same loop, run once before the measured run. */
    private int check = -1;

    public void setup() {{
        field = 0;
        check = work({trips});
        field = 0;
    }}

    public int run(int iterations) {{
        return work(iterations);
    }}

    private int work(int iterations) {{
        {decl}
        for (int it = 0; it < iterations; it++) {{
{body}        }}
        return {result};
    }}

    public int expected() {{
        return check;
    }}
}}
"#,
        what = g.what,
        decl = g.decl,
        result = g.result,
    )
}

/// Writes a workload directory at `dir`: `suite.toml`, the generated sources,
/// and a copy of the harness and host stand-ins from `firmware`; with
/// `floating_point` (where a JOP tree's images run), the floating-point,
/// reference-store, monitor, lookupswitch, collector and exception groups too. Returns the workload names.
pub fn generate(
    dir: &Path,
    firmware: &Path,
    compiler: &[String],
    floating_point: bool,
) -> Result<Vec<String>, WriteError> {
    let mut names = Vec::new();
    let mut workloads = Vec::new();
    let mut sources = Vec::new();
    let tree: &[&[Group]] = if floating_point { TREE_GROUPS } else { &[] };
    for g in GROUPS.iter().chain(tree.iter().copied().flatten()) {
        for times in [REPEAT, 2 * REPEAT] {
            let class = format!("{}{}", g.name, times / REPEAT);
            sources.push((format!("jopcal/micro/{class}.java"), source(g, times)));
            workloads.push(WorkloadSpec {
                name: class.clone(),
                main: format!("jopcal.micro.{class}"),
                kind: format!("micro: {} x{times}", g.what),
            });
            names.push(class);
        }
    }
    write_generated(
        dir,
        firmware,
        "Calibration micro-benchmarks generated by `jopcal calibrate --generate-micro`.\n<Group>1 repeats the group N times per loop trip, <Group>2 2N times.",
        &crate::suite::CompileWith {
            compiler: compiler.to_vec(),
            ..Default::default()
        },
        &workloads,
        &sources,
    )?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn firmware() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../jop-firmware")
    }

    #[test]
    fn tree_groups_are_written_only_when_asked_for() {
        let tmp = tempfile::tempdir().unwrap();
        let plain = generate(&tmp.path().join("plain"), &firmware(), &[], false).unwrap();
        assert_eq!(plain.len(), 2 * GROUPS.len());
        assert!(
            !plain.iter().any(|n| FLOAT_GROUPS.iter().any(|g| n.starts_with(g.name))),
            "{plain:?}"
        );
        let with = generate(&tmp.path().join("fp"), &firmware(), &[], true).unwrap();
        assert_eq!(
            with.len(),
            2 * (GROUPS.len() + TREE_GROUPS.iter().map(|g| g.len()).sum::<usize>())
        );
        assert!(with.iter().any(|n| n == "CollectObjects2"), "{with:?}");
        assert!(!plain.iter().any(|n| n.starts_with("Collect")), "{plain:?}");
        for name in [
            "Dadd1",
            "Dadd2",
            "Dmul1",
            "Ddiv2",
            "Dcmp1",
            "Fadd2",
            "Fmul1",
            "Putref1",
            "Putsref2",
            "Sync1",
            "SyncNested2",
            "SyncMethod1",
            "SyncRecursive2",
        ] {
            assert!(with.iter().any(|n| n == name), "{name}: {with:?}");
        }
        let dmul2 = std::fs::read_to_string(tmp.path().join("fp/src/jopcal/micro/Dmul2.java")).unwrap();
        assert_eq!(dmul2.matches("x = x * y;").count(), 2 * REPEAT);
    }
}
