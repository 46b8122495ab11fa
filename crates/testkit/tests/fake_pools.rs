//! `FakeWorkspaces` as `Pools`: slots in memory, recorded as the daemon's tests read them.

use std::path::{Path, PathBuf};

use bosun_adapters::{AdapterError, Pools};
use bosun_core::{PoolBase, SlotProbe, SlotReset};
use bosun_testkit::fakes::FakeWorkspaces;

fn reset(path: &Path, force: bool) -> SlotReset {
    SlotReset {
        repo: PathBuf::from("/repo"),
        path: path.to_path_buf(),
        base: PoolBase { base_ref: "origin/main".into(), remote: Some("origin".into()) },
        pristine: false,
        force,
        delete_branch: Some("task".into()),
        setup: None,
    }
}

#[test]
fn slots_are_made_reset_and_removed_in_memory_and_recorded() {
    let ws = FakeWorkspaces::default();
    let slot = Path::new("/state/workspaces/proj--1");
    assert_eq!(ws.base(Path::new("/repo")).expect("base").base_ref, "main");
    assert_eq!(ws.probe_slot(slot).expect("probe"), SlotProbe::default());

    let head = ws.create_slot(Path::new("/repo"), slot, "main", Some("npm ci")).expect("create_slot");
    assert_eq!(head, "commit-of-main");
    assert_eq!(ws.probe_slot(slot).expect("probe"), SlotProbe { exists: true, dirty: false, head: Some(head) });

    ws.state().dirty.insert(slot.to_path_buf());
    assert!(matches!(ws.reset_slot(&reset(slot, false)), Err(AdapterError::Dirty(_))));
    assert!(ws.state().resets.is_empty(), "a refused reset is not recorded");
    assert_eq!(ws.reset_slot(&reset(slot, true)).expect("forced reset"), "commit-of-origin/main");
    assert!(!ws.probe_slot(slot).expect("probe").dirty);

    ws.remove_slot(Path::new("/repo"), slot).expect("remove_slot");
    let s = ws.state();
    assert_eq!(s.slots_created, vec![slot.to_path_buf()]);
    assert_eq!(s.setups, vec![(slot.to_path_buf(), "npm ci".to_owned())]);
    assert_eq!(s.deleted_branches, vec!["task".to_owned()]);
    assert_eq!(s.slots_removed, vec![slot.to_path_buf()]);
    assert!(s.slots.is_empty());
}

#[test]
fn fail_slot_makes_slot_changes_fail() {
    let ws = FakeWorkspaces::default();
    ws.state().fail_slot = Some("disk full".into());
    let err = ws.create_slot(Path::new("/repo"), Path::new("/s"), "main", None);
    assert!(err.is_err_and(|e| e.to_string().contains("disk full")));
    assert!(ws.state().slots.is_empty() && ws.state().slots_created.is_empty());
}
