//! stdio: newline-delimited compact JSON on stdin/stdout.
//!
//! stdout carries only protocol messages (logs go to stderr through
//! `tracing`). The server exits when stdin closes, after answering the
//! requests still running.

use crate::connection::Connection;
use crate::outbound::{Backlog, Outbound};
use crate::protocol::RequestId;
use crate::server::Server;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line accepted (16 MiB); a longer one is answered with -32600
/// and skipped.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// Requests running at once before the reader waits (back-pressure: the
/// client's writes then wait on the pipe).
pub const MAX_IN_FLIGHT: usize = 1024;

/// Bytes of messages waiting to be written before the reader waits (16 MiB):
/// a client that sends without reading its answers is not read either,
/// until it has read some of them.
pub const MAX_UNWRITTEN: usize = 16 * 1024 * 1024;

/// Requests read while [`MAX_IN_FLIGHT`] run that wait, in order, for one
/// to end, while reading goes on (for an answer or a cancellation behind
/// them); past this many, or [`MAX_LINE`] bytes of them, nothing more is
/// read until one starts.
const MAX_HELD: usize = 64;

/// The line buffer's capacity kept between messages (64 KiB).
const LINE_KEPT: usize = 64 * 1024;

mod id_scan;
#[cfg(unix)]
mod pipe;

/// Serves the process's stdin and stdout until stdin closes.
///
/// When stdin and stdout are pipes or sockets (the way hosts spawn servers)
/// they are read and written non-blocking through the reactor; otherwise
/// (a terminal, a file) through tokio's blocking stdin and stdout.
pub fn serve(server: Server) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
    serve_std(server)
}

/// [`serve`], compiled here (see [`crate::boxed::BoxFuture`]).
#[inline(never)]
fn serve_std(server: Server) -> crate::boxed::BoxFuture<'static, std::io::Result<()>> {
    serve_std_until(server, Box::pin(std::future::pending()))
}

/// [`serve`], with the input taken as ended once `stop` completes (a stop
/// signal, say): the requests read still run and are answered, as at the
/// input's end.
pub fn serve_until(
    server: Server,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
    serve_std_until(server, Box::pin(stop))
}

#[inline(never)]
fn serve_std_until(
    server: Server,
    stop: crate::boxed::BoxFuture<'static, ()>,
) -> crate::boxed::BoxFuture<'static, std::io::Result<()>> {
    Box::pin(async move {
        #[cfg(unix)]
        if let (Some(input), Some(output)) = (pipe::Pipe::stdin(), pipe::Pipe::stdout()) {
            return serve_io(
                server,
                EndAt {
                    input,
                    stop: Some(stop),
                },
                output,
            )
            .await;
        }
        serve_io(
            server,
            EndAt {
                input: tokio::io::stdin(),
                stop: Some(stop),
            },
            tokio::io::stdout(),
        )
        .await
    })
}

/// An input that ends (reads as at its end) once `stop` completes.
struct EndAt<R> {
    input: R,
    /// `None` once it has completed.
    stop: Option<crate::boxed::BoxFuture<'static, ()>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for EndAt<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        let Some(stop) = this.stop.as_mut() else {
            return std::task::Poll::Ready(Ok(()));
        };
        if stop.as_mut().poll(cx).is_ready() {
            this.stop = None;
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut this.input).poll_read(cx, buf)
    }
}

