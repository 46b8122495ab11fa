//! Dialogs answered by reading them: the trust dialog at start, whatever order its options
//! come in, never with a key chosen without the screen showing where it lands; a person's
//! answer to a dialog that numbers nothing; a dialog bosun cannot read is left to a person.

mod support;

use bosun_core::driver::dialog::{DialogAnswer, Want};
use bosun_core::{AgentId, Effect, Event, Input, Observation, Policy, Source, TermKey};
use support::{claude, Sim};

/// Claude Code 2.1.332's trust dialog (real): "No, exit" first and selected, no numbers.
const TRUST_NEW: &str = " Accessing workspace:\n\n /tmp/w\n\n Quick safety check: Is this a project you created or one you trust?\n\n ❯ No, exit\n   Yes, I trust this folder\n\n Enter to confirm · Esc to cancel\n";

fn moved(screen: &str) -> String {
    screen.replace(" ❯ No, exit", "   No, exit").replace("   Yes, I trust", " ❯ Yes, I trust")
}

fn steps(s: &[&str]) -> bosun_core::Chain {
    bosun_core::Chain(s.iter().map(|s| s.parse::<bosun_core::Step>().unwrap()).collect())
}

fn starting(sim: &mut Sim, policy: Policy) -> AgentId {
    let (a, w) = sim.start_with(claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    a
}

/// A settled look at the screen (two captures agreed): the only kind keys may follow.
fn screen(sim: &mut Sim, a: &AgentId, text: &str) -> Vec<Effect> {
    sim.ok(Input::Screen { agent: a.clone(), text: text.into(), at: None, settled: true })
}

/// One capture, as a look that only tells the state takes: maybe of a frame half drawn.
fn glance(sim: &mut Sim, a: &AgentId, text: &str) -> Vec<Effect> {
    sim.ok(Input::Screen { agent: a.clone(), text: text.into(), at: None, settled: false })
}

fn pressed(effects: &[Effect]) -> Vec<Vec<TermKey>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::PressKeys { keys, .. } => Some(keys.clone()),
            Effect::PressEnter { .. } => Some(vec![TermKey::Enter]),
            _ => None,
        })
        .collect()
}

/// Whether it looks again, settled, a moment later: the look that decides the next key.
fn looks_again(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::LookAtScreen { settled: true, .. }))
}

/// Whether it reads the screen again, settled, at once.
fn reads_at_once(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::CaptureScreen { .. }))
}

#[test]
fn the_new_trust_dialog_is_answered_by_moving_to_yes_and_enter_only_once_the_cursor_is_there() {
    let mut sim = Sim::new();
    let a = starting(&mut sim, Policy::default());
    let effects = screen(&mut sim, &a, TRUST_NEW);
    assert_eq!(pressed(&effects), vec![vec![TermKey::Down]], "never Enter on \"No, exit\": {effects:?}");
    assert!(looks_again(&effects), "it looks before it picks");
    // The look shows the cursor on "Yes, I trust this folder": now Enter.
    let effects = screen(&mut sim, &a, &moved(TRUST_NEW));
    assert_eq!(pressed(&effects), vec![vec![TermKey::Enter]]);
    assert!(looks_again(&effects), "it looks to see the dialog gone");
    // The dialog gone, nothing more is pressed and nobody is asked.
    let effects = screen(&mut sim, &a, "╭──╮\n│ ❯ │\n╰──╯");
    assert!(pressed(&effects).is_empty(), "{effects:?}");
    let keys: Vec<(String, bool)> = sim
        .log
        .iter()
        .filter_map(|e| match e {
            Event::DialogKeys { option, picked, want: Want::Trust, .. } => Some((option.clone(), *picked)),
            _ => None,
        })
        .collect();
    let yes = "Yes, I trust this folder".to_owned();
    assert_eq!(keys, vec![(yes.clone(), false), (yes, true)], "every press is recorded");
    sim.see(&a, Source::Hook, Observation::Started);
    assert_eq!(sim.state.agents[&a].state.label(), "idle");
    assert_eq!(sim.state.open_escalations().count(), 0);
}

