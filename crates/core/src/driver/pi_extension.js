// bosun's extension for pi, written by bosun for one agent and loaded with `pi -e <this file>`:
// it reports pi's lifecycle events to bosun (`bosun hook report pi <agent> …`, one JSON object on
// stdin), one after the other in the order pi gave them, and asks bosun's permission policy
// about each tool call before it runs. The two constants below are filled in by bosun.
import { spawn } from "node:child_process";

// The shell command that reports for this agent (its event is the last argument).
const HOOK = "__BOSUN_HOOK__";
// Whether the project folders pi asks to trust are trusted (bosun's policy, `accept_trust`).
const TRUST = __BOSUN_TRUST__;
// The most of any text sent.
const MAX = 4000;

const head = (s, n = MAX) => (typeof s === "string" ? s.slice(0, n) : undefined);
const tail = (s, n = MAX) => (typeof s === "string" ? s.slice(-n) : undefined);

// Runs the report command with `payload` on stdin; resolves to what it printed (an answer).
function call(event, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn("/bin/sh", ["-c", `${HOOK} "$1"`, "sh", event], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve("");
      return;
    }
    child.stdout.on("data", (d) => {
      if (out.length < 65536) out += d;
    });
    child.on("error", () => resolve(""));
    child.on("close", () => resolve(out));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify({ event, ...payload }));
  });
}

let chain = Promise.resolve("");
// Reports go one at a time, in order: a late "working" never lands after "settled".
function report(event, payload) {
  const done = chain.then(() => call(event, payload));
  chain = done.catch(() => "");
  return done;
}

// What a tool acts on: the command of a shell call, the path of a file tool.
function subject(input) {
  if (!input || typeof input !== "object") return undefined;
  for (const key of ["command", "path", "file_path", "pattern"]) {
    if (typeof input[key] === "string") return head(input[key]);
  }
  return undefined;
}

// The text of an assistant message.
function text(message) {
  if (!message || !Array.isArray(message.content)) return undefined;
  return message.content
    .filter((block) => block && block.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("");
}

export default function (pi) {
  // The newest assistant message of the run that is going on: what it said, or its error.
  let last;
  // Tool calls started and not yet ended: a dialog shown meanwhile is about one.
  let tools = 0;

  // It fires whenever the folder has project resources, before pi looks at its saved decisions:
  // left undecided, pi asks only when no decision of its own applies (and bosun reads its dialog).
  pi.on("project_trust", () => (TRUST ? { trusted: "yes" } : { trusted: "undecided" }));
  pi.on("session_start", (event, ctx) => {
    report("session_start", { reason: event.reason, session_file: head(ctx.sessionManager?.getSessionFile?.()) });
  });
  pi.on("before_agent_start", (event) => {
    last = undefined;
    report("before_agent_start", { prompt: head(event.prompt, 200) });
  });
  pi.on("tool_call", async (event) => {
    const said = await report("tool_call", { tool_name: head(event.toolName, 200), subject: subject(event.input) });
    let answer;
    try {
      answer = JSON.parse(said.trim() || "null");
    } catch {
      answer = null;
    }
    if (answer && answer.block === true) {
      return { block: true, reason: head(String(answer.reason ?? "bosun's permission policy denies this"), 1000) };
    }
    return undefined;
  });
  pi.on("tool_execution_start", () => {
    tools += 1;
  });
  pi.on("tool_execution_end", () => {
    tools = Math.max(0, tools - 1);
  });
  pi.on("message_end", (event) => {
    if (event.message && event.message.role === "assistant") last = event.message;
  });
  pi.on("ui_prompt_start", (event) => {
    report("ui_prompt_start", { kind: head(event.kind, 100), title: head(event.title, 1000), tool: tools > 0 });
  });
  pi.on("ui_prompt_end", (event, ctx) => {
    report("ui_prompt_end", { kind: head(event.kind, 100), idle: ctx.isIdle() });
  });
  pi.on("agent_settled", (event) => {
    const m = last;
    last = undefined;
    tools = 0;
    report("agent_settled", {
      aborted: event.aborted === true,
      stop_reason: head(m?.stopReason, 100),
      error_message: head(m?.errorMessage),
      text: tail(text(m)),
    });
  });
  pi.on("session_shutdown", async (event) => {
    await report("session_shutdown", { reason: head(event.reason, 100) });
  });
}
