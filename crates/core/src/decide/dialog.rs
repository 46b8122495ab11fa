//! Answering the dialog an agent shows, from what its screen says: bosun reads the options,
//! finds the one that gives the answer by its meaning, moves the cursor to it and picks it only
//! once a look shows the cursor there. The folder-trust dialog of a workspace bosun made is
//! answered this way at start (and its going away is checked); a person's `bosun answer` too.
//! A dialog bosun cannot read for sure, or that does not take the answer, is a setup prompt for
//! a person, with its text. A look at the screen during start-up is read here first.

use super::ground::{Cx, Decision};
use super::observe::observed;
use super::session::{live_agent, queue};
use crate::driver::dialog::{self, DialogAnswer, Menu, Step, Want};
use crate::driver::generic::strip_ansi;
use crate::{
    Agent, AgentId, Effect, Event, Observation, PromptKind, Rejection, SessionState, Source, State, Timestamp,
};

/// How many times bosun presses keys in one dialog before it leaves it to a person.
pub const PRESSES_MAX: u32 = 4;
/// How long a picked answer has to take before the dialog still shown counts as not taken.
pub const TAKE_MS: u64 = 2_000;
/// The most of a dialog's text an escalation carries.
const DIALOG_TEXT_MAX: usize = 1_500;

/// The agent's screen during start-up: a start-up dialog is a setup prompt; otherwise look again
/// a little later, a few times, until the agent reports in. `settled`: read once its program
/// had drawn it (keys may follow only such a screen).
pub(super) fn screen(
    state: &State,
    agent: &AgentId,
    text: &str,
    at: Option<Timestamp>,
    settled: bool,
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(a) = state.agents.get(agent).filter(|a| a.state.is_up()) else { return };
    // Read before its state last changed (a slower look finishing after a newer one): stale.
    // A blank screen (a program between clearing it and drawing again) says nothing.
    if at.is_some_and(|t| t < a.state_since) || strip_ansi(text).trim().is_empty() {
        return;
    }
    // Read before bosun's last key in the dialog it answers: it may not show what the key did
    // (a cursor not moved yet would be moved again). The look that key asked for tells.
    let pressed = a.answering.as_ref().and_then(|x| x.pressed_at);
    if at.zip(pressed).is_some_and(|(t, pressed)| t <= pressed) {
        return;
    }
    let Some(crate::driver::Screen { trust, seen }) = a.driver.behaviour().screen(text) else { return };
    // bosun made this folder: it answers the trust dialog with the option that trusts it and
    // goes on, read from the screen, unless its policy says not to; nobody needs to hear of it
    // then. A dialog being answered goes on being answered. Other screens (the API key,
    // sign-in, an approval) are prompts for the policy, and a person.
    if looked(state, a, text, settled, trust, now, d) {
        return;
    }
    // A setup dialog already left to a person keeps what bosun said of it.
    let setup = |s: &SessionState| matches!(s, SessionState::Prompt { kind: crate::PromptKind::Setup });
    if setup(&a.state) && matches!(&seen, Some(Observation::Prompt { kind: crate::PromptKind::Setup, .. })) {
        return;
    }
    match seen {
        Some(obs) => observed(Cx { state, now }, a, Source::Screen, &obs, None, None, d),
        // The dialog the screen alone showed is gone: answered, the agent goes on. One capture
        // may have caught its program redrawing: a settled look tells.
        None if matches!(a.state, SessionState::Prompt { .. }) && a.source == Some(Source::Screen) => {
            if settled {
                observed(Cx { state, now }, a, Source::Screen, &Observation::Working, None, None, d)
            } else {
                d.effect(capture(a));
            }
        }
        None => {}
    }
}

/// A person answers the dialog the agent waits at (see `answer`), and a message, if
/// any, is queued for when it waits for input again.
pub(super) fn person_answers(
    state: &State,
    agent: &AgentId,
    answer: crate::driver::dialog::DialogAnswer,
    message: Option<&str>,
    screen: &str,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let a = live_agent(state, agent)?;
    if let Some(m) = message {
        crate::message_text::check(m, false)?;
    }
    self::answer(a, answer, screen, now, d)?;
    if let Some(m) = message.filter(|m| !m.trim().is_empty()) {
        queue(state, a, m, crate::MessageKind::User, now, d);
    }
    Ok(())
}

/// A person answers the dialog the agent waits at, from `screen` (its screen just before):
/// the option that gives `answer` is picked, by its number or by Enter when the cursor is on it;
/// else the cursor is moved towards it and the next look at the screen goes on.
pub(super) fn answer(
    a: &Agent,
    answer: DialogAnswer,
    screen: &str,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    // An error its client shows as a dialog (Gemini CLI's quota: "Keep trying / Stop") is
    // answered as one.
    let error_dialog = matches!(a.state, SessionState::Error { .. }) && a.driver.behaviour().screen_shows_dialogs();
    if !matches!(a.state, SessionState::Prompt { .. }) && !error_dialog {
        return Err(Rejection::NoDialog { id: a.id.clone(), state: a.state.label() });
    }
    let cannot = |why: String| Rejection::CannotAnswer { id: a.id.clone(), why };
    let menu = a
        .driver
        .behaviour()
        .menu(screen)
        .ok_or_else(|| cannot("no dialog options on the agent's screen: look with `bosun peek`".into()))?;
    let want = Want::Person { answer };
    let to = menu.find(want).map_err(|e| cannot(e.to_string()))?;
    let step = menu.step(to, true).ok_or_else(|| {
        cannot(format!("cannot tell which option is selected ({}): answer it in `bosun attach`", menu.listed()))
    })?;
    press(a, want, &menu, to, step, now, d);
    Ok(())
}