#[test]
fn a_trust_dialog_whose_yes_is_selected_gets_enter_whatever_its_numbering() {
    for screen_text in [
        "Quick safety check: Is this a project you created or one you trust?\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n",
        "Do you trust the files in this folder?\n\n ❯ Yes, proceed\n   No, exit\n\n Enter to confirm · Esc to cancel",
        "Quick safety check: Is this a project you created or one you trust?\n   No, exit\n ❯ Yes, I trust this folder\n",
    ] {
        let mut sim = Sim::new();
        let a = starting(&mut sim, Policy::default());
        let effects = screen(&mut sim, &a, screen_text);
        assert_eq!(pressed(&effects), vec![vec![TermKey::Enter]], "{screen_text}");
    }
}

#[test]
fn a_trust_dialog_bosun_cannot_read_for_sure_is_left_to_a_person_with_its_text() {
    let unknown = [
        "Quick safety check: Is this a project you created or one you trust?\n ❯ Leave\n   Stay here\n",
        "Quick safety check: Is this a project you created or one you trust?\n ❯ Yes, once\n   Yes, always\n",
        "Quick safety check: Is this a project you created or one you trust?\n   No, exit\n   Yes, I trust this folder\n",
        "Do you trust the files in this folder?",
    ];
    for text in unknown {
        let mut sim = Sim::new();
        let policy = Policy { on_prompt: steps(&["escalate"]), ..Policy::default() };
        let a = starting(&mut sim, policy);
        let effects = screen(&mut sim, &a, text);
        assert!(pressed(&effects).is_empty(), "no key without reading the options: {text} {effects:?}");
        assert_eq!(sim.state.agents[&a].state.label(), "prompt(setup)", "{text}");
        let reason = sim.state.open_escalations().next().map(|e| e.reason.clone()).unwrap_or_default();
        assert!(reason.contains("a dialog bosun does not answer") && reason.contains("trust"), "{reason}");
        // Looked at again, it is not answered behind the person's back, nor escalated again.
        let effects = screen(&mut sim, &a, text);
        assert!(pressed(&effects).is_empty(), "{effects:?}");
        assert_eq!(sim.state.open_escalations().count(), 1);
    }
}

#[test]
fn a_trust_dialog_that_does_not_go_away_is_pressed_a_bounded_number_of_times_then_left_to_a_person() {
    let mut sim = Sim::new();
    let policy = Policy { on_prompt: steps(&["escalate"]), ..Policy::default() };
    let a = starting(&mut sim, policy);
    let stuck = moved(TRUST_NEW);
    let mut presses = 0;
    for _ in 0..40 {
        let effects = screen(&mut sim, &a, &stuck);
        presses += pressed(&effects).len();
        if sim.state.agents[&a].state.label() == "prompt(setup)" {
            break;
        }
        // A picked answer gets its time to be taken before it is pressed again.
        sim.advance(500);
    }
    assert_eq!(presses as u32, bosun_core::DIALOG_PRESSES_MAX, "bounded");
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(setup)");
    let reason = sim.state.open_escalations().next().map(|e| e.reason.clone()).unwrap_or_default();
    assert!(reason.contains("still shows after bosun pressed keys"), "{reason}");
}

