//! Fault injection for the board side of a link: dropped, bit-flipped and
//! duplicated bytes in either direction, a stall longer than any timeout, the
//! board vanishing mid-transfer, garbage before the protocol starts, and a
//! board still printing the previous run. Deterministic for a seed, so a
//! failing case can be replayed.
//!
//! Syntax (comma-separated): `drop=P`, `flip=P`, `dup=P` (probability per
//! byte, both directions; `drop-in=P` / `drop-out=P` for one direction: `in`
//! is host → board), `stall=MS@N` (stall MS milliseconds before the Nth byte
//! received), `vanish@N` (close the link at the Nth byte received),
//! `garbage=N` (N random bytes before the loader starts), `previous=N` (N
//! lines of an earlier run's output first), `reset@N` (the board resets at
//! the Nth byte received: its transmitter's bytes are lost, its loader
//! starts over). A board's UART in time ([`crate::uart`]): `baud=N` (the
//! host's line rate; it turns the model on), `uart=PCT` (the board's UART
//! clock against the host's, e.g. `uart=-1.4` for 1.4% slow), `latency=MS`
//! (the host gets the board's bytes in batches MS apart, as from a USB
//! adapter), `frame=BITS` (bit times the board's transmitter spends on a
//! byte: 11 for JOP's `sc_uart`, which sends two stop bits; 10 for a UART
//! with one).

use crate::error::SettingError;
use crate::link::Link;
use std::io;
use std::str::FromStr;
use std::time::Duration;

/// Bytes travelling host → board (`In`) or board → host (`Out`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    In,
    Out,
    Both,
}

impl Direction {
    fn covers(self, d: Direction) -> bool {
        self == Direction::Both || self == d
    }
}

/// One kind of fault.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    Drop(Direction, f64),
    Flip(Direction, f64),
    Dup(Direction, f64),
    Stall { millis: u64, at: u64 },
    Vanish { at: u64 },
    Garbage(usize),
    Previous(usize),
    Reset { at: u64 },
    Baud(u32),
    UartError(f64),
    LatencyMs(f64),
    FrameBits(u32),
}

impl Fault {
    /// Whether it changes, delays or ends the bytes themselves (not only
    /// the UART's timing, which [`crate::uart::UartLink`] models).
    fn acts_on_bytes(&self) -> bool {
        !matches!(
            self,
            Fault::Baud(_) | Fault::UartError(_) | Fault::LatencyMs(_) | Fault::FrameBits(_)
        )
    }
}

/// A set of faults.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FaultPlan {
    pub faults: Vec<Fault>,
}

impl FromStr for FaultPlan {
    type Err = SettingError;
    fn from_str(s: &str) -> Result<FaultPlan, SettingError> {
        let mut faults = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = || SettingError::BadFault(item.to_string());
            if let Some(at) = item.strip_prefix("reset@") {
                faults.push(Fault::Reset {
                    at: at.parse().map_err(|_| bad())?,
                });
                continue;
            }
            if let Some(at) = item.strip_prefix("vanish@") {
                faults.push(Fault::Vanish {
                    at: at.parse().map_err(|_| bad())?,
                });
                continue;
            }
            let (key, value) = item.split_once('=').ok_or_else(bad)?;
            let (kind, dir) = match key.rsplit_once('-') {
                Some((k, "in")) => (k, Direction::In),
                Some((k, "out")) => (k, Direction::Out),
                _ => (key, Direction::Both),
            };
            let p = || -> Result<f64, SettingError> {
                let p: f64 = value.parse().map_err(|_| bad())?;
                if (0.0..=1.0).contains(&p) {
                    Ok(p)
                } else {
                    Err(SettingError::Probability(item.to_string()))
                }
            };
            faults.push(match kind {
                "drop" => Fault::Drop(dir, p()?),
                "flip" => Fault::Flip(dir, p()?),
                "dup" => Fault::Dup(dir, p()?),
                "stall" => {
                    let (ms, at) = value.split_once('@').ok_or_else(bad)?;
                    Fault::Stall {
                        millis: ms.parse().map_err(|_| bad())?,
                        at: at.parse().map_err(|_| bad())?,
                    }
                }
                "garbage" => Fault::Garbage(value.parse().map_err(|_| bad())?),
                "previous" => Fault::Previous(value.parse().map_err(|_| bad())?),
                "baud" => Fault::Baud(value.parse().ok().filter(|b| *b > 0).ok_or_else(bad)?),
                "uart" => Fault::UartError(
                    value
                        .trim_end_matches('%')
                        .parse()
                        .ok()
                        .filter(|e: &f64| e.abs() < 50.0)
                        .ok_or_else(bad)?,
                ),
                "latency" => Fault::LatencyMs(value.parse().ok().filter(|l: &f64| *l >= 0.0).ok_or_else(bad)?),
                "frame" => Fault::FrameBits(value.parse().ok().filter(|b| (10..=12).contains(b)).ok_or_else(bad)?),
                _ => return Err(bad()),
            });
        }
        Ok(FaultPlan { faults })
    }
}

