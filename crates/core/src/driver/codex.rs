//! OpenAI's Codex CLI: what its rollout log lines mean.