#[test]
fn with_accept_trust_off_the_trust_dialog_is_a_setup_prompt_and_no_key_is_pressed() {
    let mut sim = Sim::new();
    let policy = Policy { accept_trust: false, on_prompt: steps(&["escalate"]), ..Policy::default() };
    let a = starting(&mut sim, policy);
    let effects = screen(&mut sim, &a, TRUST_NEW);
    assert!(pressed(&effects).is_empty(), "{effects:?}");
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(setup)");
    // A person answers it: allow moves to the option that says yes, then picks it once seen there.
    let answer =
        Input::Answer { agent: a.clone(), answer: DialogAnswer::Allow, message: None, screen: TRUST_NEW.into() };
    let effects = sim.ok(answer);
    assert_eq!(pressed(&effects), vec![vec![TermKey::Down]]);
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(setup)", "not answered until picked");
    let effects = screen(&mut sim, &a, &moved(TRUST_NEW));
    assert_eq!(pressed(&effects), vec![vec![TermKey::Enter]]);
    assert!(looks_again(&effects), "to see it taken");
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(setup)", "not taken until the dialog is gone");
    screen(&mut sim, &a, "╭──╮\n│ ❯ │\n╰──╯");
    assert!(sim
        .log
        .iter()
        .any(|e| matches!(e, Event::DialogAnswered { option, .. } if option == "Yes, I trust this folder")));
    assert_eq!(sim.state.agents[&a].state.label(), "running");
}

#[test]
fn a_numbered_dialog_is_answered_by_its_number_read_from_the_screen() {
    let mut sim = Sim::new();
    let a = starting(&mut sim, Policy::default());
    sim.see(&a, Source::Hook, Observation::Prompt { kind: bosun_core::PromptKind::Permission, asks: None });
    let dialog = " Do you want to proceed?\n   1. No, and tell Claude what to do differently (esc)\n ❯ 2. Yes\n";
    let answer = Input::Answer { agent: a.clone(), answer: DialogAnswer::Allow, message: None, screen: dialog.into() };
    let effects = sim.ok(answer);
    assert_eq!(pressed(&effects), vec![vec![TermKey::Text("2".into())]], "the option that says yes, wherever it is");
    // The program had not read its keys yet: the dialog still shows after a while.
    sim.advance(500);
    assert!(pressed(&screen(&mut sim, &a, dialog)).is_empty(), "given its time to be taken first");
    sim.advance(2_000);
    let effects = screen(&mut sim, &a, dialog);
    assert_eq!(pressed(&effects), vec![vec![TermKey::Text("2".into())]], "given again");
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(permission)", "not taken yet");
    // Its hooks say the tool runs: taken.
    sim.see(&a, Source::Hook, Observation::Working);
    assert_eq!(sim.state.agents[&a].answering, None);
    // A dialog that never takes it is left to a person, after a bounded number of tries.
    sim.see(&a, Source::Hook, Observation::Prompt { kind: bosun_core::PromptKind::Permission, asks: None });
    let answer = Input::Answer { agent: a.clone(), answer: DialogAnswer::Allow, message: None, screen: dialog.into() };
    let mut presses = pressed(&sim.ok(answer)).len();
    for _ in 0..10 {
        sim.advance(2_500);
        presses += pressed(&screen(&mut sim, &a, dialog)).len();
    }
    assert_eq!(presses as u32, bosun_core::DIALOG_PRESSES_MAX);
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(permission)", "still waiting for a person");
    assert_eq!(sim.state.agents[&a].answering, None, "and bosun no longer answering it");
    assert!(sim.log.iter().any(|e| matches!(e, Event::DialogLeft { why, .. } if why.contains("still shows"))));
}

#[test]
fn a_dialog_caught_half_drawn_in_one_capture_gets_no_key_and_is_not_given_up_a_settled_look_decides() {
    let mut sim = Sim::new();
    let policy = Policy { on_prompt: steps(&["escalate"]), ..Policy::default() };
    let a = starting(&mut sim, policy);
    // Its first option drawn, not the rest: read so, it has no option that trusts.
    let half = " Accessing workspace:\n\n Quick safety check: Is this a project you created or one you trust?\n\n ❯ No, exit\n";
    let effects = glance(&mut sim, &a, half);
    assert!(pressed(&effects).is_empty(), "{effects:?}");
    assert!(reads_at_once(&effects), "a settled read is asked for, at once before any key: {effects:?}");
    // Settled, the whole dialog: the cursor moves to yes.
    let effects = screen(&mut sim, &a, TRUST_NEW);
    assert_eq!(pressed(&effects), vec![vec![TermKey::Down]]);
    // The cursor on its way, one capture catches a frame between: nothing is pressed, nothing given up.
    for frame in [half.to_owned(), moved(TRUST_NEW)] {
        let effects = glance(&mut sim, &a, &frame);
        assert!(pressed(&effects).is_empty(), "only a settled look leads to keys: {frame} {effects:?}");
        assert!(looks_again(&effects), "{effects:?}");
    }
    let effects = screen(&mut sim, &a, &moved(TRUST_NEW));
    assert_eq!(pressed(&effects), vec![vec![TermKey::Enter]]);
    assert!(!sim.log.iter().any(|e| matches!(e, Event::DialogLeft { .. })), "never given up");
    assert_eq!(sim.state.open_escalations().count(), 0);
    assert_ne!(sim.state.agents[&a].state.label(), "prompt(setup)");
}

