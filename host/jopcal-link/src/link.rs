//! Transports: a serial device or pseudo-terminal (through `serialport`,
//! 8N1, no flow control), and TCP (`tcp://host:port`, as ser2net, labgrid or a
//! simulator export a UART). Both ends of a link, host and board, use the
//! same [`Link`] trait.

use crate::OpenError;
use serialport::{DataBits, FlowControl, Parity, SerialPort, StopBits, TTYPort};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A byte stream with timed reads.
pub trait Link: Send {
    /// Writes every byte.
    fn send(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Reads what is available into `buf`, waiting at most `timeout`;
    /// `Ok(0)` when nothing came in time. A closed peer is an error.
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize>;
    /// What this link is, for logs and errors.
    fn describe(&self) -> String;
    /// A second handle that reads the same line, for a thread of its own
    /// (the board's UART model stamps bytes as they arrive); `None` where
    /// the link cannot be shared.
    fn reader(&self) -> Option<Box<dyn Link>> {
        None
    }
}

/// Reads one byte, waiting at most `timeout`.
pub fn recv_byte(link: &mut dyn Link, timeout: Duration) -> io::Result<Option<u8>> {
    let mut b = [0u8; 1];
    Ok((link.recv(&mut b, timeout)? == 1).then_some(b[0]))
}

/// Reads exactly `buf.len()` bytes, each within `timeout` of the previous one.
/// Returns how many arrived before a gap longer than `timeout`.
pub fn recv_exact(link: &mut dyn Link, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        let n = link.recv(&mut buf[got..], timeout)?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got)
}

/// Reads and discards input until the line is quiet for `quiet`, or `limit` passes.
/// Returns the bytes drained.
pub fn drain(link: &mut dyn Link, quiet: Duration, limit: Duration) -> io::Result<Vec<u8>> {
    let end = Instant::now() + limit;
    let mut out = Vec::new();
    let mut buf = [0u8; 256];
    while Instant::now() < end {
        let n = link.recv(&mut buf, quiet.min(end.saturating_duration_since(Instant::now())))?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    Ok(out)
}

/// A serial device or pseudo-terminal.
pub struct SerialLink {
    port: Box<dyn SerialPort>,
    name: String,
    /// The board end of a pseudo-terminal: reads fail with EIO while no host
    /// has the other end open; that is silence, not an error.
    hangup_is_silence: bool,
}

/// The other end of a pseudo-terminal is closed (poll reports a hang-up, read EIO).
fn hung_up(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe || e.raw_os_error() == Some(libc::EIO)
}

fn timed_out(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}

impl SerialLink {
    /// Opens `path` at `baud` 8N1 without flow control. DTR and RTS are
    /// raised when `dtr_rts` (boards that reset on them); a device that has no
    /// modem lines (a pseudo-terminal, some bridges) is used without them.
    pub fn open(path: &str, baud: u32, dtr_rts: bool) -> Result<SerialLink, OpenError> {
        let mut port = serialport::new(path, baud)
            .data_bits(DataBits::Eight)
            .parity(Parity::None)
            .stop_bits(StopBits::One)
            .flow_control(FlowControl::None)
            .timeout(Duration::from_millis(100))
            .open()
            .map_err(|e| {
                if e.to_string().contains("Not a typewriter") {
                    OpenError::NotATerminal { path: path.to_string() }
                } else {
                    OpenError::Serial {
                        path: path.to_string(),
                        source: e,
                    }
                }
            })?;
        if dtr_rts {
            // Tolerated where unsupported (a pty has no modem lines).
            let _ = port.write_data_terminal_ready(true);
            let _ = port.write_request_to_send(true);
        }
        // A pseudo-terminal moves bytes at once: a baud rate means nothing there.
        let pty = std::fs::canonicalize(path).is_ok_and(|p| p.starts_with("/dev/pts"));
        Ok(SerialLink {
            port,
            name: if pty {
                format!("{path} (a pseudo-terminal: no baud rate)")
            } else {
                format!("{path} at {baud} baud")
            },
            hangup_is_silence: false,
        })
    }

    /// Sends a BREAK of `length` (newer SpinalHDL loaders reset on BREAK + 'R').
    pub fn send_break(&mut self, length: Duration) -> io::Result<()> {
        self.port.set_break().map_err(io::Error::other)?;
        std::thread::sleep(length);
        self.port.clear_break().map_err(io::Error::other)
    }
}

impl Link for SerialLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut rest = bytes;
        while !rest.is_empty() {
            match self.port.write(rest) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the port accepts no more bytes",
                    ))
                }
                Ok(n) => rest = &rest[n..],
                Err(e) if timed_out(&e) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the port does not drain (write timed out)",
                    ))
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Nobody has the other end open: like a UART without a cable, the bytes are lost.
                Err(e) if self.hangup_is_silence && hung_up(&e) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        // Zero polls; anything else waits at least the 1 ms the OS's poll counts in.
        let wait = if timeout.is_zero() {
            timeout
        } else {
            timeout.max(Duration::from_millis(1))
        };
        self.port.set_timeout(wait).map_err(io::Error::other)?;
        match self.port.read(buf) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the other end closed the line",
            )),
            Ok(n) => Ok(n),
            Err(e) if timed_out(&e) => Ok(0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) if self.hangup_is_silence && hung_up(&e) => {
                std::thread::sleep(timeout.min(Duration::from_millis(20)));
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }

    fn describe(&self) -> String {
        self.name.clone()
    }

    fn reader(&self) -> Option<Box<dyn Link>> {
        let port = self.port.try_clone().ok()?;
        Some(Box::new(SerialLink {
            port,
            name: self.name.clone(),
            hangup_is_silence: self.hangup_is_silence,
        }))
    }
}

