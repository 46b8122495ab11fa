//! The commands on what an agent or job changed, its branch against where its workspace
//! started: `diff`, `merge`, `pr`.

pub mod diff;
pub mod merge;
pub mod pr;
