//! Class files made by the real javac: every method decodes, and the forms
//! that need care (wide, both switches, invokeinterface, invokedynamic, long
//! and double constants) come out as the source dictates.

use jopcal_classfile::{decode, parse_class, Operands};
use proptest::prelude::*;
use std::path::PathBuf;
use std::process::Command;

const SOURCE: &str = r#"
import java.util.function.IntSupplier;
public class Forms {
    interface Op { int apply(int x); }
    static final class Twice implements Op { public int apply(int x) { return 2 * x; } }
    static long big = 1234567890123L;
    static double d = 2.5;
    static int many(int a) {
        int v0=a,v1=a,v2=a,v3=a,v4=a,v5=a,v6=a,v7=a,v8=a,v9=a;
        int[] pad = new int[1];
        long w0=1,w1=2,w2=3,w3=4,w4=5,w5=6,w6=7,w7=8,w8=9,w9=10,w10=11,w11=12,w12=13,w13=14,w14=15,w15=16,w16=17,w17=18,w18=19,w19=20;
        long x0=1,x1=2,x2=3,x3=4,x4=5,x5=6,x6=7,x7=8,x8=9,x9=10,x10=11,x11=12,x12=13,x13=14,x14=15,x15=16,x16=17,x17=18,x18=19,x19=20;
        long y0=1,y1=2,y2=3,y3=4,y4=5,y5=6,y6=7,y7=8,y8=9,y9=10,y10=11,y11=12,y12=13,y13=14,y14=15,y15=16,y16=17,y17=18,y18=19,y19=20;
        long z0=1,z1=2,z2=3,z3=4,z4=5,z5=6,z6=7,z7=8,z8=9,z9=10,z10=11,z11=12,z12=13,z13=14,z14=15,z15=16,z16=17,z17=18,z18=19,z19=20;
        long q0=1,q1=2,q2=3,q3=4,q4=5,q5=6,q6=7,q7=8,q8=9,q9=10,q10=11,q11=12,q12=13,q13=14,q14=15,q15=16,q16=17,q17=18,q18=19,q19=20;
        long r0=1,r1=2,r2=3,r3=4,r4=5,r5=6,r6=7,r7=8,r8=9,r9=10,r10=11,r11=12,r12=13,r13=14,r14=15,r15=16,r16=17,r17=18,r18=19,r19=20;
        long s0=1,s1=2,s2=3,s3=4,s4=5,s5=6,s6=7,s7=8,s8=9,s9=10;
        int last = a;
        last += 1000;
        return last + v9 + (int) (w0 + x19 + y19 + z19 + q19 + r19 + s9);
    }
    static int dense(int k) {
        switch (k) { case 1: return 10; case 2: return 20; case 3: return 30; case 4: return 40; default: return 0; }
    }
    static int sparse(int k) {
        switch (k) { case -100: return 1; case 7: return 2; case 100000: return 3; default: return 4; }
    }
    static int call(Op op) { return op.apply(21); }
    static int lambda() { IntSupplier s = () -> 42; return s.getAsInt(); }
}
"#;

fn compile() -> PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("jopcal-classfile-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("Forms.java");
    std::fs::write(&src, SOURCE).unwrap();
    let out = Command::new("javac")
        .arg("-d")
        .arg(&dir)
        .arg(&src)
        .output()
        .expect("javac must be installed (scripts/setup)");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

fn forms() -> Vec<u8> {
    use std::sync::OnceLock;
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES
        .get_or_init(|| std::fs::read(compile().join("Forms.class")).unwrap())
        .clone()
}

#[test]
fn every_form_decodes_as_the_source_says() {
    let class = parse_class(&forms()).unwrap();
    assert_eq!(class.this_class, "Forms");
    assert_eq!(class.super_class.as_deref(), Some("java/lang/Object"));
    let ops = |name: &str| -> Vec<(String, Operands, bool)> {
        let m = class.methods.iter().find(|m| m.name == name).unwrap();
        decode(&m.code.as_ref().unwrap().bytecode)
            .unwrap()
            .into_iter()
            .map(|i| (i.mnemonic().to_string(), i.operands, i.wide))
            .collect()
    };
    let many = ops("many");
    assert!(
        many.iter()
            .any(|(m, o, w)| m == "iinc" && *w && matches!(o, Operands::Iinc { delta: 1000, .. })),
        "{many:?}"
    );
    assert!(many.iter().any(|(m, _, w)| m == "lstore" && *w), "wide lstore expected");
    assert!(many.iter().any(|(m, _, _)| m == "ldc2_w"), "long constants");
    let dense = ops("dense");
    assert!(dense
        .iter()
        .any(|(m, o, _)| m == "tableswitch" && matches!(o, Operands::TableSwitch { low: 1, high: 4, .. })));
    let sparse = ops("sparse");
    assert!(sparse.iter().any(|(m, o, _)| m == "lookupswitch"
        && matches!(o, Operands::LookupSwitch { pairs, .. } if pairs.iter().map(|p| p.0).collect::<Vec<_>>() == vec![-100, 7, 100000])));
    let call = ops("call");
    assert!(call
        .iter()
        .any(|(m, o, _)| m == "invokeinterface" && matches!(o, Operands::InvokeInterface { count: 2, .. })));
    assert!(ops("lambda").iter().any(|(m, _, _)| m == "invokedynamic"));
    let clinit = ops("<clinit>");
    assert!(clinit.iter().any(|(m, _, _)| m == "ldc2_w"));
    // Member references resolve through the constant pool.
    let m = class.methods.iter().find(|m| m.name == "call").unwrap();
    let ins = decode(&m.code.as_ref().unwrap().bytecode).unwrap();
    let Operands::InvokeInterface { cp, .. } = ins.iter().find(|i| i.mnemonic() == "invokeinterface").unwrap().operands
    else {
        unreachable!()
    };
    assert_eq!(class.member_ref(cp), Some(("Forms$Op", "apply", "(I)I")));
}

#[test]
fn truncation_and_garbage_name_the_byte() {
    let bytes = forms();
    let e = parse_class(&bytes[..bytes.len() - 3]).unwrap_err();
    assert!(e.message.starts_with("truncated"), "{e}");
    assert!(e.offset <= bytes.len());
    let e = parse_class(b"PK\x03\x04 not a class").unwrap_err();
    assert_eq!(e.to_string(), "byte 0: not a class file (magic 0x504b0304)");
    let mut extra = bytes.clone();
    extra.push(0);
    assert_eq!(
        parse_class(&extra).unwrap_err().to_string(),
        format!("byte {}: 1 bytes after the end of the class file", bytes.len())
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn mutated_class_files_never_panic(pos in 0usize..10_000, byte in any::<u8>(), cut in 0usize..10_000) {
        let mut b = forms();
        let p = pos % b.len();
        b[p] = byte;
        b.truncate(cut.max(p + 1).min(b.len()));
        if let Ok(c) = parse_class(&b) {
            for m in c.methods {
                if let Some(code) = m.code {
                    let _ = decode(&code.bytecode);
                }
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(mut b in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse_class(&b);
        if b.len() >= 4 {
            b[..4].copy_from_slice(&[0xca, 0xfe, 0xba, 0xbe]);
            let _ = parse_class(&b);
        }
    }
}
