//! Issue 15's figure: `examples/runbooks/diamond.hcl` — four jobs, the middle two at once — with
//! claudeless agents whose one turn takes a set time (`BOSUN_BENCH_TURN_MS`, a minute unless
//! set): the plan's wall time, from `bosun plan run` to done, beside the time the jobs would take
//! one after another.

use std::path::Path;
use std::time::{Duration, Instant};

use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;

use crate::{wait_secs, Figure};

pub fn figures(bin: &Path, claudeless: &Path) -> Vec<Figure> {
    let turn_ms: u64 = std::env::var("BOSUN_BENCH_TURN_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(60_000);
    let repo = TempRepo::new();
    let scenario = repo.path().join("slow.toml");
    let slow = format!(
        "[claude]\ntrusted = true\n\n[[responses]]\non = {{ contains = \"\" }}\nsay = \"Done.\"\ndelay_ms = {turn_ms}\n"
    );
    std::fs::write(&scenario, slow).expect("write the scenario");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/runbooks/diamond.hcl");
    let stand_in = format!("[\"{}\", \"--scenario\", \"{}\"]", claudeless.display(), scenario.display());
    let text = std::fs::read_to_string(example).expect("the diamond example").replace("\"claude\"", &stand_in);
    let dir = repo.path().join(".bosun/runbooks");
    std::fs::create_dir_all(&dir).expect("make the runbooks' directory");
    std::fs::write(dir.join("diamond.hcl"), text).expect("write the runbook");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "the diamond"]);

    let bosun = Bosun::new(bin);
    let started = Instant::now();
    bosun.ok(repo.path(), &["plan", "run", "release"]);
    let limit = turn_ms / 1000 * 6 + 120;
    wait_secs(limit, || {
        let listed = bosun.ok(repo.path(), &["plan", "ls", "--json"]);
        let plans: serde_json::Value = serde_json::from_str(&listed).ok()?;
        match plans[0]["state"]["state"].as_str() {
            Some("done") => Some(()),
            Some("failed") => panic!("the plan failed: {listed}"),
            _ => None,
        }
    });
    let took = started.elapsed();
    let turn = Duration::from_millis(turn_ms);
    vec![Figure::value(
        format!("diamond plan, 4 jobs of one {:.0} s turn each (2 at once)", turn.as_secs_f64()),
        format!("{:.1} s (one after another: ≥ {:.0} s)", took.as_secs_f64(), 4.0 * turn.as_secs_f64()),
        "≈ 3 turns",
        "-",
    )]
}
