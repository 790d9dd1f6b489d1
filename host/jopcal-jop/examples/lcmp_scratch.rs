use jopcal_jop::microcode::*;
use std::path::Path;
fn main() {
    let p = Program::read(Path::new("/work/jop/asm/src/jvm.asm"), &["SERIAL".to_string()]).unwrap();
    let t = AccessTiming::load(Path::new("/work/main/calibration/jop-microcode.toml")).unwrap();
    let e = exec::Exec::new(&p, &t, 1.0, 2.0);
    let lcmp = e.entry("lcmp").unwrap();
    let cases: &[(i64, i64)] = &[
        (0, 0),
        (1, 2),
        (2, 1),
        (-1, 1),
        (1, -1),
        (-5, -7),
        (1 << 40, 3),
        (-(1 << 40), 5),
        (i64::MAX, i64::MIN),
        (100, 100),
        (0, -1),
    ];
    for &(a, b) in cases {
        let st = [(a >> 32) as i32, a as i32, (b >> 32) as i32, b as i32];
        println!("lcmp {a} {b}: {:?}", e.cycles(lcmp, &st, &[]));
    }
    for name in ["lshl", "lushr", "lshr"] {
        let en = e.entry(name).unwrap();
        let v: Vec<_> = (0..66).step_by(5).map(|s| e.cycles(en, &[1, 2, s], &[])).collect();
        println!("{name}: {v:?}");
    }
}
