//! Accounts named in bosun's config: an agent started on one (`--account`, `account = "NAME"` on
//! a runbook's agent) runs with its config directory; a name the config does not have is refused
//! with those it has, starting nothing.

mod support;

use std::path::PathBuf;

use support::*;

/// Writes bosun's config naming a Claude account for each of `names`, each with a config
/// directory of its own (made): their directories.
fn claude_accounts(bosun: &Bosun, names: &[&str]) -> Vec<PathBuf> {
    let mut text = String::new();
    let mut dirs = Vec::new();
    for name in names {
        let dir = bosun.state_dir().join(format!("account-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        text.push_str(&format!("[accounts.{name}]\nclient = \"claude\"\nconfig = \"{}\"\n\n", dir.display()));
        dirs.push(dir);
    }
    std::fs::write(bosun.state_dir().join("config.toml"), text).unwrap();
    dirs
}

/// The transcripts under config directory `dir`.
fn transcripts(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.join("projects")];
    while let Some(d) = todo.pop() {
        for path in std::fs::read_dir(&d).into_iter().flatten().flatten().map(|e| e.path()) {
            match path.is_dir() {
                true => todo.push(path),
                false if path.extension().is_some_and(|e| e == "jsonl") => found.push(path),
                false => {}
            }
        }
    }
    found
}

#[test]
fn an_agent_on_an_account_runs_with_its_config_dir_and_an_account_not_named_is_refused_with_those_that_are() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let dirs = claude_accounts(&bosun, &["one", "two"]);
    let (cl, sc) = (claudeless(), scenario("chat"));
    let err = bosun.fails(repo.path(), &["agent", "start", "--account", "three", "--", &cl, "--scenario", &sc]);
    assert!(err.contains("no account is called \"three\" (there are one, two)"), "{err}");
    assert!(bosun.list().agents.is_empty(), "nothing was started");
    let id = bosun.start(repo.path(), &["--account", "two", "--", &cl, "--scenario", &sc, "hello"]);
    bosun.wait_state(&id, "idle");
    assert_eq!(transcripts(&dirs[1]).len(), 1, "its conversation is the account's");
    assert!(transcripts(&dirs[0]).is_empty() && transcripts(bosun.claude_config()).is_empty());
    let pid = bosun.agent(&id).pid.expect("its pid");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let want = format!("CLAUDE_CONFIG_DIR={}", dirs[1].display());
    assert!(environ.split(|b| *b == 0).any(|v| v == want.as_bytes()), "its process runs with {want}");
}

#[test]
fn a_runbooks_agent_runs_on_its_account_and_a_job_whose_agent_names_none_there_is_is_refused() {
    let bosun = bosun();
    let dirs = claude_accounts(&bosun, &["one", "two"]);
    let runbook = |account: &str| {
        format!(
            r#"
command "chat" {{
  run = {{ job = "chat" }}
}}

job "chat" {{
  source {{
    git = true
  }}
  step "talk" {{
    run = {{ agent = "talker" }}
  }}
}}

agent "talker" {{
  run     = ["{cl}", "--scenario", "{sc}"]
  prompt  = "hello"
  account = "{account}"
  on_idle = {{ action = "done" }}
}}
"#,
            cl = claudeless(),
            sc = scenario("chat")
        )
    };
    let repo = repo_with_runbook("chat.hcl", &runbook("nine"));
    let err = bosun.fails(repo.path(), &["run", "chat"]);
    assert!(
        err.contains("agent \"talker\" of job \"chat\": no account is called \"nine\" (there are one, two)"),
        "{err}"
    );
    assert!(bosun.list().agents.is_empty(), "nothing was started");
    write_runbook(&repo, "chat.hcl", &runbook("one"));
    let job = bosun.run_job(repo.path(), &["chat"]);
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    assert_eq!(transcripts(&dirs[0]).len(), 1, "its conversation is the account's");
    assert!(transcripts(&dirs[1]).is_empty() && transcripts(bosun.claude_config()).is_empty());
}
