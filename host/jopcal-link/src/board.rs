//! The board side of both download protocols, byte for byte as JOP's loaders
//! behave, as a reusable component: the virtual board and the tests' board
//! stand-in receive images with it.
//!
//! One addition to the real loaders, documented as such: a *watchdog*. When
//! the host goes silent in the middle of an image for longer than
//! [`LoaderOptions::watchdog`], the loader starts over, as a real board does
//! after the host reconfigures it (`--configure`) — so a host can retry after
//! a lost byte without a reconfiguration command.

use crate::download::Protocol;
use crate::image::JopImage;
use crate::link::{recv_byte, Link};
use std::io;
use std::time::{Duration, Instant};

/// Loader settings.
#[derive(Debug, Clone)]
pub struct LoaderOptions {
    pub protocol: Protocol,
    /// Handshake: the period of the `0xAA` sync byte (500 ms on the SpinalHDL port).
    pub sync_period: Duration,
    /// Silence mid-image after which the loader starts over.
    pub watchdog: Duration,
    /// Largest image the board's memory holds, in words.
    pub max_words: usize,
    /// The host's write times, for the board's UART model (tests).
    pub host_writes: Option<crate::uart::HostWrites>,
}

impl LoaderOptions {
    pub fn new(protocol: Protocol) -> LoaderOptions {
        LoaderOptions {
            protocol,
            sync_period: Duration::from_millis(500),
            watchdog: Duration::from_millis(1000),
            max_words: 1 << 20,
            host_writes: None,
        }
    }
}

/// What the loader saw, for the board's log.
#[derive(Debug, Clone, Default)]
pub struct LoaderLog {
    pub restarts: Vec<String>,
}

/// Waits for and receives one image; `Ok(None)` when `stop()` says to give up.
pub fn receive(
    link: &mut dyn Link,
    opts: &LoaderOptions,
    log: &mut LoaderLog,
    stop: &dyn Fn() -> bool,
) -> io::Result<Option<JopImage>> {
    match opts.protocol {
        Protocol::Classic | Protocol::ClassicNoEcho => classic(link, opts, log, stop),
        Protocol::Handshake => handshake(link, opts, log, stop),
    }
}

/// Classic: echo every byte; word 0 is the length; boot after that many words.
/// Bytes are taken in whatever chunks the line delivers and echoed in the same
/// chunks (in order, each exactly once), as a UART would.
fn classic(
    link: &mut dyn Link,
    opts: &LoaderOptions,
    log: &mut LoaderLog,
    stop: &dyn Fn() -> bool,
) -> io::Result<Option<JopImage>> {
    let poll = Duration::from_millis(50);
    let mut buf = [0u8; 4096];
    'restart: loop {
        let mut words: Vec<u32> = Vec::new();
        let mut word = [0u8; 4];
        let mut have = 0usize;
        let mut last = Instant::now();
        loop {
            if stop() {
                return Ok(None);
            }
            // Never read past the image: what follows belongs to the next session.
            let want = match words.first() {
                Some(&n) => ((n as usize).saturating_sub(words.len())) * 4 - have,
                None => 4 - have,
            }
            .clamp(1, buf.len());
            let got = link.recv(&mut buf[..want], poll)?;
            if got == 0 {
                if (have > 0 || !words.is_empty()) && last.elapsed() > opts.watchdog {
                    log.restarts.push(format!(
                        "silence after {} words and {have} bytes: loader restarted",
                        words.len()
                    ));
                    continue 'restart;
                }
                continue;
            }
            last = Instant::now();
            link.send(&buf[..got])?;
            for &b in &buf[..got] {
                word[have] = b;
                have += 1;
                if have < 4 {
                    continue;
                }
                have = 0;
                words.push(u32::from_be_bytes(word));
                let n = words[0] as usize;
                if n < 2 || n > opts.max_words {
                    log.restarts
                        .push(format!("word 0 = {n} is not a possible image length: loader restarted"));
                    continue 'restart;
                }
                if words.len() == n {
                    return Ok(Some(JopImage { words }));
                }
            }
        }
    }
}

/// Handshake: 0xAA until 0x55; words without echo; XOR back; 0x00 boots, 0xFF restarts.
fn handshake(
    link: &mut dyn Link,
    opts: &LoaderOptions,
    log: &mut LoaderLog,
    stop: &dyn Fn() -> bool,
) -> io::Result<Option<JopImage>> {
    'restart: loop {
        // Sync: send 0xAA every period; any byte but 0x55 gets another 0xAA.
        link.send(&[0xAA])?;
        let mut sent_at = Instant::now();
        loop {
            if stop() {
                return Ok(None);
            }
            match recv_byte(link, Duration::from_millis(20))? {
                Some(0x55) => break,
                Some(_) => {
                    link.send(&[0xAA])?;
                    sent_at = Instant::now();
                }
                None if sent_at.elapsed() >= opts.sync_period => {
                    link.send(&[0xAA])?;
                    sent_at = Instant::now();
                }
                None => {}
            }
        }
        let mut words: Vec<u32> = Vec::new();
        let mut word = [0u8; 4];
        let mut have = 0usize;
        let mut n = usize::MAX;
        while words.len() < n {
            if stop() {
                return Ok(None);
            }
            let Some(b) = recv_byte(link, opts.watchdog)? else {
                log.restarts
                    .push(format!("silence after {} words: loader restarted", words.len()));
                continue 'restart;
            };
            word[have] = b;
            have += 1;
            if have == 4 {
                have = 0;
                words.push(u32::from_be_bytes(word));
                if words.len() == 1 {
                    n = words[0] as usize;
                    if n < 2 || n > opts.max_words {
                        log.restarts
                            .push(format!("word 0 = {n} is not a possible image length: loader restarted"));
                        continue 'restart;
                    }
                }
            }
        }
        let image = JopImage { words };
        link.send(&image.xor().to_be_bytes())?;
        match recv_byte(link, opts.watchdog)? {
            Some(0x00) => return Ok(Some(image)),
            Some(0xFF) => log.restarts.push("host answered 0xFF: loader restarted".into()),
            Some(other) => log
                .restarts
                .push(format!("host answered 0x{other:02x}: loader restarted")),
            None => log.restarts.push("no answer to the checksum: loader restarted".into()),
        }
    }
}
