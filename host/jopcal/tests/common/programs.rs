//! Generated Java programs for the differential runs of the processor
//! against the virtual board (`jopcal diff`): each is a seeded mix of the
//! things where a model of JOP can part from the processor: monitors
//! (nested, in synchronized methods, recursive), exceptions thrown and
//! caught across frames (the program's own and the processor's: array
//! bounds, null, division), allocation up to and through garbage
//! collection, long and floating-point arithmetic (software on JOP; long
//! shifts and compares take data-dependent microcode paths), switches,
//! interface and virtual calls, string building and printing (the UART),
//! and recursion near or past the processor's stack limit. Every program
//! prints checksums along the way, so two runs that compute differently
//! print differently. Java 1.5, for the JOP tree's compiler and linker.

use std::fmt::Write as _;

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// An int literal of any sign and size, sometimes small.
    pub fn int(&mut self) -> i32 {
        match self.below(4) {
            0 => self.below(10) as i32 - 5,
            1 => self.below(1000) as i32,
            _ => self.next() as i32,
        }
    }

    pub fn long(&mut self) -> i64 {
        match self.below(4) {
            0 => self.below(10) as i64 - 5,
            1 => -(self.below(1 << 40) as i64),
            _ => self.next() as i64,
        }
    }

    pub fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[self.below(of.len() as u64) as usize]
    }
}

/// The kinds of block a program is made of.
const KINDS: usize = 11;

/// The source of program `class` (in package `jopcalgen`) from `seed`;
/// with `overflow`, it ends in a recursion deeper than the stack holds.
pub fn program(class: &str, seed: u64, overflow: bool) -> String {
    let mut r = Rng::new(seed);
    let mut blocks = String::new();
    let mut calls = String::new();
    let n = 4 + r.below(5);
    for k in 0..n {
        let kind = r.below(KINDS as u64) as usize;
        let _ = writeln!(blocks, "{}", block(&mut r, k as usize, kind));
        let _ = writeln!(
            calls,
            "        acc = b{k}(acc);\n        System.out.println(\"b{k} \" + acc);"
        );
    }
    let depth = if overflow { 100_000 } else { 5 + r.below(12) };
    let locals = r.below(6);
    let extra_locals: String = (0..locals).map(|i| format!("        int v{i} = d + {i};\n")).collect();
    let local_sum: String = (0..locals).map(|i| format!(" + v{i}")).collect();
    format!(
        r#"package jopcalgen;

/** Generated for `jopcal diff` (seed {seed}). */
public class {class} {{
    static int sink;
    static int[] table = new int[16];
    static Object sharedLock = new Object();

    interface Op {{
        int apply(int x);
    }}

    static class Add implements Op {{
        int k;
        Add(int k) {{ this.k = k; }}
        public int apply(int x) {{ return x + k; }}
    }}

    static class Mul implements Op {{
        int k;
        Mul(int k) {{ this.k = k; }}
        public int apply(int x) {{ return x * k + 1; }}
    }}

    static class Base {{
        int v;
        int get() {{ return v; }}
    }}

    static class Derived extends Base {{
        int get() {{ return v * 3 + 1; }}
    }}

    static class Fail extends RuntimeException {{
        int code;
        Fail(int code) {{ this.code = code; }}
    }}

    int count;

    synchronized int syncAdd(int x) {{
        count += x;
        return count;
    }}

    synchronized int syncDeep(int d, int x) {{
        if (d == 0) return x + count;
        return syncDeep(d - 1, x + d);
    }}

    static int thrower(int d, int x) {{
        if (d == 0) throw new Fail(x);
        return thrower(d - 1, x + d);
    }}

    static int deep(int d) {{
{extra_locals}        sink += d;
        if (d == 0) return 1;
        return deep(d - 1) + 1{local_sum};
    }}

{blocks}
    public static void main(String[] args) {{
        int acc = {start};
{calls}        System.out.println("deep " + deep({depth}));
        System.out.println("{class} " + acc + " " + sink);
    }}
}}
"#,
        start = r.int(),
    )
}

