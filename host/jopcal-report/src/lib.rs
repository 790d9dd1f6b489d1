//! Reports: reconciling measured against estimated cycles into accuracy
//! tables ([`accuracy`]), the regression check between two measurement sets
//! with JUnit output ([`regress`]), reading `estimates.csv` ([`estimates`]),
//! and plots rendered with plotters as SVG and PNG, with a font embedded in
//! the binary ([`plots`]).

pub mod accuracy;
pub mod estimates;
pub mod plots;
pub mod regress;
