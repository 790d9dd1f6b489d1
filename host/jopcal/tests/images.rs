//! The virtual board running JOP images, driven through the binary as a
//! user drives it, on images jopcal's own test linker makes (no JOP tree
//! needed): `emu --run`, `--trace`, and `run --target emu --image` with its
//! download over a pseudo-terminal and a result line in measurements.csv.

mod common;
use common::{jopcal, repo, text};
use jopcal_link::JopImage;

/// Writes `words` as a `.jop` file.
fn write_image(dir: &std::path::Path, name: &str, words: Vec<u32>) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.jop"));
    std::fs::write(&path, JopImage { words }.to_text()).unwrap();
    path
}

/// A result line as jopcal's harness prints it, with its checksum.
fn result_line(bench: &str, cycles: u64) -> String {
    let line = format!("@jopcal result bench={bench} iter=1 cycles={cycles}");
    let chk = line.bytes().map(u32::from).sum::<u32>() % 65536;
    format!("{line} chk={chk}\n@jopcal done\n")
}

#[test]
fn emu_runs_an_image_and_traces_it() {
    let dir = tempfile::tempdir().unwrap();
    let image = write_image(dir.path(), "hello", jopcal_emu::image::assemble::printing("hello\n"));
    let o = jopcal()
        .current_dir(repo())
        .args(["emu", "--run"])
        .arg(&image)
        .arg("--trace")
        .arg(dir.path().join("trace"))
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(out, "hello\nJVM exit!\r\n");
    // bipush 2 + sipush 3 + jopsys_wr 7 per character, in the tree's table.
    let cycles = 12 * "hello\nJVM exit!".len();
    assert!(err.contains(&format!("emu {cycles} cycles")), "{err}");
    let methods = std::fs::read_to_string(dir.path().join("trace/run1.methods.csv")).unwrap();
    assert!(
        methods.starts_with("method,calls,exclusive_cycles,share_pct,bytecodes,cache_loads\n\"code at word "),
        "{methods}"
    );
    assert!(methods.contains(&format!(",1,{cycles},100.000")), "{methods}");
}

#[test]
fn a_file_that_is_no_image_is_one_line_naming_the_word() {
    let dir = tempfile::tempdir().unwrap();
    let image = write_image(dir.path(), "short", vec![5, 1, 0, 0, 0]);
    let o = jopcal().args(["emu", "--run"]).arg(&image).output().unwrap();
    assert!(!o.status.success());
    let (_, err) = text(&o);
    assert_eq!(
        err.lines().last().unwrap(),
        format!(
            "jopcal: error: {}: word 0: an image of 5 words is too short to be a JOP image",
            image.display()
        )
    );
}

#[test]
fn run_downloads_images_to_the_virtual_board_and_records_their_results() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_image(
        dir.path(),
        "A",
        jopcal_emu::image::assemble::printing(&result_line("A", 1234)),
    );
    let b = write_image(
        dir.path(),
        "B",
        jopcal_emu::image::assemble::printing(&result_line("B", 99)),
    );
    let out = dir.path().join("out");
    let o = jopcal()
        .current_dir(repo())
        .args(["run", "--target", "emu", "--image"])
        .arg(&a)
        .arg("--image")
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let csv = std::fs::read_to_string(out.join("measurements.csv")).unwrap();
    // What produced it, first, as a comment line; then the header and the rows.
    assert!(csv.starts_with("# jopcal "), "{csv}");
    let rows: Vec<Vec<&str>> = csv.lines().skip(2).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert_eq!((rows[0][2], rows[0][4]), ("A", "1234"));
    assert_eq!((rows[1][2], rows[1][4]), ("B", "99"));
    assert!(rows[0][1].starts_with("virtual board (JOP images) "), "{}", rows[0][1]);
    assert!(rows[0][1].contains("jop-devel.toml"), "{}", rows[0][1]);
}

#[test]
fn a_board_served_by_emu_pty_runs_a_downloaded_image_with_the_trees_table() {
    let dir = tempfile::tempdir().unwrap();
    let image = write_image(
        dir.path(),
        "C",
        jopcal_emu::image::assemble::printing(&result_line("C", 777)),
    );
    let trace = dir.path().join("trace");
    let emu = common::VirtualBoard::start(&[
        "--protocol".as_ref(),
        "handshake".as_ref(),
        "--trace".as_ref(),
        trace.as_os_str(),
    ]);
    let out = dir.path().join("out");
    let o = jopcal()
        .args([
            "run",
            "--target",
            "board",
            "--protocol",
            "handshake",
            "--port",
            &emu.port,
            "--image",
        ])
        .arg(&image)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let csv = std::fs::read_to_string(out.join("measurements.csv")).unwrap();
    assert!(csv.lines().nth(2).unwrap().contains(",C,1,777,"), "{csv}");
    // The trace is written before the image's JVM exit! goes out.
    let methods = std::fs::read_to_string(trace.join("run1.methods.csv")).unwrap();
    assert!(methods.contains("\"code at word "), "{methods}");
}

#[test]
fn traces_of_downloaded_images_take_their_names_from_the_files_and_link_maps() {
    let dir = tempfile::tempdir().unwrap();
    let words = jopcal_emu::image::assemble::printing(&result_line("T", 5));
    // The boot method's code address, from its structure (special pointer 0).
    let boot_struct = words[words[1] as usize] as usize;
    let code = words[boot_struct] >> 10;
    let image = write_image(dir.path(), "T", words);
    std::fs::write(
        dir.path().join("T.jop.link.txt"),
        format!("bytecode my.Boot.boot()V {code}\n"),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = jopcal()
        .current_dir(repo())
        .args(["run", "--target", "emu", "--trace", "--image"])
        .arg(&image)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let methods = std::fs::read_to_string(out.join("traces/T.methods.csv")).unwrap();
    assert!(methods.contains("\"my.Boot.boot()V\",1,"), "{methods}");
}