#[test]
fn output_of_a_client_whose_dialogs_only_its_screen_shows_is_looked_at_in_one_capture() {
    let mut sim = Sim::new();
    let spec = bosun_core::AgentSpec {
        command: vec!["codex".into()],
        driver: bosun_core::driver::Driver::Codex,
        ..support::spec(2)
    };
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    let effects =
        sim.ok(Input::LogLines { agent: a.clone(), session_log: false, lines: vec!["Would you like".into()] });
    let looks: Vec<bool> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::LookAtScreen { settled, .. } => Some(*settled),
            _ => None,
        })
        .collect();
    assert_eq!(looks, vec![false], "it only tells the state: {effects:?}");
    // The approval it shows, read in that one capture, is the prompt at once.
    let approval = "Would you like to run the following command?\n$ touch f\n› 1. Yes, proceed (y)\n  2. No (esc)\n";
    glance(&mut sim, &a, approval);
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(permission)");
}

#[test]
fn a_dialog_only_the_screen_showed_is_gone_only_when_a_settled_look_says_so() {
    let mut sim = Sim::new();
    let spec = bosun_core::AgentSpec {
        command: vec!["codex".into()],
        driver: bosun_core::driver::Driver::Codex,
        ..support::spec(2)
    };
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    let approval = "Would you like to run the following command?\n$ touch f\n› 1. Yes, proceed (y)\n  2. No (esc)\n";
    glance(&mut sim, &a, approval);
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(permission)");
    // One capture while Codex redraws: half its frame, no dialog in it.
    let effects = glance(&mut sim, &a, "› 1. Yes, proceed (y)\n");
    assert_eq!(sim.state.agents[&a].state.label(), "prompt(permission)", "a frame half drawn clears no dialog");
    assert!(reads_at_once(&effects), "a settled read tells: {effects:?}");
    // Settled, the dialog is gone: answered, the agent goes on.
    screen(&mut sim, &a, "› ");
    assert_eq!(sim.state.agents[&a].state.label(), "running");
}

#[test]
fn a_screen_read_before_bosuns_last_key_in_a_dialog_leads_to_no_key() {
    let mut sim = Sim::new();
    let a = starting(&mut sim, Policy::default());
    let before = sim.clock;
    sim.advance(10);
    let effects = screen(&mut sim, &a, TRUST_NEW);
    assert_eq!(pressed(&effects), vec![vec![TermKey::Down]]);
    // A settled read begun before Down was pressed ends after it: it still shows the cursor on
    // "No, exit", which moving again would overshoot.
    sim.advance(100);
    let stale = Input::Screen { agent: a.clone(), text: TRUST_NEW.into(), at: Some(before), settled: true };
    let effects = sim.ok(stale);
    assert!(pressed(&effects).is_empty(), "{effects:?}");
    // The read the key asked for shows where the cursor went: now Enter.
    let fresh = Input::Screen { agent: a.clone(), text: moved(TRUST_NEW), at: Some(sim.clock), settled: true };
    assert_eq!(pressed(&sim.ok(fresh)), vec![vec![TermKey::Enter]]);
}