/// Serves any byte stream pair as stdio (for tests and embedding).
pub async fn serve_io<R, W>(server: Server, reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let backlog = std::sync::Arc::new(Backlog::default());
    // Told when the connection has finished: what is queued then is written
    // and the writer ends, even while a detached task (a handler's task
    // that keeps its `Context`) still holds a sender.
    let (finished, writer_done) = tokio::sync::oneshot::channel::<()>();
    let writer_task = tokio::spawn(write_loop(rx, writer, backlog.clone(), writer_done));
    let mut connection = Connection::new(server, Outbound::counted(tx, backlog.clone()));
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::with_capacity(4096);
    // Requests read while `MAX_IN_FLIGHT` run wait here, in order, for one
    // to end. Reading goes on meanwhile: what is not a request (an answer to
    // the server's ask, a cancellation) is taken in at once, since it may be
    // what ends one. Past `MAX_HELD` of them (or `MAX_LINE` bytes), nothing
    // more is read until one starts (back-pressure on the pipe).
    let mut held = Held::default();
    loop {
        while !held.lines.is_empty() && !connection.is_full(MAX_IN_FLIGHT) {
            if let Some(request) = held.pop() {
                receive_line(&mut connection, &request);
            }
        }
        if held.is_full() {
            connection.room(MAX_IN_FLIGHT).await;
            continue;
        }
        if !held.lines.is_empty() {
            // Whichever comes first: room for the first one held, or more
            // to read (the reader's buffer keeps what it has).
            tokio::select! {
                () = connection.room(MAX_IN_FLIGHT) => continue,
                available = reader.fill_buf() => drop(available?),
            }
        }
        line.clear();
        // A long message's buffer is not kept for the short ones after it.
        if line.capacity() > LINE_KEPT {
            line = Vec::with_capacity(4096);
        }
        // A request waits behind those held, never overtakes them.
        let full = !held.lines.is_empty() || connection.is_full(MAX_IN_FLIGHT);
        // Waiting for input ends too when the output failed (the client
        // went away with its input still open).
        let read = tokio::select! {
            biased;
            read = read_line(&mut reader, &mut line) => read?,
            () = backlog.broken() => LineRead::Eof,
        };
        match read {
            LineRead::InBuffer(end) => {
                let text = &reader.buffer()[..end];
                match held.takes(full, text) {
                    Some(id) => held.push(id, text.to_vec()),
                    None => receive_line(&mut connection, text),
                }
                reader.consume(end + 1);
            }
            LineRead::Eof => break,
            LineRead::TooLong(id) => {
                let error =
                    crate::error::McpError::invalid_request("Invalid request: message exceeds the maximum line length");
                connection.receive_rejected(id.as_ref(), &error);
            }
            LineRead::Line => match held.takes(full, &line) {
                Some(id) => held.push(id, std::mem::take(&mut line)),
                None => receive_line(&mut connection, &line),
            },
        }
        // Many lines may be read without waiting (the reader's buffer, a
        // pipe that is never empty): now and then the writer and the
        // requests that wait get their turn.
        tokio::task::consume_budget().await;
        // Past this many bytes unwritten, the next line waits for the client to read some.
        if backlog.over(MAX_UNWRITTEN) {
            backlog.below(MAX_UNWRITTEN).await;
        }
        // The client closed its end of the output: nothing more it sends
        // can be answered, so the input ends here (the running requests
        // are told to stop, and end as at the end of input).
        if backlog.is_broken() {
            break;
        }
    }
    // The client went away (the output failed): nothing it asked can be
    // answered, so what runs stops and what was held never starts.
    if backlog.is_broken() {
        connection.stop_running();
        held = Held::default();
    }
    // The input ended: what was held still runs, in order.
    while let Some(request) = held.pop() {
        connection.room(MAX_IN_FLIGHT).await;
        receive_line(&mut connection, &request);
    }
    connection.finish().await;
    let _ = finished.send(());
    writer_task.await.map_err(std::io::Error::other)?
}

/// The requests waiting for room to run (each with its id), and their bytes.
#[derive(Default)]
struct Held {
    lines: std::collections::VecDeque<(RequestId, Vec<u8>)>,
    bytes: usize,
}

impl Held {
    fn push(&mut self, id: RequestId, line: Vec<u8>) {
        self.bytes = self.bytes.saturating_add(line.len());
        self.lines.push_back((id, line));
    }

    fn pop(&mut self) -> Option<Vec<u8>> {
        let (_, line) = self.lines.pop_front()?;
        self.bytes = self.bytes.saturating_sub(line.len());
        Some(line)
    }

    /// Whether a line read while requests run `full` is a request to hold
    /// (its id). A line that cancels a request held drops that one first:
    /// it is never run, and never answered (as a running one that is
    /// cancelled is not). Each line is read once here.
    fn takes(&mut self, full: bool, line: &[u8]) -> Option<RequestId> {
        if !full {
            return None;
        }
        let n = match crate::jsonrpc::parse(trim(line)) {
            Ok(crate::jsonrpc::Message::Request(r)) => return Some(r.id),
            Ok(crate::jsonrpc::Message::Notification(n)) => n,
            _ => return None,
        };
        let id = crate::jsonrpc::cancelled_request(&n)?;
        let at = self.lines.iter().position(|(held, _)| *held == id);
        if let Some((_, line)) = at.and_then(|at| self.lines.remove(at)) {
            self.bytes = self.bytes.saturating_sub(line.len());
            tracing::debug!(%id, "request cancelled by the client before it started");
        }
        None
    }

    /// Whether reading waits until one starts.
    fn is_full(&self) -> bool {
        self.lines.len() >= MAX_HELD || self.bytes >= MAX_LINE
    }
}

