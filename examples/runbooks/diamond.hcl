# Four jobs as a diamond: schema first; api and ui from its branch at once; docs from both, their
# branches merged. main -> feature/schema -> feature/api + feature/ui -> feature/docs.
#   bosun plan run release && bosun plan show <id>

plan "release" {
  concurrency = 2

  job "schema" {
    run  = { job = "part" }
    vars = { file = "SCHEMA.md", instructions = "Add the users table" }
  }
  job "api" {
    run   = { job = "part" }
    vars  = { file = "API.md", instructions = "Add the login endpoint" }
    using = ["schema"]
  }
  job "ui" {
    run   = { job = "part" }
    vars  = { file = "UI.md", instructions = "Add the login form" }
    using = ["schema"]
  }
  job "docs" {
    run   = { job = "part" }
    vars  = { file = "DOCS.md", instructions = "Document the login" }
    using = ["api", "ui"]
  }
}

job "part" {
  vars   = ["file", "instructions"]
  source = "worktree"

  step "write" {
    run     = { agent = "author" }
    on_done = { step = "commit" }
  }

  step "commit" {
    run = "printf '%s\n' ${var.instructions} >> ${var.file} && git add -A && git commit -qm ${var.instructions}"
  }
}

agent "author" {
  run     = "claude"
  prompt  = "${var.instructions}. Build on what the branch already has."
  on_idle = { action = "done" }
  on_error = "escalate"
}