/// A look at the screen of an agent whose dialog bosun is answering (or should answer: the
/// trust dialog of a workspace it made): the next step. Whether the screen was taken. A screen
/// not `settled` (one capture, which may show a frame half drawn) leads to no key and to no
/// giving up: a settled look is asked for, and it decides.
pub(super) fn looked(
    state: &State,
    a: &Agent,
    text: &str,
    settled: bool,
    trust: bool,
    now: Timestamp,
    d: &mut Decision,
) -> bool {
    let answering = match &a.answering {
        Some(answering) => answering.clone(),
        // Not already left to a person (a setup prompt it gave up on).
        None if trust && a.policy.accept_trust && !matches!(a.state, SessionState::Prompt { .. }) => crate::Answering {
            want: Want::Trust,
            presses: 0,
            pressed_at: None,
            picked_at: None,
            menu: String::new(),
            option: String::new(),
        },
        None => return false,
    };
    // One capture may have caught a frame half drawn: a settled read decides. Before any key,
    // at once; after one, a moment later (the program must have read it first).
    if !settled {
        d.effect(if a.answering.is_none() { capture(a) } else { look(a) });
        return true;
    }
    let (want, picked_at) = (answering.want, answering.picked_at);
    // The trust dialog is gone: the agent goes on, and what its screen shows now (the API-key
    // dialog, say) is read as any other screen.
    if want == Want::Trust && !trust {
        return false;
    }
    let menu = a.driver.behaviour().menu(text);
    let unchanged = menu.as_ref().is_some_and(|m| m.listed() == answering.menu);
    // A person's answer is taken once the dialog it was picked in is gone.
    if let (Want::Person { answer }, Some(_), false) = (want, picked_at, unchanged) {
        let option = answering.option.clone();
        d.event(Event::DialogAnswered { id: a.id.clone(), answer, key: None, option, at: now });
        return true;
    }
    let Some(menu) = menu else {
        return match want {
            Want::Trust => give_up(state, a, text, "bosun cannot read its options", now, d),
            // The dialog went while the cursor moved (answered in `bosun attach`, say).
            Want::Person { .. } => false,
        };
    };
    // Picked a moment ago: the program may not have drawn its next screen yet. Picked longer
    // ago and still shown, the key was not taken (typed before the dialog read its keys): the
    // answer is given again, a bounded number of times.
    if picked_at.is_some_and(|t| now.millis_since(t) < TAKE_MS) {
        d.effect(look(a));
        return true;
    }
    if answering.presses >= PRESSES_MAX {
        let why = format!("it still shows after bosun pressed keys {} times", answering.presses);
        return give_up(state, a, text, &why, now, d);
    }
    let by_number = matches!(want, Want::Person { .. });
    let step = menu.find(want).and_then(|to| {
        let step = menu.step(to, by_number).ok_or_else(|| dialog::CannotPick::NoCursor(menu.listed()));
        step.map(|s| (to, s))
    });
    match step {
        Ok((to, step)) => press(a, want, &menu, to, step, now, d),
        Err(why) => return give_up(state, a, text, &why.to_string(), now, d),
    }
    true
}

/// Presses the step's keys, records them, and looks again: to go on when the answer is not
/// picked yet, else to see it taken.
fn press(a: &Agent, want: Want, menu: &Menu, to: usize, step: Step, now: Timestamp, d: &mut Decision) {
    let option = menu.options[to].text.clone();
    let (keys, picked) = match step {
        Step::Pick(keys) => (keys, true),
        Step::Move(keys) => (keys, false),
    };
    d.event(Event::DialogKeys {
        id: a.id.clone(),
        want,
        option,
        menu: menu.listed(),
        keys: keys.clone(),
        picked,
        at: now,
    });
    d.effect(Effect::PressKeys { session: a.session.clone(), keys });
    d.effect(look(a));
}

/// A look at the screen that keys may follow, a moment from now: once its program has drawn it.
pub(super) fn look(a: &Agent) -> Effect {
    let colors = a.driver.behaviour().screen_colors();
    Effect::LookAtScreen { agent: a.id.clone(), session: a.session.clone(), settled: true, colors }
}

/// The same at once: to make sure of what one capture showed.
pub(super) fn capture(a: &Agent) -> Effect {
    Effect::CaptureScreen {
        agent: a.id.clone(),
        session: a.session.clone(),
        colors: a.driver.behaviour().screen_colors(),
    }
}

/// bosun will not answer this dialog: it is a setup prompt, with its text, for the policy or a
/// person.
/// A dialog its hooks reported (a permission) stays that prompt, still waiting for a person;
/// one only the screen shows becomes a setup prompt with its text.
fn give_up(state: &State, a: &Agent, text: &str, why: &str, now: Timestamp, d: &mut Decision) -> bool {
    if a.answering.is_some() {
        d.event(Event::DialogLeft { id: a.id.clone(), why: why.to_owned(), at: now });
    }
    let shown: String = strip_ansi(text).trim().chars().take(DIALOG_TEXT_MAX).collect();
    let asks = format!("a dialog bosun does not answer ({why}): {shown}");
    let obs = Observation::Prompt { kind: PromptKind::Setup, asks: Some(asks) };
    let left = Agent { answering: None, ..a.clone() };
    observed(Cx { state, now }, &left, Source::Screen, &obs, None, None, d);
    true
}
