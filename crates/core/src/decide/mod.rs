//! `decide`: given what bosun knows and what just happened, the facts to record and the effects
//! to carry out. Pure and total: the same state, input and time always give the same decision.
//! An input about a record that is gone, or a fact already recorded, decides nothing.

mod reconcile;
mod session;
mod workspace;

use crate::{Agent, Effect, Event, Input, Message, Rejection, State, Timestamp, Workspace};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub events: Vec<Event>,
    pub effects: Vec<Effect>,
}

impl Decision {
    fn event(&mut self, e: Event) {
        self.events.push(e);
    }
    fn effect(&mut self, e: Effect) {
        self.effects.push(e);
    }
}

pub fn decide(state: &State, input: &Input, now: Timestamp) -> Result<Decision, Rejection> {
    let mut d = Decision::default();
    match input {
        Input::StartAgent(spec) => workspace::start_agent(state, spec, now, &mut d)?,
        Input::RemoveWorkspace { id, force, probe } => workspace::remove(state, id, *force, *probe, &mut d)?,
        Input::WorkspaceCreated { id } => workspace::created(state, id, now, &mut d),
        Input::WorkspaceCreateFailed { id, error } => workspace::create_failed(state, id, error, now, &mut d),
        Input::WorkspaceInspected { id, dirty } => workspace::inspected(state, id, *dirty, &mut d),
        Input::WorkspaceRemoved { id } => workspace::removed(state, id, &mut d),
        Input::WorkspaceRemoveFailed { id, error, dirty } => workspace::remove_failed(state, id, error, *dirty, &mut d),
        Input::KillAgent { agent } => session::kill(state, agent, &mut d)?,
        Input::SendText { agent, text } => session::send_text(state, agent, text, now, &mut d)?,
        Input::SessionSpawned { agent, pid } => session::spawned(state, agent, *pid, now, &mut d),
        Input::SessionSpawnFailed { agent, error } => session::spawn_failed(state, agent, error, now, &mut d),
        Input::SessionExited { session, status } => session::exited(state, session, *status, now, &mut d),
        Input::SessionClosed { session } => session::exited(state, session, crate::ExitStatus::UNKNOWN, now, &mut d),
        Input::SessionKilled { agent } => session::killed(state, agent, now, &mut d),
        Input::SessionKillFailed { agent, error } => session::kill_failed(state, agent, error, &mut d),
        Input::TextDelivered { message } => session::text_done(state, *message, None, &mut d),
        Input::TextFailed { message, error } => session::text_done(state, *message, Some(error), &mut d),
        Input::SessionsObserved { sessions, as_of } => reconcile::observed(state, sessions, *as_of, now, &mut d),
        Input::Reconcile(reality) => reconcile::at_start(state, reality, now, &mut d),
    }
    Ok(d)
}

fn create(ws: &Workspace, resume: bool) -> Effect {
    Effect::CreateWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        settings_from: ws.settings_from.clone(),
        resume,
    }
}

fn remove(ws: &Workspace, force: bool, delete_branch: bool) -> Effect {
    Effect::RemoveWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        force,
        delete_branch,
        owned: ws.owned_files(),
    }
}

fn inspect(ws: &Workspace) -> Effect {
    Effect::InspectWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        owned: ws.owned_files(),
    }
}

fn spawn(agent: &Agent) -> Effect {
    Effect::SpawnSession {
        agent: agent.id.clone(),
        session: agent.session.clone(),
        cwd: agent.cwd.clone(),
        env: agent.env.clone(),
        command: agent.command.clone(),
    }
}

fn kill(agent: &Agent) -> Effect {
    Effect::KillSession { agent: agent.id.clone(), session: agent.session.clone() }
}

fn send(agent: &Agent, m: &Message) -> Effect {
    Effect::SendText { message: m.id, session: agent.session.clone(), text: m.text.clone() }
}