/// Block `k` of kind `kind`: `static int b<k>(int acc)`.
fn block(r: &mut Rng, k: usize, kind: usize) -> String {
    let trips = 3 + r.below(20);
    let body = match kind {
        0 => {
            // int arithmetic, with division and remainder by values that may be negative
            let ops = ["+", "-", "*", "/", "%", "<<", ">>", ">>>", "&", "|", "^"];
            let mut e = String::from("x");
            for _ in 0..4 {
                let op = r.pick(&ops);
                let c = match op {
                    "/" | "%" => {
                        let v = r.int();
                        if v == 0 {
                            7
                        } else {
                            v
                        }
                    }
                    "<<" | ">>" | ">>>" => r.below(40) as i32,
                    _ => r.int(),
                };
                e = format!("({e} {op} ({c}))");
            }
            format!("int x = acc;\n        for (int i = 0; i < {trips}; i++) {{ x = {e} + i; }}\n        return x;")
        }
        1 => {
            // long arithmetic: multiply and divide (Java routines), shifts by any count, compares
            let (a, b) = (r.long(), r.long());
            let s = r.below(70);
            let d = r.long().rem_euclid(1 << 20) + 1;
            format!(
                "long x = {a}L + acc; long y = {b}L;\n        int c = 0;\n        for (int i = 0; i < {trips}; i++) {{\n            x = x * 31 + (y >>> ((i + {s}) & 63)) - (x << (i & 63)) + (y >> ({s} + i));\n            y = y / {d}L + x % {d}L;\n            if (x < y) c++; if (x == y) c += 2; if (x > 0) c += 3;\n        }}\n        return (int) (x ^ (x >>> 32)) + c;"
            )
        }
        2 => {
            // floating point: software on JOP
            let (a, b) = (r.below(1000) as f64 / 7.0, r.below(500) as f64 / 3.0 + 0.5);
            format!(
                "double x = {a} + acc % 100; double y = {b};\n        float f = (float) x;\n        for (int i = 0; i < {}; i++) {{\n            x = x * 1.5 - y / (i + 1) + i; f = f * 0.75f + i;\n            if (x > 1e6) x = x / 1000;\n        }}\n        return (int) x + (int) f + (x < y ? 1 : 0);",
                1 + trips / 4
            )
        }
        3 => {
            // switches: table and lookup
            let keys: Vec<i32> = (0..5).map(|_| r.int() % 1000).collect();
            let mut look = String::new();
            for (i, key) in keys.iter().enumerate() {
                if keys[..i].contains(key) {
                    continue;
                }
                let _ = write!(look, " case {key}: s += {}; break;", i * 7 + 1);
            }
            format!(
                "int s = acc;\n        for (int i = 0; i < {trips}; i++) {{\n            switch ((s + i) & 7) {{ case 0: s += 1; break; case 1: s -= 3; break; case 2: s ^= 5; break; case 5: s += i; break; default: s += 2; }}\n            switch ((s + i) % 1000) {{{look} default: s++; }}\n        }}\n        return s;"
            )
        }
        4 => {
            // interface and virtual calls
            let (a, m) = (r.int() % 100, r.int() % 10);
            format!(
                "Op[] ops = new Op[] {{ new Add({a}), new Mul({m}), new Add(1) }};\n        Base[] bs = new Base[] {{ new Base(), new Derived() }};\n        int x = acc;\n        for (int i = 0; i < {trips}; i++) {{\n            x = ops[i % 3].apply(x);\n            bs[i & 1].v = x & 255;\n            x += bs[(i + 1) & 1].get();\n        }}\n        return x;"
            )
        }
        5 => {
            // monitors: blocks, nested, synchronized methods, recursive
            let d = r.below(4);
            format!(
                "{0} o = new {0}();\n        int x = acc;\n        for (int i = 0; i < {trips}; i++) {{\n            synchronized (o) {{ x += o.syncAdd(i); }}\n            synchronized (sharedLock) {{ synchronized (o) {{ synchronized (sharedLock) {{ x ^= i; }} }} }}\n            x += o.syncDeep({d}, i);\n        }}\n        return x;",
                "__CLASS__"
            )
        }
        6 => {
            // exceptions: the program's own across frames, and the processor's
            let d = r.below(6);
            format!(
                "int x = acc;\n        for (int i = 0; i < {trips}; i++) {{\n            try {{ x += thrower({d} + (i & 3), i); }} catch (Fail f) {{ x += f.code; }}\n            try {{ int[] a = new int[3]; a[i % 5] = i; x += a[i % 3]; }} catch (Exception e) {{ x += 7; }}\n            try {{ x += 1000 / (i & 1); }} catch (ArithmeticException e) {{ x -= 1; }} catch (Exception e) {{ x -= 2; }}\n            try {{ int[] b = new int[2]; x += b[i % 4]; b[(i & 1) - 1] = x; }} catch (ArrayIndexOutOfBoundsException e) {{ x += 3; }}\n            Fail n = (i & 1) == 0 ? null : new Fail(i);\n            int[] z = (i & 2) == 0 ? null : new int[i & 7];\n            try {{ x += n.code; }} catch (NullPointerException e) {{ x += 5; }}\n            try {{ n.code = x; }} catch (NullPointerException e) {{ x += 9; }}\n            try {{ x += z.length; }} catch (NullPointerException e) {{ x += 11; }}\n            try {{ x += z[0]; }} catch (NullPointerException e) {{ x += 13; }} catch (ArrayIndexOutOfBoundsException e) {{ x += 15; }}\n        }}\n        return x;"
            )
        }
        7 => {
            // allocation through garbage collection
            let size = 50 + r.below(300);
            let rounds = 200 + r.below(2000);
            format!(
                "int x = acc;\n        int[][] keep = new int[8][];\n        for (int i = 0; i < {rounds}; i++) {{\n            int[] a = new int[{size}];\n            a[i % {size}] = i;\n            keep[i & 7] = a;\n            x += a.length + (keep[(i + 3) & 7] == null ? 0 : 1);\n        }}\n        return x;"
            )
        }
        8 => {
            // strings and printing
            format!(
                "StringBuffer sb = new StringBuffer();\n        for (int i = 0; i < {}; i++) {{ sb.append(i); sb.append(','); }}\n        String s = sb.toString();\n        System.out.println(s);\n        return acc + s.length();",
                1 + trips / 3
            )
        }
        9 => {
            // arrays of every kind
            format!(
                "byte[] b = new byte[9]; char[] c = new char[9]; short[] s = new short[9]; long[] l = new long[9];\n        int x = acc;\n        for (int i = 0; i < {trips}; i++) {{\n            b[i % 9] = (byte) (x + i); c[i % 9] = (char) x; s[i % 9] = (short) (x >> 3); l[i % 9] = x * 1000003L;\n            x += b[(i + 4) % 9] + c[(i + 2) % 9] + s[(i + 1) % 9] + (int) l[(i + 5) % 9];\n            table[i & 15] += x;\n        }}\n        return x + table[3];"
            )
        }
        _ => {
            // recursion within the stack
            format!("return acc + deep({});", 2 + r.below(10))
        }
    };
    format!("    static int b{k}(int acc) {{\n        {body}\n    }}\n")
}

