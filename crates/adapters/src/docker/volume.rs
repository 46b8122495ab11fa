//! Named volumes: made, filled from a tar archive, read back as one, and removed with whatever
//! mounts them. An archive goes in and out through a container made for it and never started
//! (the engine's archive API works on a stopped container's mounts).

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

use bollard::models::{ContainerCreateBody, HostConfig, VolumeCreateRequest};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder, ListContainersOptionsBuilder,
    ListVolumesOptionsBuilder, RemoveVolumeOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures_util::StreamExt;

use super::{failure, Engine};
use crate::AdapterError;

/// Where the volume is mounted in the container that carries an archive in or out.
const MOUNT: &str = "/v";

impl Engine {
    pub(super) async fn create_volume(&self, name: &str, labels: BTreeMap<String, String>) -> Result<(), AdapterError> {
        let docker = self.client().await?;
        let request = VolumeCreateRequest {
            name: Some(name.to_owned()),
            labels: Some(labels.into_iter().collect::<HashMap<_, _>>()),
            ..Default::default()
        };
        docker.create_volume(request).await.map(drop).map_err(|e| self.failed(&format!("create volume {name}"), e))
    }

    pub(super) async fn fill_volume(&self, name: &str, image: &str, tar: Vec<u8>) -> Result<(), AdapterError> {
        let docker = self.client().await?;
        let carrier = self.carrier(name, image).await?;
        let options = UploadToContainerOptionsBuilder::default().path(MOUNT).build();
        let filled = docker.upload_to_container(&carrier, Some(options), bollard::body_full(tar.into())).await;
        let removed = self.remove(&carrier).await;
        filled.map_err(|e| self.failed(&format!("fill volume {name}"), e))?;
        removed
    }

    pub(super) async fn read_volume(&self, name: &str, image: &str, to: &Path, max: u64) -> Result<bool, AdapterError> {
        let docker = self.client().await?;
        match docker.inspect_volume(name).await {
            Ok(_) => {}
            Err(e) if failure::status(&e) == Some(404) => return Ok(false),
            Err(e) => return Err(self.failed(&format!("look at volume {name}"), e)),
        }
        let carrier = self.carrier(name, image).await?;
        let read = self.download(&carrier, name, to, max).await;
        let removed = self.remove(&carrier).await;
        read?;
        removed.map(|()| true)
    }

    async fn download(&self, carrier: &str, name: &str, to: &Path, max: u64) -> Result<(), AdapterError> {
        let docker = self.client().await?;
        let what = format!("read volume {name}");
        let mut file =
            std::fs::File::create(to).map_err(|e| AdapterError::io(format!("creating {}", to.display()), e))?;
        let options = DownloadFromContainerOptionsBuilder::default().path(MOUNT).build();
        let mut stream = docker.download_from_container(carrier, Some(options));
        let mut written = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.failed(&what, e))?;
            written += chunk.len() as u64;
            if written > max {
                return Err(AdapterError::Docker(format!("{what}: it holds more than {max} bytes")));
            }
            file.write_all(&chunk).map_err(|e| AdapterError::io(format!("writing {}", to.display()), e))?;
        }
        Ok(())
    }

    /// A container of `image` that mounts volume `name` and is never started; its name.
    async fn carrier(&self, name: &str, image: &str) -> Result<String, AdapterError> {
        let docker = self.client().await?;
        let carrier = format!("{name}-io-{:08x}", fastrand::u32(..));
        let body = ContainerCreateBody {
            image: Some(image.to_owned()),
            entrypoint: Some(vec![String::new()]),
            cmd: Some(vec!["true".to_owned()]),
            host_config: Some(HostConfig {
                binds: Some(vec![format!("{name}:{MOUNT}")]),
                network_mode: Some("none".to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let options = CreateContainerOptionsBuilder::default().name(&carrier).build();
        match docker.create_container(Some(options), body).await {
            Ok(_) => Ok(carrier),
            Err(e) if failure::status(&e) == Some(404) => Err(AdapterError::NoImage(image.to_owned())),
            Err(e) => Err(self.failed(&format!("make a container to reach volume {name}"), e)),
        }
    }

    pub(super) async fn remove_volume(&self, name: &str) -> Result<(), AdapterError> {
        let docker = self.client().await?;
        let what = format!("remove volume {name}");
        let filters = HashMap::from([("volume".to_owned(), vec![name.to_owned()])]);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        let users = docker.list_containers(Some(options)).await.map_err(|e| self.failed(&what, e))?;
        for id in users.into_iter().filter_map(|c| c.id) {
            self.remove(&id).await?;
        }
        let options = RemoveVolumeOptionsBuilder::default().force(true).build();
        match docker.remove_volume(name, Some(options)).await {
            Ok(()) => Ok(()),
            Err(e) if failure::status(&e) == Some(404) => Ok(()),
            Err(e) => Err(self.failed(&what, e)),
        }
    }

    pub(super) async fn volumes(&self, key: &str, value: &str) -> Result<Vec<String>, AdapterError> {
        let docker = self.client().await?;
        let filters = HashMap::from([("label".to_owned(), vec![format!("{key}={value}")])]);
        let options = ListVolumesOptionsBuilder::default().filters(&filters).build();
        let found = docker
            .list_volumes(Some(options))
            .await
            .map_err(|e| self.failed(&format!("list volumes labelled {key}={value}"), e))?;
        Ok(found.volumes.unwrap_or_default().into_iter().map(|v| v.name).collect())
    }
}
