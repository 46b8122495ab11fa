//! `Nonces`: the one source of the random bits the daemon draws ids from (agents', workspaces',
//! jobs', requests' and plans' nonces, and the session ids a driver picks). Random in use. In
//! tests, `BOSUN_SEED` seeds it, mixed with how many events the log held when the daemon
//! started (a daemon started again on the same log never draws the ids it drew before), so the
//! same test draws the same ids from run to run.

use std::sync::Mutex;

use bosun_core::Nonce;

/// The variable that seeds the ids, for tests.
pub const SEED_VAR: &str = "BOSUN_SEED";

pub struct Nonces(Mutex<fastrand::Rng>);

impl Nonces {
    /// Seeded by `seed` and the log's length `events` when given one; else random.
    pub fn new(seed: Option<u64>, events: u64) -> Self {
        let rng = match seed {
            Some(seed) => fastrand::Rng::with_seed(seed ^ events.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            None => fastrand::Rng::new(),
        };
        Self(Mutex::new(rng))
    }

    /// Seeded by `BOSUN_SEED` (a number) when it is set.
    pub fn from_env(events: u64) -> Self {
        let seed = std::env::var(SEED_VAR).ok().and_then(|s| s.trim().parse().ok());
        Self::new(seed, events)
    }

    /// 64 random bits.
    pub fn bits(&self) -> u64 {
        match self.0.lock() {
            Ok(mut rng) => rng.u64(..),
            Err(poisoned) => poisoned.into_inner().u64(..),
        }
    }

    /// A fresh nonce.
    pub fn nonce(&self) -> Nonce {
        Nonce::from_bits(self.bits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_draws_the_same_nonces_and_a_longer_log_other_ones() {
        let draw = |n: &Nonces| (0..3).map(|_| n.nonce()).collect::<Vec<_>>();
        assert_eq!(draw(&Nonces::new(Some(7), 10)), draw(&Nonces::new(Some(7), 10)));
        assert_ne!(draw(&Nonces::new(Some(7), 10)), draw(&Nonces::new(Some(7), 11)));
        assert_ne!(draw(&Nonces::new(None, 10)), draw(&Nonces::new(None, 10)));
    }
}