/// The parameter of a case on the tree's system device, a hardware object,
/// and the argument that gets it.
const SYS_DEVICE: &str = "com.jopdesign.io.SysDevice s";
const THE_SYS_DEVICE: &str = "com.jopdesign.io.IOFactory.getFactory().getSysDevice()";

/// Programs that each meet one case of the processor's memory interface in
/// one bytecode: an exception of its own (a null reference, an array index
/// below 0 or past the end), caught where it is raised, or a field of a
/// hardware object: `(class, the bytecode, source)` (docs/notes/jop-tree.md,
/// section 13).
pub fn memory_interface_cases() -> Vec<(String, &'static str, String)> {
    let cases: [(&str, &str, &str, &str, &str); 21] = [
        ("GetfieldNull", "getfield", "X e", "return e.f;", "null"),
        (
            "GetfieldRefNull",
            "getfield_ref",
            "X e",
            "return e.r == null ? 0 : 9;",
            "null",
        ),
        ("PutfieldNull", "putfield", "X e", "e.f = 3; return 0;", "null"),
        ("GetlongNull", "getfield_long", "X e", "return (int) e.g;", "null"),
        ("PutlongNull", "putfield_long", "X e", "e.g = 5L; return 0;", "null"),
        ("PutrefNull", "putfield_ref", "X e", "e.r = \"x\"; return 0;", "null"),
        ("IaloadNull", "iaload", "int[] a", "return a[1];", "null"),
        ("IaloadNegative", "iaload", "int[] a", "return a[-1];", "new int[3]"),
        ("IaloadHigh", "iaload", "int[] a", "return a[5];", "new int[3]"),
        ("IastoreNull", "iastore", "int[] a", "a[1] = 2; return 0;", "null"),
        (
            "IastoreNegative",
            "iastore",
            "int[] a",
            "a[-2] = 2; return 0;",
            "new int[3]",
        ),
        ("IastoreHigh", "iastore", "int[] a", "a[5] = 2; return 0;", "new int[3]"),
        ("LengthNull", "arraylength", "int[] a", "return a.length;", "null"),
        ("BaloadHigh", "baload", "byte[] a", "return a[7];", "new byte[2]"),
        ("CaloadHigh", "caload", "char[] a", "return a[7];", "new char[2]"),
        (
            "AaloadHigh",
            "aaload",
            "Object[] a",
            "return a[7] == null ? 0 : 1;",
            "new Object[2]",
        ),
        ("LaloadHigh", "laload", "long[] a", "return (int) a[7];", "new long[2]"),
        (
            "LastoreHigh",
            "lastore",
            "long[] a",
            "a[7] = 1L; return 0;",
            "new long[2]",
        ),
        ("InvokeNull", "invokevirtual", "X e", "return e.m();", "null"),
        // A hardware object: its fields are the system device's registers.
        (
            "HwGetfield",
            "getfield",
            SYS_DEVICE,
            "return s.nrCpu + s.cpuId;",
            THE_SYS_DEVICE,
        ),
        (
            "HwPutfield",
            "putfield",
            SYS_DEVICE,
            "s.wd = 1; s.wd = 0; return 0;",
            THE_SYS_DEVICE,
        ),
    ];
    cases
        .iter()
        .map(|(name, op, param, body, arg)| {
            let class = format!("X{name}");
            let param = param.replace("X ", &format!("{class} "));
            let source = format!(
                "package jopcalgen;\n\npublic class {class} {{\n    int f;\n    long g;\n    Object r;\n\n    int m() {{ return f + 1; }}\n\n    static int raise({param}) {{\n        try {{ {body} }} catch (RuntimeException x) {{ return 7; }}\n    }}\n\n    public static void main(String[] args) {{\n        System.out.println(\"raised \" + raise({arg}));\n    }}\n}}\n"
            );
            (class, *op, source)
        })
        .collect()
}

/// [`program`] with the class name put where a block needs it.
pub fn source(class: &str, seed: u64, overflow: bool) -> String {
    program(class, seed, overflow).replace("__CLASS__", class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_program() {
        assert_eq!(source("G1", 7, false), source("G1", 7, false));
        assert_ne!(source("G1", 7, false), source("G1", 8, false));
    }
}
