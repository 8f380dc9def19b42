//! A server run as a child process: one JSON-RPC message per line on its
//! stdin and stdout; its stderr goes to this process's log.

use super::inbox::Inbox;
use super::ClientError;
use serde_json::Value;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

/// The longest line read from the server (64 MiB): past it the process is
/// taken for broken and stopped (and, as a stdio server, started again).
const MAX_LINE: u64 = 64 << 20;

/// The longest line of the server's stderr logged as one entry (8 KiB):
/// a longer one is logged in pieces, never held whole.
const MAX_LOG_LINE: u64 = 8 << 10;

/// How long a process that closed its stdout may take to exit before it is
/// stopped: it can answer nothing more.
const EXIT_AFTER_EOF: std::time::Duration = std::time::Duration::from_secs(5);

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct Command {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub dir: Option<std::path::PathBuf>,
}

/// A running server process.
pub(crate) struct Process {
    lines: mpsc::Sender<Vec<u8>>,
    kill: watch::Sender<bool>,
    exit: watch::Receiver<Option<String>>,
    upstream: Arc<str>,
}

impl Process {
    /// Starts the process; what it writes goes to `inbox`.
    pub(crate) fn spawn(command: &Command, upstream: &Arc<str>, inbox: Arc<Inbox>) -> Result<Process, ClientError> {
        let mut child = tokio::process::Command::new(&command.program);
        child
            .args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &command.dir {
            child.current_dir(dir);
        }
        let mut child = child.spawn().map_err(|e| ClientError::Transport {
            upstream: upstream.to_string(),
            detail: format!("cannot start {}: {e}", command.program),
        })?;
        let broken = |what: &str| ClientError::Transport {
            upstream: upstream.to_string(),
            detail: format!("the process has no {what}"),
        };
        let stdin = child.stdin.take().ok_or_else(|| broken("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| broken("stdout"))?;
        let stderr = child.stderr.take().ok_or_else(|| broken("stderr"))?;
        let (lines, to_write) = mpsc::channel(256);
        let (kill, killed) = watch::channel(false);
        let (exited, exit) = watch::channel(None);
        tokio::spawn(write(stdin, to_write));
        // The reader's word that the process serves no more (a oneshot, not
        // a second `kill` sender: dropping `Process` must still stop it).
        let (broken, stop) = oneshot::channel();
        tokio::spawn(read(stdout, inbox.clone(), upstream.clone(), broken));
        tokio::spawn(log(stderr, upstream.clone()));
        tokio::spawn(wait(child, killed, stop, inbox, exited));
        Ok(Process {
            lines,
            kill,
            exit,
            upstream: upstream.clone(),
        })
    }

    /// Writes one message as a line.
    pub(crate) async fn send(&self, message: &Value) -> Result<(), ClientError> {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.lines.send(line).await.map_err(|_| ClientError::Closed {
            upstream: self.upstream.to_string(),
            why: self
                .exit
                .borrow()
                .clone()
                .unwrap_or_else(|| "its stdin is closed".into()),
        })
    }

    /// Stops the process.
    pub(crate) fn kill(&self) {
        let _ = self.kill.send(true);
    }

    /// Resolves when the process has exited, with how.
    pub(crate) fn exited(&self) -> impl std::future::Future<Output = String> + Send + 'static {
        let mut exit = self.exit.clone();
        async move {
            loop {
                if let Some(why) = exit.borrow().clone() {
                    return why;
                }
                if exit.changed().await.is_err() {
                    return "the process is gone".into();
                }
            }
        }
    }
}

async fn write(mut stdin: tokio::process::ChildStdin, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

/// Reads the server's messages into `inbox`. When it can read no more, the
/// inbox closes and the process is stopped through `broken` (at once for a
/// line too long or a failed read, after [`EXIT_AFTER_EOF`] when stdout
/// closed), so that one that stays alive, stuck writing to a pipe nobody
/// reads, is not left serving nothing: its end starts it again.
async fn read(stdout: tokio::process::ChildStdout, inbox: Arc<Inbox>, upstream: Arc<str>, broken: oneshot::Sender<()>) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        let why = match (&mut reader).take(MAX_LINE + 1).read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) if line.len() as u64 > MAX_LINE => "it wrote a line longer than 64 MiB".to_owned(),
            Ok(_) => String::new(),
            Err(e) => format!("reading its stdout failed: {e}"),
        };
        if !why.is_empty() {
            tracing::warn!(upstream = %upstream, "{why}: the process is stopped");
            inbox.close(&why);
            let _ = broken.send(());
            return;
        }
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(message) => inbox.deliver(message, None),
            Err(_) => tracing::warn!(upstream = %upstream, "not JSON on its stdout: {}", String::from_utf8_lossy(text)),
        }
    }
    inbox.close("it closed its stdout");
    tokio::time::sleep(EXIT_AFTER_EOF).await;
    // A process that exited meanwhile is not waited for any more: nobody hears.
    let _ = broken.send(());
}

/// Logs the server's stderr, a line an entry (a longer one than
/// [`MAX_LOG_LINE`] in pieces).
async fn log(stderr: tokio::process::ChildStderr, upstream: Arc<str>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader).take(MAX_LOG_LINE).read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                tracing::info!(upstream = %upstream, "{}", text.trim_end_matches(['\r', '\n']));
            }
        }
    }
}

/// Waits for the process to exit, stopping it when it is killed (or its
/// `Process` dropped) or its reader finds it `broken`.
async fn wait(
    mut child: tokio::process::Child,
    mut killed: watch::Receiver<bool>,
    broken: oneshot::Receiver<()>,
    inbox: Arc<Inbox>,
    exited: watch::Sender<Option<String>>,
) {
    let stop = async {
        tokio::select! {
            _ = super::until(&mut killed) => {}
            // A reader that ends without a word stops nothing.
            Ok(()) = broken => {}
        }
    };
    let status = tokio::select! {
        status = child.wait() => status,
        _ = stop => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    let why = match status {
        Ok(status) => format!("the process exited ({status})"),
        Err(e) => format!("the process could not be waited for: {e}"),
    };
    inbox.close(&why);
    let _ = exited.send(Some(why));
}
