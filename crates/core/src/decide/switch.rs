//! The `switch` step: a rate-limited agent moves to the next account of its client named in
//! bosun's config that no agent waits out a limit on, its conversation carried: it is restarted
//! in its workspace under that account's config directory, its transcript copied first where its
//! client looks there, and resumed. The account it left stays shut (`TimerKind::Window`) until
//! its limit resets. When no account has room, or the agent's account cannot be changed (a
//! confined agent's config is its own), the step waits as `wait` does (`recovery::switch`).

use std::collections::BTreeMap;

use super::ground::{set_timer, Decision};
use super::window::Windows;
use crate::{Account, Agent, Event, State, TimerKind, Timestamp};

/// What moving an agent to another account makes: the agent as it is there, to be resumed; the
/// files its conversation needs copied first; and the record of the move, for after its
/// resume (which forgets a Codex's log: the copy is the log it goes on writing).
pub(super) type Moved = (Agent, Vec<(std::path::PathBuf, std::path::PathBuf)>, Event);

/// Agent `a` moved to the next account with room (`switch`, its `attempt`th step since its
/// chain began), the account it left shut until its reset. None when no account has room.
pub(super) fn moved(state: &State, a: &Agent, attempt: u32, now: Timestamp, d: &mut Decision) -> Option<Moved> {
    let (name, env) = next_account(state, a, d)?;
    let left = Account::of(a)?;
    let mut moved = a.clone();
    moved.env.extend(env.clone());
    let to = Account::of(&moved)?;
    let copies = a.driver.behaviour().switch_copies(a, &to.config);
    let until = d.agent(state, &a.id).map_or(a.limited_until, |now| now.limited_until);
    let reset = crate::rate_limit::wake_at(&a.id, attempt, until, now);
    let log = copies.iter().find(|(from, _)| a.log.as_ref() == Some(from)).map(|(_, to)| to.clone());
    let switched = Event::AgentSwitched { id: a.id.clone(), account: name, env, log, at: now };
    set_timer(state, d, TimerKind::Window { account: left }, reset);
    Some((moved, copies, switched))
}

/// The next account after the agent's (by name, around) of its client that no agent waits out
/// a limit on, and the variables that put the agent on it.
fn next_account(state: &State, a: &Agent, d: &Decision) -> Option<(String, BTreeMap<String, String>)> {
    if crate::OwnConfig::of(a).is_some() {
        return None;
    }
    let client = a.driver.kind();
    let here = Account::of(a)?;
    let config = &state.config;
    let names: Vec<&String> = config.accounts.iter().filter(|(_, s)| s.client == client).map(|(n, _)| n).collect();
    let at = config.account_of(client, &a.env).and_then(|n| names.iter().position(|m| *m == n));
    let start = at.map_or(0, |i| i + 1);
    let windows = Windows::of(state, d);
    (0..names.len()).map(|k| names[(start + k) % names.len()]).find_map(|name| {
        let spec = &config.accounts[name];
        let account = Account { client, config: spec.config.clone() };
        let room = account != here && !windows.shut(&account);
        room.then(|| config.account_env(name, client, &a.env).ok().map(|env| (name.clone(), env))).flatten()
    })
}
