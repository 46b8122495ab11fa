# Three jobs in order, each on its own branch, each starting from the branch the one before made:
# main -> feature/schema -> feature/api -> feature/ui.
#   bosun plan run auth && bosun plan ls

plan "auth" {
  job "schema" {
    run  = { job = "artifact" }
    vars = { instructions = "Add the users table" }
  }
  job "api" {
    run   = { job = "artifact" }
    vars  = { instructions = "Add the login endpoint" }
    using = ["schema"]
  }
  job "ui" {
    run   = { job = "artifact" }
    vars  = { instructions = "Add the login form" }
    using = ["api"]
  }
}

job "artifact" {
  vars   = ["instructions"]
  source = "worktree"

  step "write" {
    run     = { agent = "writer" }
    on_done = { step = "commit" }
  }

  step "commit" {
    run = "printf '%s\n' ${var.instructions} >> ARTIFACTS.md && git add -A && git commit -qm ${var.instructions}"
  }
}

agent "writer" {
  run     = "claude"
  prompt  = "${var.instructions}. Build on what the branch already has."
  on_idle = { action = "done" }
  on_error = "escalate"
}