impl FaultPlan {
    /// The board's UART in time, when the plan gives the host's line rate.
    pub fn uart_timing(&self) -> Option<crate::uart::UartTiming> {
        Some(crate::uart::UartTiming {
            host_baud: self.first(|f| match f {
                Fault::Baud(b) => Some(*b),
                _ => None,
            })?,
            board_error_pct: self
                .first(|f| match f {
                    Fault::UartError(e) => Some(*e),
                    _ => None,
                })
                .unwrap_or(0.0),
            tx_fifo: 2,
            tx_frame_bits: self
                .first(|f| match f {
                    Fault::FrameBits(b) => Some(*b),
                    _ => None,
                })
                .unwrap_or(crate::download::JOP_ECHO_FRAME_BITS),
            latency: self
                .first(|f| match f {
                    Fault::LatencyMs(l) => Some(Duration::from_secs_f64(l / 1000.0)),
                    _ => None,
                })
                .unwrap_or(Duration::ZERO),
        })
    }

    /// The first fault `pick` takes, as it takes it.
    fn first<T>(&self, pick: impl Fn(&Fault) -> Option<T>) -> Option<T> {
        self.faults.iter().find_map(pick)
    }
}

/// splitmix64: small, seedable, good enough to place faults.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// A board-side link that injects the plan's faults.
pub struct FaultyLink<L: Link> {
    inner: L,
    plan: FaultPlan,
    rng: Rng,
    received: u64,
    vanished: bool,
    /// One line per injected fault, for the board's log.
    pub injected: Vec<String>,
}

impl<L: Link> FaultyLink<L> {
    /// The link under the faults.
    pub fn inner_mut(&mut self) -> &mut L {
        &mut self.inner
    }

    pub fn new(inner: L, plan: FaultPlan, seed: u64) -> FaultyLink<L> {
        FaultyLink {
            inner,
            plan,
            rng: Rng::new(seed),
            received: 0,
            vanished: false,
            injected: Vec::new(),
        }
    }

