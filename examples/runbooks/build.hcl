# `bosun run build auth "Add login"`: a worktree on feature/auth, a planning agent, then an
# implementing agent, then the repository's checks; done when they pass.

command "build" {
  args     = "<name> <instructions> [--base <branch>]"
  defaults = { base = "HEAD" }
  run      = { job = "build" }
}

job "build" {
  vars = ["name", "instructions", "base"]

  source {
    git    = true
    branch = "feature/${var.name}"
    ref    = "${var.base}"
  }

  step "plan" {
    run     = { agent = "planner" }
    on_done = { step = "implement" }
  }

  step "implement" {
    run     = { agent = "implementer" }
    on_done = { step = "check" }
  }

  step "check" {
    run = <<-SHELL
      if [ -x ./check.sh ]; then ./check.sh; else echo "no checks"; fi
    SHELL
    attempts = 2
    backoff  = "5s"
    on_done  = "done"
    on_fail  = { step = "implement" }
  }

  max_step_visits = 6
}

agent "planner" {
  run    = "claude"
  prompt = "Write PLAN.md: how to ${var.instructions}. Do not write code yet."
  on_idle = { action = "done" }
}

agent "implementer" {
  run     = "claude"
  prompt  = "Follow PLAN.md: ${var.instructions}."
  on_idle = [{ action = "nudge", message = "Keep going until PLAN.md is done.", attempts = 2 }, "done"]
  on_dead = { action = "resume", message = "You were restarted; continue with PLAN.md." }
  on_error = "escalate"
}
