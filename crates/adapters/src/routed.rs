//! `RoutedSessions`: the daemon's one `Sessions`. A new session starts where its `Place` says,
//! by that place's launcher (`crate::launch`). Any other call goes to the session host when the
//! session's host socket (or, for a TCP host, its token) is there, else to tmux. Listing lists
//! both.

use std::sync::Arc;

use bosun_core::{SessionName, SessionSeen, TermKey};
use bosun_wire::StateDir;

use crate::launch::Launchers;
use crate::{AdapterError, HostSessions, Sessions, SpawnSpec};

pub struct RoutedSessions {
    tmux: Arc<dyn Sessions>,
    host: Arc<HostSessions>,
    /// Where a new session starts: one launcher per place.
    launchers: Launchers,
}

impl RoutedSessions {
    /// `dirs` is bosun's state directory, which a sandbox hides but for the agent's report
    /// channel, shown where its hooks look for the daemon's socket and spool.
    pub fn new(tmux: Arc<dyn Sessions>, host: Arc<HostSessions>, dirs: StateDir) -> Self {
        Self { launchers: Launchers::new(tmux.clone(), host.clone(), dirs), tmux, host }
    }

    fn of(&self, session: &SessionName) -> &dyn Sessions {
        if self.host.owns(session) {
            &*self.host
        } else {
            &*self.tmux
        }
    }
}

impl Sessions for RoutedSessions {
    fn check_available(&self) -> Result<(), AdapterError> {
        self.tmux.check_available()
    }
    fn spawn(&self, spec: SpawnSpec<'_>) -> Result<Option<u32>, AdapterError> {
        self.launchers.launch(spec)
    }
    fn send_text(&self, session: &SessionName, text: &str) -> Result<(), AdapterError> {
        self.of(session).send_text(session, text)
    }
    fn press_enter(&self, session: &SessionName) -> Result<(), AdapterError> {
        self.of(session).press_enter(session)
    }
    fn press(&self, session: &SessionName, keys: &[TermKey]) -> Result<(), AdapterError> {
        self.of(session).press(session, keys)
    }
    fn size(&self, session: &SessionName) -> Result<(u16, u16), AdapterError> {
        self.of(session).size(session)
    }
    fn resize(&self, session: &SessionName, cols: u16, rows: u16) -> Result<(), AdapterError> {
        self.of(session).resize(session, cols, rows)
    }
    fn history(&self, session: &SessionName, colors: bool, lines: u32) -> Result<String, AdapterError> {
        self.of(session).history(session, colors, lines)
    }
    fn list(&self) -> Result<Vec<SessionSeen>, AdapterError> {
        let mut all = self.host.list()?;
        all.extend(self.tmux.list()?);
        Ok(all)
    }
    fn kill(&self, session: &SessionName) -> Result<(), AdapterError> {
        self.of(session).kill(session)
    }
    fn attach_command(&self, session: &SessionName) -> Vec<String> {
        self.of(session).attach_command(session)
    }
}
