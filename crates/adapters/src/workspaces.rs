//! Local workspaces: directories and git worktrees.
