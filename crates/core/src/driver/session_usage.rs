//! The usage each client records of its model calls in its session, read line by line: Claude
//! Code's transcript (an `assistant` line's `message.usage`, repeated on every line of a message
//! of several blocks, under one `message.id`), Codex's rollout (a `token_usage_record` line per
//! response, its `usage.input_tokens` counting the cached ones too), Gemini CLI's session file (a
//! `gemini` message's `tokens`, the message written again once they are known), pi's session file
//! (an assistant message's `usage`), the file bosun's plugin keeps of an opencode session (a
//! `usage` line per count of an assistant message's `tokens`).

use serde::Deserialize;

use crate::usage::Used;

#[derive(Deserialize)]
struct ClaudeLine {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    message: Option<ClaudeMessage>,
}

#[derive(Deserialize)]
struct ClaudeMessage {
    id: Option<String>,
    model: Option<String>,
    usage: Option<ClaudeUsage>,
}

#[derive(Deserialize)]
struct ClaudeUsage {
    input_tokens: Option<i128>,
    output_tokens: Option<i128>,
    #[serde(default)]
    cache_creation_input_tokens: i128,
    #[serde(default)]
    cache_read_input_tokens: i128,
    cache_creation: Option<ClaudeCacheWrites>,
}

/// Of the tokens written to the cache, those written for an hour (priced apart).
#[derive(Deserialize)]
struct ClaudeCacheWrites {
    #[serde(default)]
    ephemeral_1h_input_tokens: u64,
}

/// The usage a line of Claude Code's transcript records: none for other lines, and for its own
/// stand-ins of failed calls (model `<synthetic>`, no tokens).
pub fn claude(line: &str) -> Option<Used> {
    let l: ClaudeLine = serde_json::from_str(line).ok()?;
    let m = l.message.filter(|_| l.kind == "assistant")?;
    let u = m.usage?;
    let counts =
        [u.input_tokens, u.output_tokens, Some(u.cache_creation_input_tokens), Some(u.cache_read_input_tokens)];
    let mut used = Used::read(m.id.as_deref()?, m.model.as_deref(), counts)?.at(l.timestamp.as_deref());
    used.cache_write_1h = u.cache_creation.map_or(0, |c| c.ephemeral_1h_input_tokens.min(used.tokens.cache_write));
    Some(used).filter(|used| !used.tokens.is_zero())
}

#[derive(Deserialize)]
struct CodexLine {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    payload: Option<CodexRecord>,
}

#[derive(Deserialize)]
struct CodexRecord {
    response_id: Option<String>,
    usage: Option<CodexUsage>,
}

#[derive(Deserialize)]
struct CodexUsage {
    input_tokens: Option<i128>,
    output_tokens: Option<i128>,
    #[serde(default)]
    cached_input_tokens: i128,
    #[serde(default)]
    cache_write_input_tokens: i128,
}

/// The usage a line of Codex's rollout records (its `token_usage_record`; the model is not in
/// it): the cached tokens out of its input count.
pub fn codex(line: &str) -> Option<Used> {
    let l: CodexLine = serde_json::from_str(line).ok()?;
    let r = l.payload.filter(|_| l.kind == "token_usage_record")?;
    let u = r.usage?;
    let fresh = u.input_tokens.map(|all| all - u.cached_input_tokens - u.cache_write_input_tokens);
    let counts = [fresh, u.output_tokens, Some(u.cache_write_input_tokens), Some(u.cached_input_tokens)];
    Some(Used::read(r.response_id.as_deref()?, None, counts)?.at(l.timestamp.as_deref()))
}

#[derive(Deserialize)]
struct CodexContextLine {
    #[serde(rename = "type")]
    kind: String,
    payload: Option<CodexContext>,
}

#[derive(Deserialize)]
struct CodexContext {
    model: Option<String>,
}

