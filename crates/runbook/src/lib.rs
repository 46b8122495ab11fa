//! bosun runbooks: the syntax tree both formats are read into.

pub mod check;
pub mod decode;
pub mod load;
pub mod lower;
pub mod model;
pub mod syntax;
pub use bosun_core::template;
