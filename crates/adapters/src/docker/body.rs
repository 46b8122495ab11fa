//! The create request a `ContainerSpec` becomes: every value goes in as a field of its own
//! (no shell, no command line), and values that a field's syntax would misread are refused.

use std::path::Path;

use bollard::models::{ContainerCreateBody, HostConfig};

use crate::sandbox::Mount;
use crate::{AdapterError, ContainerSpec};

/// The body of `POST /containers/create` for `spec`.
pub(super) fn create_body(spec: &ContainerSpec<'_>) -> Result<ContainerCreateBody, AdapterError> {
    if spec.command.is_empty() {
        return Err(refused(spec, "it has no command to run"));
    }
    let env = spec
        .env
        .iter()
        .map(|(k, v)| {
            if k.is_empty() || k.contains(['=', '\0']) {
                Err(refused(spec, &format!("environment variable name {k:?} is empty or holds '=' or NUL")))
            } else {
                Ok(format!("{k}={v}"))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut binds = Vec::with_capacity(spec.binds.len() + spec.volumes.len());
    for mount in spec.binds {
        let Mount::Bind { from, to, writable } = mount else {
            return Err(refused(spec, &format!("a container cannot make {mount:?}")));
        };
        let (from, to) = (bind_path(spec, from)?, bind_path(spec, to)?);
        binds.push(if *writable { format!("{from}:{to}") } else { format!("{from}:{to}:ro") });
    }
    for (volume, at) in spec.volumes {
        if volume.is_empty() || !volume.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)) {
            return Err(refused(spec, &format!("volume name {volume:?} is not one an engine takes")));
        }
        binds.push(format!("{volume}:{}", bind_path(spec, at)?));
    }
    let host_config = HostConfig {
        binds: Some(binds),
        network_mode: Some(if spec.network { "host" } else { "none" }.to_owned()),
        nano_cpus: spec.cpus_milli.map(|m| i64::from(m) * 1_000_000),
        memory: spec.memory_bytes.map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
        auto_remove: Some(true),
        ..Default::default()
    };
    Ok(ContainerCreateBody {
        image: Some(spec.image.to_owned()),
        // `[""]` resets the image's entrypoint: the command is the whole program line.
        entrypoint: Some(vec![String::new()]),
        cmd: Some(spec.command.to_vec()),
        working_dir: Some(absolute(spec, spec.cwd, "working directory")?.to_owned()),
        env: Some(env),
        user: spec.user.map(|(uid, gid)| format!("{uid}:{gid}")),
        labels: Some(spec.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        host_config: Some(host_config),
        ..Default::default()
    })
}

/// A bind's host path as `Binds` spells it: absolute, UTF-8, and free of the ':' and ','
/// that the bind syntax would split at.
fn bind_path<'p>(spec: &ContainerSpec<'_>, path: &'p Path) -> Result<&'p str, AdapterError> {
    let text = absolute(spec, path, "bind path")?;
    if text.contains([':', ',']) {
        return Err(refused(spec, &format!("bind path {text:?} holds ':' or ',', which a bind cannot carry")));
    }
    Ok(text)
}

fn absolute<'p>(spec: &ContainerSpec<'_>, path: &'p Path, what: &str) -> Result<&'p str, AdapterError> {
    match path.to_str() {
        Some(text) if path.is_absolute() && !text.contains('\0') => Ok(text),
        _ => Err(refused(spec, &format!("{what} {} is not an absolute UTF-8 path", path.display()))),
    }
}

fn refused(spec: &ContainerSpec<'_>, why: &str) -> AdapterError {
    AdapterError::Docker(format!("cannot run container {}: {why}", spec.name))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;

    fn spec<'a>(
        command: &'a [String],
        env: &'a BTreeMap<String, String>,
        binds: &'a [Mount],
        labels: &'a BTreeMap<String, String>,
    ) -> ContainerSpec<'a> {
        ContainerSpec {
            name: "c1",
            image: "img:1",
            command,
            cwd: Path::new("/work"),
            env,
            binds,
            volumes: &[],
            user: Some((1000, 100)),
            network: false,
            cpus_milli: Some(1500),
            memory_bytes: Some(1 << 30),
            labels,
        }
    }

    #[test]
    fn every_field_goes_in_as_data() {
        let command = vec!["sh".to_owned(), "-c".to_owned(), "echo \"$X\"".to_owned()];
        let env = BTreeMap::from([("X".to_owned(), "a'b\"c $(d) `e`; f=g".to_owned())]);
        let binds = vec![
            Mount::Bind { from: PathBuf::from("/w s"), to: PathBuf::from("/w s"), writable: true },
            Mount::Bind { from: PathBuf::from("/ro"), to: PathBuf::from("/elsewhere"), writable: false },
        ];
        let labels = BTreeMap::from([("bosun.job".to_owned(), "j=1".to_owned())]);
        let s = spec(&command, &env, &binds, &labels);
        let body = create_body(&s).unwrap();
        assert_eq!(body.cmd, Some(command.clone()));
        assert_eq!(body.entrypoint, Some(vec![String::new()]));
        assert_eq!(body.env, Some(vec!["X=a'b\"c $(d) `e`; f=g".to_owned()]));
        assert_eq!(body.user.as_deref(), Some("1000:100"));
        assert_eq!(body.working_dir.as_deref(), Some("/work"));
        assert_eq!(body.labels.unwrap().get("bosun.job").map(String::as_str), Some("j=1"));
        let host = body.host_config.unwrap();
        assert_eq!(host.binds, Some(vec!["/w s:/w s".to_owned(), "/ro:/elsewhere:ro".to_owned()]));
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(host.nano_cpus, Some(1_500_000_000));
        assert_eq!(host.memory, Some(1 << 30));
        assert_eq!(host.auto_remove, Some(true));
    }

    #[test]
    fn values_a_field_would_misread_are_refused() {
        let command = vec!["true".to_owned()];
        let none = BTreeMap::new();
        let bind = |from: &str, to: &str| vec![Mount::Bind { from: from.into(), to: to.into(), writable: true }];
        let e = create_body(&spec(&command, &none, &bind("/a:/etc", "/a"), &none)).unwrap_err();
        assert!(e.to_string().contains("\"/a:/etc\""), "{e}");
        let e = create_body(&spec(&command, &none, &bind("/a", "/b,ro"), &none)).unwrap_err();
        assert!(e.to_string().contains("\"/b,ro\""), "{e}");
        assert!(create_body(&spec(&command, &none, &bind("rel", "/a"), &none)).is_err());
        assert!(create_body(&spec(&command, &none, &[Mount::Hide("/tmp".into())], &none)).is_err());
        let bad_env = BTreeMap::from([("A=B".to_owned(), "c".to_owned())]);
        assert!(create_body(&spec(&command, &bad_env, &[], &none)).is_err());
        assert!(create_body(&spec(&[], &none, &[], &none)).is_err());
    }
}
