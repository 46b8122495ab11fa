//! The sessions family: agents' sessions spawned (their files, copies and config first),
//! killed, typed and pressed into; and their screens looked at.

use super::*;

/// How long a resume waits for the agent's transcript to hold its last message.
const HOLD_WAIT: Duration = Duration::from_secs(3);

/// How long after its output changes an agent's screen is looked at: output comes in bursts.
const LOOK_AFTER: Duration = Duration::from_millis(200);

impl Executor {
    /// Spawns, kills, types into and presses keys in sessions.
    pub(super) fn sessions(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::SpawnSession {
                agent,
                session,
                copies,
                cwd,
                env,
                config,
                command,
                files,
                output,
                replace,
                hold,
                inherit,
                backend,
                place,
            } => {
                if let Some(error) = self.before_spawn(&agent, hold.as_ref(), replace, config.as_deref(), &copies, &cwd)
                {
                    return Some(Input::SessionSpawnFailed { agent, error });
                }
                let env = match inherit.as_deref().map(bosun_adapters::secret::read_env).transpose() {
                    Ok(inherited) => with_inherited(inherited.unwrap_or_default(), env, config.as_deref()),
                    Err(e) => return Some(Input::SessionSpawnFailed { agent, error: e.to_string() }),
                };
                // A sandbox or a container reaches the daemon only through its channel.
                let confined = place.is_confined();
                let channel = match confined.then(|| self.channels.open(&agent)).transpose() {
                    Ok(channel) => channel,
                    Err(e) => {
                        let error = format!("cannot open its report channel: {e}");
                        return Some(Input::SessionSpawnFailed { agent, error });
                    }
                };
                let spec = SpawnSpec {
                    session: &session,
                    cwd: &cwd,
                    env: &env,
                    command: &command,
                    output: Some(&output),
                    backend,
                    place: &place,
                    files: &files,
                    channel: channel.as_deref(),
                };
                // A pod's files are written there, by its session host.
                let here: &[_] = if place.files_here() { &files } else { &[] };
                match write_files(here, &output).and_then(|()| self.sessions.spawn(spec)) {
                    Ok(pid) => Input::SessionSpawned { agent, pid },
                    Err(e) => Input::SessionSpawnFailed { agent, error: e.to_string() },
                }
            }
            Effect::KillSession { agent, session } => match self.sessions.kill(&session) {
                Ok(()) => Input::SessionKilled { agent },
                Err(e) => Input::SessionKillFailed { agent, error: e.to_string() },
            },
            Effect::SendText { message, session, text } => match self.sessions.send_text(&session, &text) {
                Ok(()) => Input::TextDelivered { message },
                Err(e) => Input::TextFailed { message, error: e.to_string() },
            },
            Effect::PressKeys { session, keys } => {
                if let Err(e) = self.sessions.press(&session, &keys) {
                    tracing::warn!(%session, "cannot press {keys:?}: {e}");
                }
                return None;
            }
            Effect::PressEnter { session } => {
                if let Err(e) = self.sessions.press_enter(&session) {
                    tracing::warn!(%session, "cannot press Enter: {e}");
                }
                return None;
            }
            // Another family's: `run` routes none here.
            _ => return None,
        })
    }

    /// Looks at agents' screens.
    pub(super) fn screens(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::LookAtScreen { agent, session, settled, colors } => {
                // One look of its kind for every request made while it waits.
                let key = (agent, settled);
                if !self.looking.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone()) {
                    return None;
                }
                std::thread::sleep(LOOK_AFTER);
                self.looking.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
                let (agent, at) = (key.0, Some(crate::engine::now()));
                let text = if settled {
                    settled_screen(self.sessions.as_ref(), &session, colors)
                } else {
                    self.sessions.capture(&session, colors)
                };
                match text {
                    Ok(text) => Input::Screen { agent, text, at, settled },
                    Err(_) => return None,
                }
            }
            Effect::CaptureScreen { agent, session, colors } => {
                match (crate::engine::now(), settled_screen(self.sessions.as_ref(), &session, colors)) {
                    (at, Ok(text)) => Input::Screen { agent, text, at: Some(at), settled: true },
                    (_, Err(e)) => {
                        tracing::debug!(%session, "cannot read the screen: {e}");
                        return None;
                    }
                }
            }
            // Another family's: `run` routes none here.
            _ => return None,
        })
    }

    /// What comes before a spawn: the transcript `hold` names holding its last message (waited
    /// for, a little), the session it `replace`s ended, its own config made, then the `copies`
    /// (a fork's conversation goes into that config). Why the agent cannot start, if it cannot.
    fn before_spawn(
        &self,
        agent: &AgentId,
        hold: Option<&(PathBuf, String)>,
        replace: Option<bosun_core::SessionName>,
        config: Option<&bosun_core::OwnConfig>,
        copies: &[(PathBuf, PathBuf)],
        cwd: &Path,
    ) -> Option<String> {
        if let Some((transcript, text)) = hold {
            if !bosun_adapters::transcript::holds_within(transcript, text, HOLD_WAIT) {
                tracing::warn!(%agent, "a transcript does not hold its last message yet; starting anyway");
            }
        }
        if let Some(old) = replace {
            if let Err(e) = self.sessions.kill(&old) {
                tracing::warn!(%old, "cannot end the old session: {e}");
            }
        }
        if let Some(own) = config {
            if let Err(e) = bosun_adapters::own_config::make(own, cwd) {
                return Some(format!("its own config: {e}"));
            }
        }
        copies.iter().find_map(|(from, to)| {
            let copied = self.copies.copy_new(from, to);
            copied.err().map(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
        })
    }
}

/// The variables an agent runs with: those it inherited from its caller, under bosun's `env`;
/// where both name one, its driver may merge them (opencode's `OPENCODE_CONFIG_CONTENT`: the
/// caller's config, bosun's plugin added), else bosun's stands.
fn with_inherited(
    mut inherited: BTreeMap<String, String>,
    env: BTreeMap<String, String>,
    config: Option<&bosun_core::OwnConfig>,
) -> BTreeMap<String, String> {
    for (key, ours) in env {
        let merged = match (inherited.get(&key), config) {
            (Some(theirs), Some(own)) => own.driver.behaviour().merge_inherited(&key, theirs, &ours),
            _ => None,
        };
        inherited.insert(key, merged.unwrap_or(ours));
    }
    inherited
}
