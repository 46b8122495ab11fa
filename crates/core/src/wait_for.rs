//! `WaitFor`: what `bosun wait` waits for an agent to reach, and whether an agent as it stands
//! has reached it, may still, or never will.

use crate::{SessionState, WorkspaceState};

/// A point in an agent's life a script can wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitFor {
    /// Its workspace is made (its directory exists).
    Workspace,
    /// Its program runs: any state but starting and dead.
    Up,
    Running,
    Idle,
    /// A dialog holds it.
    Prompt,
    Dead,
}

/// Where an agent stands against what is awaited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reached {
    Yes,
    NotYet,
    /// It never will: why.
    Never(String),
}

impl WaitFor {
    pub const ALL: [WaitFor; 6] = [Self::Workspace, Self::Up, Self::Running, Self::Idle, Self::Prompt, Self::Dead];

    /// Its name, as `--for` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Workspace => "workspace",
            Self::Up => "up",
            Self::Running => "running",
            Self::Idle => "idle",
            Self::Prompt => "prompt",
            Self::Dead => "dead",
        }
    }

    /// Whether an agent in `state`, with its workspace in `workspace` (none: gone), has reached
    /// it. A dead agent reaches nothing else again (a resume is a new start: wait again); an
    /// agent whose workspace cannot be made dies.
    pub fn reached(self, state: &SessionState, workspace: Option<&WorkspaceState>) -> Reached {
        let made = workspace.is_some_and(WorkspaceState::is_made);
        let now = match self {
            Self::Workspace => made || state.is_up(),
            Self::Up => state.is_up(),
            Self::Running => matches!(state, SessionState::Running),
            Self::Idle => matches!(state, SessionState::Idle),
            Self::Prompt => matches!(state, SessionState::Prompt { .. }),
            Self::Dead => state.is_dead(),
        };
        if now {
            return Reached::Yes;
        }
        if state.is_dead() {
            return Reached::Never(format!("it is {}", state.label()));
        }
        Reached::NotYet
    }
}

impl std::str::FromStr for WaitFor {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| format!("cannot wait for {s:?}: one of {}", Self::ALL.map(Self::name).join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DeathReason, PromptKind};

    #[test]
    fn each_point_is_reached_in_its_state_and_never_once_dead() {
        let ready = WorkspaceState::Ready;
        assert_eq!(WaitFor::Idle.reached(&SessionState::Idle, Some(&ready)), Reached::Yes);
        assert_eq!(WaitFor::Idle.reached(&SessionState::Running, Some(&ready)), Reached::NotYet);
        assert_eq!(WaitFor::Up.reached(&SessionState::Prompt { kind: PromptKind::Permission }, None), Reached::Yes);
        assert_eq!(
            WaitFor::Workspace.reached(&SessionState::Starting, Some(&WorkspaceState::Creating)),
            Reached::NotYet
        );
        assert_eq!(WaitFor::Workspace.reached(&SessionState::Starting, Some(&ready)), Reached::Yes);
        let dead = SessionState::Dead { reason: DeathReason::Completed };
        assert_eq!(WaitFor::Dead.reached(&dead, None), Reached::Yes);
        assert!(matches!(WaitFor::Idle.reached(&dead, None), Reached::Never(_)));
        for w in WaitFor::ALL {
            assert_eq!(w.name().parse(), Ok(w));
        }
        assert!("soon".parse::<WaitFor>().is_err());
    }
}