/// A UART exported over TCP.
pub struct TcpLink {
    stream: TcpStream,
    name: String,
}

impl TcpLink {
    pub fn connect(addr: &str) -> Result<TcpLink, OpenError> {
        let stream = TcpStream::connect(addr).map_err(|source| OpenError::Connect {
            addr: addr.to_string(),
            source,
        })?;
        stream.set_nodelay(true).map_err(|source| OpenError::Socket {
            addr: addr.to_string(),
            source,
        })?;
        Ok(TcpLink {
            stream,
            name: format!("tcp://{addr}"),
        })
    }

    pub fn from_stream(stream: TcpStream, name: String) -> TcpLink {
        let _ = stream.set_nodelay(true);
        TcpLink { stream, name }
    }
}

impl Link for TcpLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> io::Result<usize> {
        self.stream
            .set_read_timeout(Some(timeout.max(Duration::from_millis(1))))?;
        match self.stream.read(buf) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the other end closed the connection",
            )),
            Ok(n) => Ok(n),
            Err(e) if timed_out(&e) || e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) => Err(e),
        }
    }

    fn describe(&self) -> String {
        self.name.clone()
    }
}

/// Opens `DEV` (a serial device or pseudo-terminal) or `tcp://host:port`.
pub fn open(spec: &str, baud: u32, dtr_rts: bool) -> Result<Box<dyn Link>, OpenError> {
    match spec.strip_prefix("tcp://") {
        Some(addr) => Ok(Box::new(TcpLink::connect(addr)?)),
        None => Ok(Box::new(SerialLink::open(spec, baud, dtr_rts)?)),
    }
}

/// A pseudo-terminal: this process keeps the board end; `path` is the other
/// end, which a host opens as its serial port (and may close and reopen).
pub struct PseudoTerminal {
    pub board: SerialLink,
    pub path: String,
}

impl PseudoTerminal {
    pub fn open() -> Result<PseudoTerminal, OpenError> {
        use std::os::fd::AsRawFd;
        let (master, slave) = TTYPort::pair().map_err(OpenError::Pty)?;
        let path = slave.name().ok_or(OpenError::PtyUnnamed)?;
        // The host opens the path itself; the board end must not leak into child processes.
        drop(slave);
        // SAFETY: fcntl on a descriptor this process owns.
        unsafe { libc::fcntl(master.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
        Ok(PseudoTerminal {
            board: SerialLink {
                port: Box::new(master),
                name: format!("board end of {path}"),
                hangup_is_silence: true,
            },
            path,
        })
    }
}