/// The model a line of Codex's rollout says its turn asks (its `turn_context`): its usage
/// records do not name it.
pub fn codex_model(line: &str) -> Option<String> {
    let l: CodexContextLine = serde_json::from_str(line).ok()?;
    let model = l.payload.filter(|_| l.kind == "turn_context")?.model?;
    Some(model).filter(|m| !m.is_empty() && m.len() <= 200)
}

#[derive(Deserialize)]
struct GeminiLine {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    model: Option<String>,
    tokens: Option<GeminiTokens>,
}

#[derive(Deserialize)]
struct GeminiTokens {
    input: Option<i128>,
    output: Option<i128>,
    #[serde(default)]
    cached: i128,
    #[serde(default)]
    thoughts: i128,
}

/// The usage a line of Gemini CLI's session file records: its input counts the cached tokens
/// too, its thoughts are output the model was paid for.
pub fn gemini(line: &str) -> Option<Used> {
    let l: GeminiLine = serde_json::from_str(line).ok()?;
    let t = l.tokens.filter(|_| l.kind.as_deref() == Some("gemini"))?;
    let counts = [t.input.map(|all| all - t.cached), t.output.map(|o| o + t.thoughts), Some(0), Some(t.cached)];
    let used = Used::read(l.id.as_deref()?, l.model.as_deref(), counts)?.at(l.timestamp.as_deref());
    Some(used).filter(|used| !used.tokens.is_zero())
}

#[derive(Deserialize)]
struct PiLine {
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    message: Option<PiMessage>,
}

#[derive(Deserialize)]
struct PiMessage {
    role: Option<String>,
    model: Option<String>,
    #[serde(rename = "responseId")]
    response_id: Option<String>,
    usage: Option<PiUsage>,
}

#[derive(Deserialize)]
struct PiUsage {
    input: Option<i128>,
    output: Option<i128>,
    #[serde(default, rename = "cacheWrite")]
    cache_write: i128,
    #[serde(default, rename = "cacheRead")]
    cache_read: i128,
}

/// The usage a line of pi's session file records: an assistant message's, by the provider's
/// response id (else the entry's).
pub fn pi(line: &str) -> Option<Used> {
    let l: PiLine = serde_json::from_str(line).ok()?;
    let m = l.message.filter(|m| l.kind == "message" && m.role.as_deref() == Some("assistant"))?;
    let u = m.usage?;
    let counts = [u.input, u.output, Some(u.cache_write), Some(u.cache_read)];
    let response = m.response_id.or(l.id)?;
    let used = Used::read(&response, m.model.as_deref(), counts)?.at(l.timestamp.as_deref());
    Some(used).filter(|used| !used.tokens.is_zero())
}

#[derive(Deserialize)]
struct OpencodeLine {
    at: Option<u64>,
    #[serde(rename = "type")]
    kind: Option<String>,
    message: Option<String>,
    model: Option<String>,
    tokens: Option<OpencodeTokens>,
}

#[derive(Deserialize)]
struct OpencodeTokens {
    input: Option<i128>,
    output: Option<i128>,
    #[serde(default)]
    reasoning: i128,
    #[serde(default)]
    cache: OpencodeCache,
}

#[derive(Default, Deserialize)]
struct OpencodeCache {
    #[serde(default)]
    read: i128,
    #[serde(default)]
    write: i128,
}