/// Hands a line to the connection, without the whitespace around it; a
/// blank line is skipped.
fn receive_line(connection: &mut Connection, line: &[u8]) {
    let text = trim(line);
    if !text.is_empty() {
        connection.receive(text);
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &line[start..end]
}

enum LineRead {
    /// The line lies whole in the reader's buffer, before its newline at
    /// this offset: read there (no copy), then consumed with its newline.
    InBuffer(usize),
    /// The line is in the line buffer (it spanned reads).
    Line,
    /// The line was longer than [`MAX_LINE`]: not kept, but the id of the
    /// request it held, if any, was found on the way.
    TooLong(Option<RequestId>),
    Eof,
}

async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, line: &mut Vec<u8>) -> std::io::Result<LineRead> {
    // Past MAX_LINE the line is not kept: its bytes go through a scan that
    // keeps only the request's id.
    let mut too_long: Option<Box<id_scan::IdScan>> = None;
    loop {
        let available = reader.fill_buf().await?;
        let newline = memchr(available);
        // A line no longer than the buffer is within MAX_LINE.
        if let Some(end) = newline.filter(|_| line.is_empty() && too_long.is_none()) {
            return Ok(LineRead::InBuffer(end));
        }
        if available.is_empty() {
            return Ok(match too_long {
                Some(scan) => LineRead::TooLong(scan.request_id()),
                None if line.is_empty() => LineRead::Eof,
                None => LineRead::Line,
            });
        }
        let (chunk, done) = match newline {
            Some(i) => (&available[..i], i + 1),
            None => (available, available.len()),
        };
        match &mut too_long {
            None if line.len().saturating_add(chunk.len()) <= MAX_LINE => line.extend_from_slice(chunk),
            None => {
                let mut scan = Box::<id_scan::IdScan>::default();
                scan.feed(line);
                scan.feed(chunk);
                line.clear();
                too_long = Some(scan);
            }
            Some(scan) => scan.feed(chunk),
        }
        let found_newline = done != chunk.len();
        reader.consume(done);
        if found_newline {
            return Ok(match too_long {
                Some(scan) => LineRead::TooLong(scan.request_id()),
                None => LineRead::Line,
            });
        }
    }
}

/// The first newline in `bytes`: eight bytes at a time (a word has a zero
/// byte where `word ^ 0x0a0a..` does), then byte by byte in the last word.
fn memchr(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for word in words.by_ref() {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(word);
        let x = u64::from_ne_bytes(eight) ^ NEWLINES;
        if x.wrapping_sub(ONES) & !x & HIGHS != 0 {
            return word.iter().position(|&b| b == b'\n').map(|i| offset + i);
        }
        offset += 8;
    }
    words.remainder().iter().position(|&b| b == b'\n').map(|i| offset + i)
}

/// Writes what the connection sends, one message a line; when the output
/// fails, says so to the reader ([`Backlog::break_off`]).
async fn write_loop<W: AsyncWrite + Unpin>(
    rx: mpsc::UnboundedReceiver<Vec<u8>>,
    writer: W,
    backlog: std::sync::Arc<Backlog>,
    finished: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let written = write_lines(rx, writer, &backlog, finished).await;
    if written.is_err() {
        backlog.break_off();
    }
    written
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    writer: W,
    backlog: &Backlog,
    finished: tokio::sync::oneshot::Receiver<()>,
) -> std::io::Result<()> {
    let mut writer = tokio::io::BufWriter::with_capacity(64 * 1024, writer);
    let mut finished = std::pin::pin!(finished);
    let mut last = false;
    loop {
        // Once the connection has finished, what is queued and no more.
        let next = match last {
            true => rx.try_recv().ok(),
            false => tokio::select! {
                biased;
                message = rx.recv() => message,
                _ = &mut finished => {
                    last = true;
                    continue;
                }
            },
        };
        let Some(message) = next else { break };
        writer.write_all(&message).await?;
        writer.write_all(b"\n").await?;
        let mut written = message.len();
        while let Ok(message) = rx.try_recv() {
            writer.write_all(&message).await?;
            writer.write_all(b"\n").await?;
            written += message.len();
            // A long run is counted as it goes, not only at its end.
            if written >= LINE_KEPT {
                backlog.written(std::mem::take(&mut written), MAX_UNWRITTEN);
            }
        }
        writer.flush().await?;
        backlog.written(written, MAX_UNWRITTEN);
    }
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::memchr;

    #[test]
    fn memchr_finds_the_first_newline_anywhere() {
        for len in 0..40 {
            for at in 0..len {
                let mut bytes = vec![b'a'; len];
                bytes[at] = b'\n';
                if at + 3 < len {
                    bytes[at + 3] = b'\n';
                }
                // Bytes next to the newline's value do not count.
                bytes.iter_mut().filter(|b| **b == b'a').take(2).for_each(|b| *b = 0x0b);
                assert_eq!(memchr(&bytes), Some(at), "len {len}, at {at}");
            }
            assert_eq!(memchr(&vec![0x8a; len]), None);
        }
    }
}
