// bosun's plugin for opencode, written by bosun for one agent at each launch (see opencode.rs):
// it tells bosun what the agent's session does (`bosun hook report opencode …`, one report at a
// time, in the order opencode told it), keeps each report bosun heard in a file per session
// (bosun resumes that session by the file's name) with the tokens of each model call, and
// answers a permission request with what bosun's permission policy says, when it says something:
// the report prints `{"reply": "once"}`, or `{"reply": "reject", "message": …}`, whose message
// the model is told.
// HOOK and SESSIONS are given above this text.
import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";

const TEXT_MAX = 4000;
const OUT_MAX = 65536;
const SESSION_ID = /^[A-Za-z0-9_]{1,100}$/;

const head = (s) => (typeof s === "string" ? s.slice(0, TEXT_MAX) : undefined);
const tail = (s) => (typeof s === "string" ? s.slice(-TEXT_MAX) : undefined);

/** Runs the report command for `event`, the payload on its stdin; what it printed. */
function send(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn("/bin/sh", ["-c", `${HOOK} ${event}`], { stdio: ["pipe", "pipe", "ignore"] });
    } catch (e) {
      resolve("");
      return;
    }
    child.stdout.on("data", (d) => {
      if (out.length < OUT_MAX) out += d;
    });
    child.on("error", () => resolve(""));
    child.on("close", () => resolve(out));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

/** Appends what was told of a session to its file. */
function keep(payload) {
  if (!SESSION_ID.test(payload.sessionID || "")) return;
  try {
    mkdirSync(SESSIONS, { recursive: true });
    appendFileSync(`${SESSIONS}/${payload.sessionID}.jsonl`, JSON.stringify({ at: Date.now(), ...payload }) + "\n");
  } catch (e) {}
}

/**
 * Keeps in session `sessionID`'s file the tokens assistant message `info` used (opencode counts a
 * model call's tokens on its message once the call ends), each count once.
 */
function keepUsage(last, sessionID, info) {
  const t = info.tokens;
  if (!t || typeof t !== "object" || typeof info.id !== "string") return;
  const cache = t.cache || {};
  const tokens = { input: t.input, output: t.output, reasoning: t.reasoning, cache: { read: cache.read, write: cache.write } };
  const seen = `${info.id} ${JSON.stringify(tokens)}`;
  if (!(t.input || t.output || t.reasoning || cache.read || cache.write) || last.get(sessionID) === seen) return;
  last.set(sessionID, seen);
  keep({ type: "usage", sessionID, message: head(info.id), model: head(info.modelID), tokens });
}

/** bosun's answer to a permission request, from what its report printed. */
function answerIn(out) {
  let answer;
  for (const line of out.split("\n")) {
    try {
      const v = JSON.parse(line);
      if (v && (v.reply === "once" || v.reply === "reject")) answer = { reply: v.reply, message: head(v.message) };
    } catch (e) {}
  }
  return answer;
}

/** Gives opencode the answer to permission request `id` of session `sessionID`. */
async function reply(client, sessionID, id, answer) {
  try {
    const url = "/permission/{requestID}/reply";
    const headers = { "Content-Type": "application/json" };
    const r = await client._client.post({ url, path: { requestID: id }, body: answer, headers });
    if (!r || !r.error) return;
  } catch (e) {}
  // The older route takes no message.
  try {
    await client.postSessionIdPermissionsPermissionId({ path: { id: sessionID, permissionID: id }, body: { response: answer.reply } });
  } catch (e) {}
}

export const BosunPlugin = async ({ client }) => {
  // A sub-agent's session, and the session it works for (its model calls are counted there).
  const children = new Map();
  const usage = new Map();
  const said = new Map();
  const prompts = new Map();
  const statuses = new Map();
  let queue = Promise.resolve("");
  let up = false;
  // Kept in its session's file once bosun heard it (its report command has ended).
  const report = (event, payload) => {
    up = true;
    const sent = queue.then(async () => {
      const out = await send(event, payload);
      keep(payload);
      return out;
    });
    queue = sent.catch(() => "");
    return sent;
  };
  // `started` once opencode's TUI takes input: its first catalogue and plugin events come as the
  // TUI draws itself (a message typed at plugin load, seconds before, is lost). Not at all once
  // its session said more.
  const STARTING = ["plugin.added", "catalog.updated", "reference.updated", "integration.updated"];
  return {
    event: async ({ event }) => {
      if (STARTING.includes(event && event.type)) {
        if (!up) report("started", { type: "started" });
        up = true;
        return;
      }
      const p = (event && event.properties) || {};
      const sessionID = p.sessionID || (p.info && p.info.id);
      if (event.type === "session.created" && p.info && p.info.parentID) {
        children.set(p.info.id, children.get(p.info.parentID) || p.info.parentID);
      }
      if (!sessionID) return;
      const main = children.get(sessionID) || sessionID;
      if (event.type === "message.updated" && p.info && p.info.role === "assistant") keepUsage(usage, main, p.info);
      if (children.has(sessionID)) return;
      switch (event.type) {
        case "message.updated":
          // A new prompt starts a turn: what the agent said before is not what it says in it.
          if (p.info && p.info.role === "user" && prompts.get(sessionID) !== p.info.id) {
            prompts.set(sessionID, p.info.id);
            said.delete(sessionID);
          }
          return;
        case "message.part.updated": {
          const part = p.part || {};
          if (part.type === "text" && part.time && part.time.end && !part.synthetic && part.text) said.set(sessionID, tail(part.text));
          return;
        }
        case "session.status": {
          const s = p.status || {};
          const seen = `${s.type}/${s.attempt || ""}`;
          if (s.type === "idle" || statuses.get(sessionID) === seen) return;
          statuses.set(sessionID, seen);
          report(event.type, { type: event.type, sessionID, status: { type: s.type, attempt: s.attempt, message: head(s.message) } });
          return;
        }
        case "session.idle":
          statuses.delete(sessionID);
          report(event.type, { type: event.type, sessionID, said: said.get(sessionID) });
          return;
        case "session.error": {
          const e = p.error || {};
          const data = e.data || {};
          const error = { name: head(e.name), message: head(data.message || e.message), statusCode: data.statusCode };
          report(event.type, { type: event.type, sessionID, error });
          return;
        }
        case "permission.asked": {
          const request = { id: p.id, permission: head(p.permission), patterns: (p.patterns || []).slice(0, 10).map(head) };
          const answer = answerIn(await report(event.type, { type: event.type, sessionID, request }));
          if (answer) await reply(client, sessionID, p.id, answer);
          return;
        }
        case "question.asked": {
          const first = (p.questions || [])[0] || {};
          report(event.type, { type: event.type, sessionID, question: head(first.question || first.header) });
          return;
        }
        case "permission.replied":
        case "question.replied":
        case "question.rejected":
          report(event.type, { type: event.type, sessionID });
          return;
      }
    },
  };
};