/// The usage a line of the file bosun's plugin keeps of an opencode session records: an
/// assistant message's tokens, by its id (one message per model call), its input fresh (opencode
/// takes the cached tokens out), its reasoning output the model was paid for.
pub fn opencode(line: &str) -> Option<Used> {
    let l: OpencodeLine = serde_json::from_str(line).ok()?;
    let t = l.tokens.filter(|_| l.kind.as_deref() == Some("usage"))?;
    let output = t.output.filter(|_| t.reasoning >= 0).map(|o| o + t.reasoning);
    let counts = [t.input, output, Some(t.cache.write), Some(t.cache.read)];
    let mut used = Used::read(l.message.as_deref()?, l.model.as_deref(), counts)?;
    used.at = l.at.map(crate::Timestamp::from_millis);
    Some(used).filter(|used| !used.tokens.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tokens;

    #[test]
    fn claudes_transcript_line_says_its_messages_usage() {
        // Claude Code 2.1.332 against the model server (trimmed).
        let line = r#"{"type":"assistant","message":{"id":"msg_01i1","model":"claude-opus-5-5","content":[{"type":"text","text":"x"}],
            "usage":{"input_tokens":3559,"cache_creation_input_tokens":3558,"cache_read_input_tokens":7116,"output_tokens":6,
            "output_tokens_details":{"thinking_tokens":0},"service_tier":"standard"}}}"#;
        let used = claude(line).expect("usage");
        assert_eq!((used.response.as_str(), used.model.as_deref()), ("msg_01i1", Some("claude-opus-5-5")));
        assert_eq!(used.tokens, Tokens { input: 3559, output: 6, cache_write: 3558, cache_read: 7116 });
        assert_eq!(used.cache_write_1h, 0);
        let hour = r#"{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1,
            "cache_creation_input_tokens":30,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20}}}}"#;
        assert_eq!(claude(hour).expect("usage").cache_write_1h, 20, "the hour's writes, priced apart");
        let more = r#"{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1,
            "cache_creation_input_tokens":3,"cache_creation":{"ephemeral_1h_input_tokens":20}}}}"#;
        assert_eq!(claude(more).expect("usage").cache_write_1h, 3, "never more than were written");
        assert_eq!(
            claude(r#"{"type":"user","message":{"id":"m","usage":{"input_tokens":1,"output_tokens":1}}}"#),
            None
        );
        let synthetic = r#"{"type":"assistant","message":{"id":"m","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}"#;
        assert_eq!(claude(synthetic), None);
        assert_eq!(
            claude(r#"{"type":"assistant","message":{"id":"m","usage":{"input_tokens":-1,"output_tokens":1}}}"#),
            None
        );
        assert_eq!(
            claude(r#"{"type":"assistant","message":{"id":"m","usage":{"input_tokens":1e40,"output_tokens":1}}}"#),
            None
        );
        assert_eq!(claude("not json"), None);
    }

    #[test]
    fn codexs_rollout_record_says_its_responses_usage_its_cached_tokens_apart() {
        // Codex 0.171.0 against the model server (trimmed).
        let line = r#"{"timestamp":"2026-11-28T07:58:43.671Z","type":"token_usage_record","payload":{"thread_id":"t","turn_id":"u",
            "response_id":"resp_01Rw","usage":{"input_tokens":10374,"cached_input_tokens":5187,"cache_write_input_tokens":0,
            "output_tokens":4,"reasoning_output_tokens":0,"total_tokens":10378},"turn_token_usage":{"input_tokens":10374}}}"#;
        let used = codex(line).expect("usage");
        assert_eq!((used.response.as_str(), used.model.as_deref()), ("resp_01Rw", None));
        assert_eq!(used.at, Some(crate::Timestamp::from_millis(1_795_852_723_671)), "when it was recorded");
        assert_eq!(used.tokens, Tokens { input: 5187, output: 4, cache_write: 0, cache_read: 5187 });
        let counted_twice = r#"{"type":"token_usage_record","payload":{"response_id":"r","usage":{"input_tokens":1,"cached_input_tokens":5,"output_tokens":1}}}"#;
        assert_eq!(codex(counted_twice), None, "more cached than input is no count");
        assert_eq!(codex(r#"{"type":"event_msg","payload":{"type":"token_count"}}"#), None);
        let context =
            r#"{"timestamp":"t","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5.5","effort":"high"}}"#;
        assert_eq!(codex_model(context).as_deref(), Some("gpt-5.5"));
        assert_eq!(codex_model(r#"{"type":"turn_context","payload":{"model":""}}"#), None);
        assert_eq!(codex_model(line), None);
    }

    #[test]
    fn gemini_clis_message_says_its_usage_its_cached_tokens_apart_and_its_thoughts_as_output() {
        let line = r#"{"id":"g1","timestamp":"2026-11-28T08:00:00Z","type":"gemini","content":"Done.","model":"gemini-2.5-pro",
            "tokens":{"input":100,"output":7,"cached":40,"thoughts":3,"tool":0,"total":110}}"#;
        let used = gemini(line).expect("usage");
        assert_eq!((used.response.as_str(), used.model.as_deref()), ("g1", Some("gemini-2.5-pro")));
        assert_eq!(used.tokens, Tokens { input: 60, output: 10, cache_write: 0, cache_read: 40 });
        assert_eq!(gemini(r#"{"id":"g2","type":"gemini","content":"x"}"#), None, "its tokens not known yet");
        assert_eq!(gemini(r#"{"id":"u","type":"user","tokens":{"input":1,"output":1}}"#), None);
    }

    #[test]
    fn pis_assistant_message_says_its_usage() {
        // pi 1.6.0 against the model server (trimmed).
        let line = r#"{"type":"message","id":"3453935b","parentId":"7ec7fcb9","message":{"role":"assistant","api":"anthropic-messages",
            "provider":"bosun-fake","model":"claude-sonnet-4-5","usage":{"input":366,"output":18,"cacheRead":732,"cacheWrite":366,
            "totalTokens":1482,"cost":{"total":0}},"stopReason":"toolUse","responseId":"msg_01dn"}}"#;
        let used = pi(line).expect("usage");
        assert_eq!((used.response.as_str(), used.model.as_deref()), ("msg_01dn", Some("claude-sonnet-4-5")));
        assert_eq!(used.tokens, Tokens { input: 366, output: 18, cache_write: 366, cache_read: 732 });
        let user = r#"{"type":"message","id":"u","message":{"role":"user","usage":{"input":1,"output":1}}}"#;
        assert_eq!(pi(user), None);
    }

    #[test]
    fn opencodes_assistant_message_says_its_usage_its_reasoning_as_output() {
        // As bosun's plugin keeps it of opencode 1.18.33 against the model server.
        let line = r#"{"at":1795852723671,"type":"usage","sessionID":"ses_1","message":"msg_d1","model":"claude-sonnet-4-5",
            "tokens":{"input":9,"output":21,"reasoning":2,"cache":{"read":20,"write":10}}}"#;
        let used = opencode(line).expect("usage");
        assert_eq!((used.response.as_str(), used.model.as_deref()), ("msg_d1", Some("claude-sonnet-4-5")));
        assert_eq!(used.at, Some(crate::Timestamp::from_millis(1_795_852_723_671)), "when it was kept");
        assert_eq!(used.tokens, Tokens { input: 9, output: 23, cache_write: 10, cache_read: 20 });
        let report = r#"{"at":1,"type":"session.idle","sessionID":"ses_1","said":"Done."}"#;
        assert_eq!(opencode(report), None, "a report is no usage");
        for bad in [
            r#"{"type":"usage","message":"m","tokens":{"input":-1,"output":1}}"#,
            r#"{"type":"usage","message":"m","tokens":{"input":1,"output":5,"reasoning":-4}}"#,
            r#"{"type":"usage","message":"m","tokens":{"input":1,"output":2000000000}}"#,
            r#"{"type":"usage","message":"m","tokens":{"output":1}}"#,
            r#"{"type":"usage","tokens":{"input":1,"output":1}}"#,
            r#"{"type":"usage","message":"m","tokens":{"input":0,"output":0}}"#,
            r#"{"type":"usage","message":"m","tokens":"many"}"#,
        ] {
            assert_eq!(opencode(bad), None, "{bad}");
        }
    }
}
