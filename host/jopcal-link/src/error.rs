//! Why a line could not be opened or an image not read: one enum per
//! concern, each naming the device, address or file it is about.

use std::path::PathBuf;

/// A setting given as text that does not parse: a protocol name or a fault plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// Not one of the three protocols.
    #[error("unknown protocol '{0}' (classic, classic-noecho or handshake)")]
    UnknownProtocol(String),
    /// A fault that is not in the fault language.
    #[error("bad fault '{0}' (drop=P, flip=P, dup=P [-in|-out], stall=MS@N, vanish@N, reset@N, garbage=N, previous=N, uart=PCT, baud=N, latency=MS)")]
    BadFault(String),
    /// Not a pace.
    #[error("unknown pace '{0}' (line, line:BITS for a transmitter of 10 to 12 bit times a byte, window:N or word)")]
    BadPace(String),
    /// A fault probability outside 0..1.
    #[error("fault '{0}': probability must be within 0..1")]
    Probability(String),
}

/// A result line the host could not keep: the file it is appended to
/// failed. The capture stops, since every later result would be lost too.
#[derive(Debug, thiserror::Error)]
#[error("appending to {}: {source}", path.display())]
pub struct StoreError {
    /// The file the result was appended to.
    pub path: PathBuf,
    /// What the system said.
    #[source]
    pub source: std::io::Error,
}

/// Why a transport could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The path is a file or device that is not a terminal.
    #[error(
        "cannot open {path}: not a serial port or pseudo-terminal (Not a typewriter); name the board's serial device, e.g. /dev/ttyUSB0, or tcp://HOST:PORT"
    )]
    NotATerminal {
        /// The device as named.
        path: String,
    },
    /// The serial device could not be opened.
    #[error("cannot open {path}: {source}")]
    Serial {
        /// The device as named.
        path: String,
        /// What serialport said.
        #[source]
        source: serialport::Error,
    },
    /// The TCP connection failed.
    #[error("cannot connect to tcp://{addr}: {source}")]
    Connect {
        /// `HOST:PORT`.
        addr: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The connected socket could not be set up.
    #[error("tcp://{addr}: {source}")]
    Socket {
        /// `HOST:PORT`.
        addr: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// No pseudo-terminal pair could be made.
    #[error("cannot open a pseudo-terminal: {0}")]
    Pty(#[source] serialport::Error),
    /// The pseudo-terminal's board end has no path.
    #[error("the pseudo-terminal has no name")]
    PtyUnnamed,
}

/// Why a `.jop` image file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not text.
    #[error("{}: byte {byte}: not text (invalid UTF-8)", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
        /// Offset of the first byte that is not UTF-8.
        byte: usize,
    },
    /// The text is not an image (the error has line and column).
    #[error("{}:{source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where and why.
        #[source]
        source: crate::image::ImageError,
    },
    /// The words are not laid out as a JOP linker lays out an image.
    #[error("{}: {source}", path.display())]
    Layout {
        /// The file.
        path: PathBuf,
        /// The word and why.
        #[source]
        source: crate::image::LayoutError,
    },
}

/// Why the configure command before a download failed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigureError {
    /// `sh` could not start it.
    #[error("cannot run configure command `{cmd}`: {source}")]
    Start {
        /// The command.
        cmd: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// It ran and failed.
    #[error("configure command `{cmd}` failed ({status}): {last_line}")]
    Failed {
        /// The command.
        cmd: String,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// The last line it printed (stderr, then stdout).
        last_line: String,
    },
}
