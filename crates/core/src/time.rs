//! Wall-clock instants as the daemon hands them to the core: milliseconds since the Unix epoch.

use serde::{Deserialize, Serialize};

/// An instant, in milliseconds since the Unix epoch. The core never reads a clock; it is given one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub u64);

impl Timestamp {
    pub const fn from_millis(ms: u64) -> Self {
        Self(ms)
    }

    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// Milliseconds from `earlier` to `self`, zero when `earlier` is later.
    pub const fn millis_since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// `HH:MM:SS` (UTC) of it, as `ls` and `show` show a rate limit's reset.
    pub fn clock(self) -> String {
        let s = self.0 / 1_000 % 86_400;
        format!("{:02}:{:02}:{:02}", s / 3_600, s % 3_600 / 60, s % 60)
    }
}
