//! Why `jopcal.toml`, a JOP tree or one of its harnesses could not be read,
//! or a tree suite not generated. Each error lives beside the code that
//! raises it and is gathered here.

pub use crate::config::ConfigError;
pub use crate::harness::HarnessError;
pub use crate::jembench::KindError;
pub use crate::runtime::ClockMethodsError;
pub use crate::tree::TreeError;
