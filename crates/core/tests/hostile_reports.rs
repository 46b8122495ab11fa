//! What agents report comes from outside: hook payloads, notify arguments, log lines, screens
//! and permission rules are read without ever panicking, whatever they hold, and what is kept of
//! them stays bounded.

use bosun_core::driver::claude::{self, HookPayload};
use bosun_core::driver::codex;
use bosun_core::driver::dialog::{self, DialogAnswer};
use bosun_core::driver::opencode::{self, OpencodeReport};
use bosun_core::PermissionRule;
use proptest::prelude::*;

/// Text with the characters that matter to these readers over-represented.
fn hostile() -> impl Strategy<Value = String> {
    let pieces = prop::collection::vec(
        prop_oneof![
            any::<String>(),
            Just("{".to_owned()),
            Just("}".to_owned()),
            Just("\"".to_owned()),
            Just("\\".to_owned()),
            Just("\n".to_owned()),
            Just("❯ 1. ".to_owned()),
            Just("› 2. Yes".to_owned()),
            Just(". ".to_owned()),
            Just("*".to_owned()),
            Just("(".to_owned()),
            Just(")".to_owned()),
            Just("Would you like to".to_owned()),
            Just("\"tool_input\":".to_owned()),
            Just("\"last_assistant_message\":".to_owned()),
            Just("é".to_owned()),
        ],
        0..40,
    );
    pieces.prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn readers_never_panic(text in hostile(), n in 0u8..12) {
        let payload = HookPayload::parse(&text, "PermissionRequest");
        let _ = claude::hook_observation(&payload);
        let denied = HookPayload::parse(&text, "PermissionDenied");
        prop_assert!(claude::refusal(&denied).is_none_or(|r| r.reason.len() <= 4_000));
        prop_assert!(payload.said().is_none_or(|s| s.len() <= 4_000));
        prop_assert!(payload.asks.as_ref().is_none_or(|s| s.len() <= 500));
        let _ = claude::log_observation(&text);
        let _ = claude::screen_observation(&text);
        let _ = claude::error_from_text(&text);
        let _ = codex::log_observation(&text);
        let _ = codex::log_said(&text);
        let _ = codex::notify_observation(&text, Some("main"));
        let _ = codex::screen_observation(&text);
        let report = OpencodeReport::parse(&text, &text);
        let _ = opencode::observation(&report, n % 2 == 0);
        prop_assert!(report.event.len() <= 100 && report.asks.as_ref().is_none_or(|s| s.len() <= 500));
        prop_assert!(report.session.as_deref().is_none_or(opencode::is_session_id));
        let _ = opencode::screen_observation(&text);
        if let Some(menu) = dialog::menu(&text) {
            prop_assert!(menu.options.len() >= 2 && menu.selected.is_none_or(|s| s < menu.options.len()));
            let wants = [DialogAnswer::Allow, DialogAnswer::Deny, DialogAnswer::Option(n.clamp(1, 9))];
            let wants = wants.map(|answer| dialog::Want::Person { answer });
            for want in wants.into_iter().chain([dialog::Want::Trust]) {
                let Ok(to) = menu.find(want) else { continue };
                prop_assert!(to < menu.options.len());
                // Nothing but an option's number, Enter on the option, or arrows towards it.
                match menu.step(to, true) {
                    Some(dialog::Step::Pick(keys)) => prop_assert!(
                        keys == [bosun_core::TermKey::Enter]
                            || matches!(&keys[..], [bosun_core::TermKey::Text(t)] if t.len() == 1 && t != "0")
                    ),
                    Some(dialog::Step::Move(keys)) => prop_assert!(keys.iter().all(|k| matches!(k, bosun_core::TermKey::Up | bosun_core::TermKey::Down))),
                    None => {}
                }
            }
        }
        if let Ok(rule) = text.parse::<PermissionRule>() {
            let _ = rule.covers("Bash", Some(&text));
        }
    }

    #[test]
    fn a_hook_payload_built_from_json_keeps_its_fields_bounded(
        message in "\\PC{0,9000}", command in "\\PC{0,9000}",
    ) {
        let raw = serde_json::json!({
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": { "command": command },
            "last_assistant_message": message,
            "reason": message,
            "permission_mode": command,
        })
        .to_string();
        let p = HookPayload::parse(&raw, "x");
        prop_assert!(p.reason.as_ref().is_none_or(|s| s.len() <= 4_000));
        prop_assert!(p.permission_mode.as_ref().is_none_or(|s| s.len() <= 100));
        prop_assert!(p.mode().is_none_or(|m| m.label().len() <= 40 && !m.label().contains(char::is_control)));
        prop_assert!(p.said().is_none_or(|s| s.len() <= 4_000));
        prop_assert!(p.asks.as_ref().is_none_or(|s| s.len() <= 500));
        prop_assert!(p.subject.as_ref().is_none_or(|s| s.len() <= 4_000));
    }

    #[test]
    fn an_opencode_report_built_from_json_keeps_its_fields_bounded(
        message in "\\PC{0,9000}", session in "\\PC{0,200}",
    ) {
        let raw = serde_json::json!({
            "type": "permission.asked",
            "sessionID": session,
            "request": {"id": message, "permission": message, "patterns": [message]},
            "error": {"name": message, "message": message, "statusCode": 429},
            "status": {"type": message, "message": message},
            "said": message,
        })
        .to_string();
        let r = OpencodeReport::parse(&raw, "permission.asked");
        prop_assert!(r.session.as_deref().is_none_or(|s| opencode::is_session_id(s) && s == session));
        prop_assert!(r.permission.as_ref().is_none_or(|s| s.len() <= 100));
        prop_assert!(r.error.as_ref().is_none_or(|s| s.len() <= 100));
        prop_assert!(r.status.as_ref().is_none_or(|s| s.len() <= 20));
        prop_assert!(r.message.as_ref().is_none_or(|s| s.len() <= 4_000));
        prop_assert!(r.said.as_ref().is_none_or(|s| s.len() <= 4_000));
        prop_assert!(r.asks.as_ref().is_none_or(|s| s.len() <= 500));
        prop_assert!(r.subject.as_ref().is_none_or(|s| s.len() <= 4_000));
    }
}
