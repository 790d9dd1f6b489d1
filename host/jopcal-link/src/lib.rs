//! Talking to a JOP board over a serial line.
//!
//! Owns: transports behind one trait, for both ends of a line (a serial
//! device or pseudo-terminal through `serialport`, and TCP; [`link`]); the
//! `.jop` image format ([`image`]); the host side of both download protocols,
//! classic and handshake ([`download`]); their board side as a reusable
//! component ([`board`]); capturing a run's output with its raw bytes
//! ([`capture`]); fault injection ([`fault`]); a board's UART in time
//! ([`uart`]: its clock error, transmit FIFO, a USB adapter's latency); and a board stand-in that
//! serves images with any program ([`peer`]), used by the tests and by the
//! virtual board.

pub mod board;
pub mod capture;
pub mod download;
pub mod error;
pub mod fault;
pub mod image;
pub mod link;
pub mod peer;
pub mod session;
pub mod uart;

pub use capture::{capture, CaptureOptions, Captured, Ending};
pub use download::{download, DownloadError, DownloadOptions, DownloadReport, Pace, Protocol};
pub use error::{ConfigureError, LoadError, OpenError, SettingError, StoreError};
pub use image::JopImage;
pub use link::{open, Link, PseudoTerminal};
