//! A board stand-in on a pseudo-terminal, for trying the host side by hand:
//! `cargo run -p jopcal-link --example board -- classic|handshake [FAULTS]`
//! prints the pty path, then serves images with the checksum program.

use jopcal_link::board::LoaderOptions;
use jopcal_link::peer::{serve, BoardLog, ChecksumProgram};
use jopcal_link::{Protocol, PseudoTerminal};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let protocol: Protocol = args.get(1).map_or("classic", String::as_str).parse().expect("protocol");
    let plan = args.get(2).map_or("", String::as_str).parse().expect("fault plan");
    let pty = PseudoTerminal::open().expect("pty");
    println!("{}", pty.path);
    let PseudoTerminal { board, .. } = pty;
    let log = Arc::new(Mutex::new(BoardLog::default()));
    serve(
        board,
        LoaderOptions::new(protocol),
        &mut ChecksumProgram::new("Img"),
        plan,
        1,
        Arc::new(AtomicBool::new(false)),
        log.clone(),
    );
    eprintln!("{:?}", log.lock().unwrap());
}
