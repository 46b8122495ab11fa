//! The commands on what needs a person: `escalations` lists it, `resolve` closes one.

pub mod list;
pub mod resolve;
