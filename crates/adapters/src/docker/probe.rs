//! Whether bosun's own binary runs in an image, asked before an agent is started in it: the
//! host binary, bound in, needs the C library and loader it was linked against, which a busybox
//! or alpine image does not carry. A throwaway container of the image runs `<binary> --version`;
//! when it fails, the refusal carries what the container printed (the runtime's `exec …: no such
//! file or directory`, the loader's message) and its exit code. An image (by its id) that ran
//! the binary once is not asked again.

use futures_util::StreamExt;

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{LogsOptionsBuilder, WaitContainerOptionsBuilder};

use super::{failure, Engine};
use crate::AdapterError;

/// The most of the container's output a refusal quotes.
const SAID_MAX: usize = 2000;

impl Engine {
    /// `Ok` when `program` runs in `image` (or the image is not there: the start says so
    /// itself); otherwise why not, with the container's output and exit code.
    pub(super) async fn check_runs(&self, image: &str, program: &str) -> Result<(), AdapterError> {
        let docker = self.client().await?;
        let id = match docker.inspect_image(image).await {
            Ok(seen) => seen.id.unwrap_or_else(|| image.to_owned()),
            Err(e) if failure::status(&e) == Some(404) => return Ok(()),
            Err(e) => return Err(self.failed(&format!("look at image {image}"), e)),
        };
        if self.ran_in.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&id) {
            return Ok(());
        }
        let body = ContainerCreateBody {
            image: Some(image.to_owned()),
            entrypoint: Some(vec![String::new()]),
            cmd: Some(vec![program.to_owned(), "--version".to_owned()]),
            // As the agents' hosts run: as this user.
            user: Some(format!("{}:{}", nix::unistd::getuid(), nix::unistd::getgid())),
            host_config: Some(HostConfig {
                binds: Some(vec![format!("{program}:{program}:ro")]),
                network_mode: Some("none".to_owned()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let what = format!("try bosun's binary in image {image}");
        let created = docker.create_container(None, body).await.map_err(|e| self.failed(&what, e))?;
        let ran = self.run_to_end(&created.id, &what).await;
        let removed = self.remove(&created.id).await;
        let (code, said) = ran?;
        removed?;
        if code == 0 {
            self.ran_in.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id);
            return Ok(());
        }
        Err(AdapterError::Docker(format!(
            "bosun's binary {program} cannot run in image {image}: `{program} --version` in it exited with code \
             {code}{}. The binary bound into a container needs the C library it was built against \
             (glibc, as on this machine): use an image that has it (debian, ubuntu), not busybox or alpine",
            if said.is_empty() { String::new() } else { format!(" and printed: {said}") }
        )))
    }

    /// Starts container `id`, waits for it to end, and gives its exit code and what it printed
    /// (at most `SAID_MAX` bytes, on one line). A start the runtime refuses (it could not exec
    /// the program) counts as an exit with the engine's message as what was printed.
    async fn run_to_end(&self, id: &str, what: &str) -> Result<(i64, String), AdapterError> {
        let docker = self.client().await?;
        if let Err(e) = docker.start_container(id, None).await {
            return match e {
                bollard::errors::Error::DockerResponseServerError { status_code, message } => {
                    Ok((i64::from(status_code), one_line(&message)))
                }
                e => Err(self.failed(what, e)),
            };
        }
        let options = WaitContainerOptionsBuilder::default().condition("not-running").build();
        let code = match docker.wait_container(id, Some(options)).next().await {
            Some(Ok(done)) => done.status_code,
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => code,
            Some(Err(e)) => return Err(self.failed(what, e)),
            None => return Err(AdapterError::Docker(format!("{what}: the engine did not say how it ended"))),
        };
        let options = LogsOptionsBuilder::default().stdout(true).stderr(true).tail("20").build();
        let mut logs = docker.logs(id, Some(options));
        let mut said = Vec::new();
        while let Some(chunk) = logs.next().await {
            let Ok(chunk) = chunk else { break };
            said.extend_from_slice(&chunk.into_bytes());
            if said.len() > SAID_MAX {
                break;
            }
        }
        Ok((code, one_line(&String::from_utf8_lossy(&said))))
    }
}

/// `text` trimmed, its lines joined with ` / `, cut at `SAID_MAX` bytes.
fn one_line(text: &str) -> String {
    let joined = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" / ");
    let mut end = joined.len().min(SAID_MAX);
    while !joined.is_char_boundary(end) {
        end -= 1;
    }
    joined[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_container_printed_is_one_bounded_line() {
        assert_eq!(
            one_line("exec /bosun: no such file or directory\n\n  second  \n"),
            "exec /bosun: no such file or directory / second"
        );
        let long = "é".repeat(SAID_MAX);
        let cut = one_line(&long);
        assert!(cut.len() <= SAID_MAX && cut.chars().all(|c| c == 'é'), "cut at a character's boundary");
    }
}