    /// The bytes to send before the loader starts: garbage and a previous run's output.
    pub fn preamble(&mut self) -> Vec<(Vec<u8>, Duration)> {
        let mut out = Vec::new();
        for f in self.plan.faults.clone() {
            match f {
                Fault::Garbage(n) => {
                    let bytes: Vec<u8> = (0..n)
                        .map(|_| (self.rng.next_u64() & 0xff) as u8)
                        .filter(|b| *b != 0xAA)
                        .collect();
                    self.injected.push(format!("sent {} garbage bytes", bytes.len()));
                    out.push((bytes, Duration::ZERO));
                }
                Fault::Previous(n) => {
                    self.injected.push(format!("printed {n} lines of a previous run"));
                    for k in 0..n {
                        let body = format!("@jopcal result bench=Previous{k} iter=1 cycles={}", 1000 + k);
                        let line = format!("{body} chk={}\n", jopcal_measure::result_line::line_check(&body));
                        out.push((line.into_bytes(), Duration::from_millis(5)));
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn mangle(&mut self, bytes: &[u8], dir: Direction) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        for &orig in bytes {
            let mut b = orig;
            let mut copies = 1;
            for f in &self.plan.faults {
                match *f {
                    Fault::Drop(d, p) if d.covers(dir) && self.rng.chance(p) => copies = 0,
                    Fault::Dup(d, p) if d.covers(dir) && self.rng.chance(p) => copies = 2,
                    Fault::Flip(d, p) if d.covers(dir) && self.rng.chance(p) => b ^= 1 << (self.rng.next_u64() % 8),
                    _ => {}
                }
            }
            if copies != 1 || b != orig {
                self.injected.push(format!("{dir:?}: 0x{b:02x} x{copies}"));
            }
            for _ in 0..copies {
                out.push(b);
            }
        }
        out
    }

    fn gone() -> io::Error {
        io::Error::new(io::ErrorKind::BrokenPipe, "the board vanished (injected)")
    }

    pub fn vanished(&self) -> bool {
        self.vanished
    }
}

impl<L: Link> Link for FaultyLink<L> {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.vanished {
            return Err(Self::gone());
        }
        let out = self.mangle(bytes, Direction::Out);
        self.inner.send(&out)
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        if self.vanished {
            return Err(Self::gone());
        }
        if !self.plan.faults.iter().any(Fault::acts_on_bytes) {
            // Nothing to inject (the UART's timing is the inner link's):
            // what the line holds, at once.
            let n = self.inner.recv(buf, timeout)?;
            self.received += n as u64;
            return Ok(n);
        }
        // One byte at a time, so that per-byte faults land on exact positions.
        let mut one = [0u8; 1];
        loop {
            let n = self.inner.recv(&mut one, timeout)?;
            if n == 0 {
                return Ok(0);
            }
            self.received += 1;
            for f in self.plan.faults.clone() {
                match f {
                    Fault::Stall { millis, at } if at == self.received => {
                        self.injected.push(format!("stalled {millis} ms at byte {at}"));
                        std::thread::sleep(Duration::from_millis(millis));
                    }
                    Fault::Reset { at } if at == self.received => {
                        self.injected.push(format!("reset at byte {at}"));
                        return Err(io::Error::new(io::ErrorKind::Interrupted, "the board reset (injected)"));
                    }
                    Fault::Vanish { at } if at == self.received => {
                        self.injected.push(format!("vanished at byte {at}"));
                        self.vanished = true;
                        return Err(Self::gone());
                    }
                    _ => {}
                }
            }
            let got = self.mangle(&one, Direction::In);
            match got.len() {
                0 => continue,
                _ => {
                    let k = got.len().min(buf.len());
                    buf[..k].copy_from_slice(&got[..k]);
                    return Ok(k);
                }
            }
        }
    }

    fn describe(&self) -> String {
        format!("{} with faults", self.inner.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_plans_and_rejects_bad_ones() {
        let p: FaultPlan = "drop=0.01,flip-out=0.5,stall=3000@40,vanish@100,garbage=9,previous=2,reset@7,baud=115200,uart=-1.4%,latency=8"
            .parse()
            .unwrap();
        assert_eq!(
            p.faults,
            vec![
                Fault::Drop(Direction::Both, 0.01),
                Fault::Flip(Direction::Out, 0.5),
                Fault::Stall { millis: 3000, at: 40 },
                Fault::Vanish { at: 100 },
                Fault::Garbage(9),
                Fault::Previous(2),
                Fault::Reset { at: 7 },
                Fault::Baud(115200),
                Fault::UartError(-1.4),
                Fault::LatencyMs(8.0),
            ]
        );
        let t = p.uart_timing().unwrap();
        assert_eq!((t.host_baud, t.board_error_pct, t.tx_fifo), (115200, -1.4, 2));
        assert_eq!(t.latency, Duration::from_millis(8));
        assert!("uart=-60".parse::<FaultPlan>().is_err());
        assert!("baud=9600,frame=9".parse::<FaultPlan>().is_err());
        let t = "baud=9600,frame=10"
            .parse::<FaultPlan>()
            .unwrap()
            .uart_timing()
            .unwrap();
        assert_eq!(t.tx_frame_bits, 10);
        assert!("drop=2"
            .parse::<FaultPlan>()
            .unwrap_err()
            .to_string()
            .contains("within 0..1"));
        assert!("melt=1"
            .parse::<FaultPlan>()
            .unwrap_err()
            .to_string()
            .starts_with("bad fault 'melt=1'"));
    }

    #[test]
    fn rng_is_deterministic_and_roughly_fair() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let hits = (0..10_000).filter(|_| a.chance(0.1)).count();
        assert!((800..1200).contains(&hits), "{hits}");
        let mut a = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }
}
