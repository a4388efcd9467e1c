//! Starting the programs of a live run (worker processes, the ingress service) so that they die
//! with ackbench, however ackbench ends.
//!
//! Each program runs in a process group of its own, which the run signals to stop it (and
//! whatever it started in that group). That covers every exit ackbench itself goes through; for
//! the one it cannot (SIGKILL), each program is also told by the kernel to die with its parent:
//! `PR_SET_PDEATHSIG` (SIGKILL), set in the child between fork and exec. The kernel sends that
//! signal when the *thread* that forked the child ends, not the process, so every program is
//! started from one thread that lives as long as the run (tokio's blocking-pool threads end when
//! idle and would kill their children with them). And if ackbench died between the fork and
//! the `prctl`, the child would already belong to another parent: it checks `getppid()` against
//! ackbench's pid after setting the signal and refuses to start otherwise.
//!
//! The limit: the signal reaches the program ackbench started, not its own children. Those die
//! with the process group when ackbench stops the run; after a SIGKILL of ackbench they live on
//! unless they die with their parent themselves, and a child that starts a session of its own
//! (`setsid`) leaves the group as well.

use std::io;
use std::sync::mpsc;

use nix::sys::prctl;
use nix::sys::signal::Signal;
use nix::unistd::{getppid, Pid};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

type Request = (Command, oneshot::Sender<io::Result<Child>>);

/// Starts programs from one thread of its own, which ends when the last clone is dropped.
#[derive(Clone)]
pub struct Spawner {
    requests: mpsc::Sender<Request>,
}

impl Spawner {
    /// Starts the spawning thread, inside the runtime of `runtime` (the children are reaped by
    /// that runtime).
    pub fn new(runtime: tokio::runtime::Handle) -> io::Result<Spawner> {
        let (requests, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("ackbench-spawner".into())
            .spawn(move || {
                let _inside = runtime.enter();
                for (mut command, reply) in rx {
                    die_with_parent(&mut command);
                    let _ = reply.send(command.spawn());
                }
            })?;
        Ok(Spawner { requests })
    }

    /// Starts `command` (in its own process group if the command says so), dying with ackbench.
    pub async fn spawn(&self, command: Command) -> io::Result<Child> {
        let (reply, child) = oneshot::channel();
        self.requests
            .send((command, reply))
            .map_err(|_| io::Error::other("the spawning thread has ended"))?;
        child
            .await
            .map_err(|_| io::Error::other("the spawning thread has ended"))?
    }
}

/// Makes the child get SIGKILL when the spawning thread ends; a child whose parent is already
/// gone does not start.
fn die_with_parent(command: &mut Command) {
    let parent = Pid::this();
    // SAFETY: the closure runs in the child between fork and exec and only makes two system
    // calls (prctl, getppid), both async-signal-safe; it allocates nothing on success.
    unsafe {
        command.pre_exec(move || {
            prctl::set_pdeathsig(Signal::SIGKILL)?;
            if getppid() != parent {
                return Err(io::Error::other(
                    "ackbench ended before the program started",
                ));
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_child_dies_when_the_spawning_thread_ends() -> io::Result<()> {
        let spawner = Spawner::new(tokio::runtime::Handle::current())?;
        let mut c = Command::new("sleep");
        c.arg("30");
        let mut child = spawner.spawn(c).await?;
        let started = Instant::now();
        // The last clone goes: the thread ends, and the kernel sends the child SIGKILL.
        drop(spawner);
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .map_err(|_| io::Error::other("the child outlived the spawning thread"))??;
        assert_eq!(status.signal(), Some(Signal::SIGKILL as i32), "{status}");
        assert!(started.elapsed() < Duration::from_secs(5));
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_child_lives_while_the_spawner_does() -> io::Result<()> {
        let spawner = Spawner::new(tokio::runtime::Handle::current())?;
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 0.2; exit 7"]);
        let status = spawner.spawn(c).await?.wait().await?;
        assert_eq!(status.code(), Some(7));
        Ok(())
    }
}
