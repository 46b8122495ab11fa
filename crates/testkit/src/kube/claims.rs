//! Persistent volume claims as Docker named volumes: a claim's volume is made when the claim is
//! created (so it is `Bound` at once), outlives every pod that mounts it, and goes with the claim
//! or the cluster.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::Shared;

/// The annotation that names a claim's volume on the engine.
pub const VOLUME_ANNOTATION: &str = "bosun.kube/docker-volume";

/// Makes the claim's volume and fills in what the server adds to a new claim: the annotation
/// naming the volume and a `Bound` status.
pub fn provision(shared: &Shared, ns: &str, claim: &mut Value) -> Result<(), String> {
    let name = claim["metadata"]["name"].as_str().unwrap_or_default().to_owned();
    let volume = format!("bosun-kube-{}-{ns}-{name}-{:06x}", shared.id, fastrand::u32(..0x100_0000));
    let out = shared.engine.output(&[
        "volume",
        "create",
        "--label",
        &format!("bosun.kube.cluster={}", shared.id),
        "--label",
        &format!("bosun.kube.claim={ns}/{name}"),
        &volume,
    ]);
    if !out.status.success() {
        return Err(format!("docker volume create: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    // World-writable, as a fresh volume of a real provisioner usually is to the pod's user.
    if let Ok(path) = mountpoint(shared, &volume) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777));
    }
    claim["metadata"]["annotations"][VOLUME_ANNOTATION] = json!(volume);
    claim["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = json!("yes");
    let storage = claim["spec"]["resources"]["requests"]["storage"].clone();
    let modes = claim["spec"]["accessModes"].clone();
    claim["spec"]["volumeName"] = json!(format!("pvc-{volume}"));
    claim["status"] = json!({"phase": "Bound", "accessModes": modes, "capacity": {"storage": storage}});
    if storage.is_null() {
        claim["status"]["capacity"] = json!({});
    }
    Ok(())
}

/// Where the engine keeps `volume` on the host.
pub fn mountpoint(shared: &Shared, volume: &str) -> Result<PathBuf, String> {
    let out = shared.engine.output(&["volume", "inspect", "--format", "{{.Mountpoint}}", volume]);
    let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || path.is_empty() {
        return Err(format!("docker volume {volume:?}: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(PathBuf::from(path))
}

/// Removes a deleted claim's volume; one still mounted by a container stays until the cluster
/// goes.
pub fn release(shared: &Shared, claim: &Value) {
    if let Some(volume) = claim["metadata"]["annotations"][VOLUME_ANNOTATION].as_str() {
        let _ = shared.engine.output(&["volume", "rm", volume]);
    }
}
