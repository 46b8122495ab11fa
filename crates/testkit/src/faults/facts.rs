//! `Facts`: what the daemon acknowledged to the harness's client, which must never be lost.

use std::collections::BTreeMap;

/// What the daemon acknowledged to a client: never to be lost.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub(super) events: u64,
    /// Job id, and whether it was over.
    pub(super) jobs: BTreeMap<String, bool>,
    pub(super) agents: Vec<String>,
}

impl Facts {
    /// Whether everything `self` held still holds in `now`.
    pub(super) fn check_kept(&self, now: &Facts) -> Result<(), String> {
        if now.events < self.events {
            return Err(format!("{} events recorded, {} were acknowledged before", now.events, self.events));
        }
        for (id, over) in &self.jobs {
            match now.jobs.get(id) {
                None => return Err(format!("acknowledged job {id} is gone")),
                Some(false) if *over => return Err(format!("job {id} was over and runs again")),
                _ => {}
            }
        }
        if let Some(a) = self.agents.iter().find(|a| !now.agents.contains(a)) {
            return Err(format!("acknowledged agent {a} is gone"));
        }
        Ok(())
    }
}
