//! A message stream with one peer (a stdio process): requests run
//! concurrently and are answered out of order; `notifications/cancelled`
//! stops the matching handler and suppresses its response.
//!
//! Transports feed it raw messages and forward what it puts on the outbound
//! channel; it is where stream-level bookkeeping lives, not routing.

use crate::cancel::Cancellation;
use crate::dispatch::{Reply, Scope};
use crate::jsonrpc::{self, Message};
use crate::outbound::Outbound;
use crate::protocol::RequestId;
use crate::server::Server;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::task::AbortHandle;

/// A request running: its cancellation, its task, whether it is
/// long-lived, and its serial number on this connection.
type Running = (Cancellation, AbortHandle, bool, u64);

/// The requests running, by id, and what wakes [`Connection::finish`] when
/// the last one ends.
#[derive(Default)]
struct InFlight {
    table: Mutex<HashMap<RequestId, Running>>,
    emptied: tokio::sync::Notify,
    /// Told when a request ends, for a reader waiting for room.
    room: tokio::sync::Notify,
}

impl InFlight {
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Running>> {
        lock(&self.table)
    }

    /// A request is cancelled: its entry goes, and its token is cancelled
    /// under the table's lock, so that its task, which looks at the token
    /// under that lock as it answers, never answers it (the id may already
    /// be a later request's).
    fn cancel(&self, id: &RequestId) -> Option<Running> {
        let mut table = self.table();
        let entry = table.remove(id);
        if let Some((cancel, ..)) = &entry {
            cancel.cancel();
        }
        if table.is_empty() {
            self.emptied.notify_one();
        }
        self.room.notify_one();
        entry
    }
}

/// Held by a request's task: when it ends, however (answered, aborted,
/// panicked), its entry goes, unless the id was since given to a later
/// request (a cancelled one's id may be used again).
struct Entry {
    in_flight: Arc<InFlight>,
    id: RequestId,
    serial: u64,
    /// [`answer`](Self::answer) removed it already.
    answered: bool,
}

impl Entry {
    /// Ends the request with its answer, unless `cancel` fired (looked at
    /// under the table's lock, under which a client's cancellation fires
    /// it): the answer is queued under that lock, as the entry goes. So
    /// [`Connection::finish`], which looks at the table under that lock,
    /// finds the request either running or with its answer queued before
    /// the writer's last look, whichever thread each runs on; and once the
    /// answer is queued, the reader no longer finds the id taken (it looks
    /// under the same lock), so a client that reads the answer may use the
    /// id again at once.
    fn answer(mut self, outbound: &Outbound, body: Vec<u8>, cancel: &Cancellation) {
        let mut table = self.in_flight.table();
        if !cancel.is_cancelled() {
            let _ = outbound.send(body);
        }
        self.remove_from(&mut table);
        self.answered = true;
    }

    fn remove_from(&self, table: &mut HashMap<RequestId, Running>) {
        if table.get(&self.id).is_some_and(|e| e.3 == self.serial) {
            table.remove(&self.id);
            self.in_flight.room.notify_one();
        }
        if table.is_empty() {
            self.in_flight.emptied.notify_one();
        }
    }
}

thread_local! {
    /// Set on the thread inside `tokio::spawn` of a request's task, whose
    /// future a runtime shutting down drops there, with the table locked.
    static SPAWNING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// [`SPAWNING`] set while it lives: cleared when dropped, also by a panic
/// unwinding out of the spawn (a dropped future's `Drop` that panics), so
/// that later entries of this thread still leave the table.
struct Spawning;

impl Spawning {
    fn enter() -> Spawning {
        SPAWNING.with(|s| s.set(true));
        Spawning
    }
}

impl Drop for Spawning {
    fn drop(&mut self) {
        SPAWNING.with(|s| s.set(false));
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if !self.answered && !SPAWNING.with(std::cell::Cell::get) {
            let mut table = self.in_flight.table();
            self.remove_from(&mut table);
        }
    }
}

/// The answer to request `id` whose serving panicked with `message`
/// (logged): -32603, [`PANICKED`](crate::dispatch::PANICKED).
fn panicked(id: &RequestId, message: &str) -> Vec<u8> {
    tracing::error!(%id, "serving the request panicked: {message}");
    let error = crate::error::McpError::internal(crate::dispatch::PANICKED);
    Reply::error(Some(id), &error).body
}

/// One peer's message stream.
pub struct Connection {
    server: Server,
    session: Option<Arc<crate::session::Session>>,
    forwarder: Option<AbortHandle>,
    outbound: Outbound,
    in_flight: Arc<InFlight>,
    /// Requests taken so far.
    serial: u64,
    /// Whether requests get their first poll right here, when received:
    /// on a current-thread runtime, where a task would run on this same
    /// thread anyway, only later.
    inline: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Connection {
    /// A connection that writes every outgoing message to `outbound`.
    pub fn new(server: Server, outbound: Outbound) -> Self {
        Connection {
            server,
            session: None,
            forwarder: None,
            outbound,
            in_flight: Arc::default(),
            serial: 0,
            inline: tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread),
        }
    }

    /// Takes one incoming message (one line, without its newline).
    pub fn receive(&mut self, bytes: &[u8]) {
        match jsonrpc::parse(bytes) {
            Err(rejected) => {
                let _ = self
                    .outbound
                    .send(Reply::error(rejected.id.as_ref(), &rejected.error).body);
            }
            // The first `initialize` opens the process's session; a later one
            // is a request of that session (and answered as an error there).
            Ok(Message::Request(request))
                if request.method == "initialize"
                    && self.session.is_none()
                    && !crate::meta::has_protocol_version(request.params.as_deref()) =>
            {
                let reply = match crate::legacy::initialize(&self.server, &request, None, None) {
                    Ok((session, body)) => {
                        let forward =
                            crate::legacy::events::forward(self.server.clone(), session.clone(), self.outbound.clone());
                        self.forwarder = Some(tokio::spawn(forward).abort_handle());
                        self.session = Some(session);
                        crate::jsonrpc::encode_result_raw(&request.id, &body)
                    }
                    Err(e) => Reply::error(Some(&request.id), &e).body,
                };
                let _ = self.outbound.send(reply);
            }
            Ok(Message::Request(request)) => self.spawn(request),
            Ok(Message::Notification(n)) => {
                let session = self.session.as_ref().map(|s| (None, s.version));
                crate::telemetry::notification(&n.method, n.params.as_deref(), "pipe", None, session, || {
                    if n.method == "notifications/cancelled" {
                        if let Some(id) = crate::jsonrpc::cancelled_request(&n) {
                            if let Some((_, abort, ..)) = self.in_flight.cancel(&id) {
                                abort.abort();
                                tracing::debug!(%id, "request cancelled by the client");
                            }
                        }
                    } else {
                        tracing::debug!(method = %n.method, "notification ignored");
                    }
                });
            }
            Ok(Message::Response(r)) => {
                let id = r.id.clone();
                if !self.session.as_ref().is_some_and(|s| s.deliver(r)) {
                    tracing::debug!(%id, "response with no matching request ignored");
                }
            }
        }
    }

    fn spawn(&mut self, request: jsonrpc::Request) {
        let server = self.server.clone();
        let outbound = self.outbound.clone();
        let cancel = Cancellation::new();
        let id = request.id.clone();
        let task_cancel = cancel.clone();
        let long_lived = crate::method::Method::parse(&request.method).is_some_and(|m| m.is_long_lived());
        // Ids are unique among requests in flight (JSON-RPC; MCP forbids
        // reuse): a second one would take the first one's place here, and
        // the first could then never be cancelled or ended.
        if self.in_flight.table().contains_key(&id) {
            let error = crate::error::McpError::id_in_flight(&id);
            let _ = self.outbound.send(Reply::error(Some(&id), &error).body);
            return;
        }
        // A 2026-07-28 request (its `_meta` names the revision) is served
        // statelessly, whatever session an earlier `initialize` opened, as
        // over HTTP: its asks are `input_required` rounds, its tasks tasks.
        let session = self
            .session
            .as_ref()
            .filter(|_| !crate::meta::has_protocol_version(request.params.as_deref()))
            .cloned();
        self.serial = self.serial.wrapping_add(1);
        let entry = Entry {
            in_flight: self.in_flight.clone(),
            id: id.clone(),
            serial: self.serial,
            answered: false,
        };
        // Boxed once here: the runtime then moves a pointer, not the
        // request's whole state machine, into the task, its stages and out.
        let mut task = crate::boxed::boxed!(async move {
            let entry = entry;
            let scope = Scope {
                headers: Default::default(),
                outbound: Some(outbound.clone()),
                cancel: task_cancel.clone(),
                principal: None,
                session,
                identity: None,
                hide_unreachable: false,
                transport: crate::dispatch::Transport::Stdio,
                peer: None,
            };
            // A panic while serving it, in this first poll or a later one
            // (on whichever thread runs the task), is answered: a client
            // waiting for the answer would otherwise wait for ever.
            let serving = std::pin::pin!(crate::dispatch::handle_request(&server, &request, scope));
            let reply = match crate::panic::CatchUnwind::new(serving).await {
                Ok(reply) => reply.body,
                Err(message) => panicked(&entry.id, &message),
            };
            entry.answer(&outbound, reply, &task_cancel);
        });
        if self.inline {
            // On one thread nothing runs beside the reader anyway: a request
            // that is answered in its first poll (most are) is answered here,
            // without a task; one that waits becomes a task, polled on from
            // where it stopped.
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            match crate::panic::call_caught(|| std::future::Future::poll(task.as_mut(), &mut cx)) {
                Ok(std::task::Poll::Ready(())) => return,
                Ok(std::task::Poll::Pending) => {}
                Err(message) => {
                    let _ = self.outbound.send(panicked(&id, &message));
                    return;
                }
            }
        }
        // The lock is held across the spawn so that the task's own removal
        // cannot run before its entry is inserted. A runtime shutting down
        // drops the task inside the spawn, on this thread: its entry, not
        // inserted, then leaves the table alone (it would lock it again),
        // and the task, already finished, is not inserted at all.
        let mut table = self.in_flight.table();
        let spawning = Spawning::enter();
        let abort = tokio::spawn(task).abort_handle();
        drop(spawning);
        if !abort.is_finished() {
            table.insert(id, (cancel, abort, long_lived, self.serial));
        }
    }

    /// Whether `max` requests or more are running.
    pub fn is_full(&self, max: usize) -> bool {
        self.in_flight.table().len() >= max
    }

    /// Waits while `max` requests or more are running, so that a client
    /// sending faster than they end is slowed by the pipe (back-pressure)
    /// rather than filling memory.
    pub async fn room(&self, max: usize) {
        loop {
            let ended = self.in_flight.room.notified();
            if self.in_flight.table().len() < max {
                return;
            }
            ended.await;
        }
    }

    /// Stops every request running, as a client's cancellation does (its
    /// `Cancellation` fires, its future is dropped): the client can no
    /// longer be answered.
    pub(crate) fn stop_running(&mut self) {
        // Cancelled under the table's lock, as a client's cancellation is.
        let running: Vec<Running> = self
            .in_flight
            .table()
            .drain()
            .map(|(_, running)| {
                running.0.cancel();
                running
            })
            .collect();
        for (_, abort, ..) in running {
            abort.abort();
        }
    }

    /// Ends the stream: closes subscription streams, then waits for every
    /// other request still running to finish (and be answered).
    pub async fn finish(mut self) {
        if let Some(f) = self.forwarder.take() {
            f.abort();
        }
        // Nothing the client could answer arrives any more, and it hears
        // of no resource again: what it subscribed to is given back now,
        // even while a detached task (a handler's, keeping its `Context`)
        // holds the session on (a gateway stops following them upstream).
        if let Some(session) = &self.session {
            session.input_ended();
        }
        self.in_flight.table().retain(|_, (cancel, abort, long_lived, _)| {
            if *long_lived {
                cancel.cancel();
                abort.abort();
            }
            !*long_lived
        });
        loop {
            let emptied = self.in_flight.emptied.notified();
            tokio::pin!(emptied);
            // Listening before looking: an end in between is not missed.
            emptied.as_mut().enable();
            if self.in_flight.table().is_empty() {
                return;
            }
            emptied.await;
        }
    }
}

impl Connection {
    /// Answers a message the transport itself had to reject (for example an
    /// over-long line) with an error, naming the request's id when the
    /// transport found one.
    pub fn receive_rejected(&mut self, id: Option<&crate::protocol::RequestId>, error: &crate::error::McpError) {
        let _ = self.outbound.send(Reply::error(id, error).body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set by the tool below once it has waited: the next span exit panics.
    static ARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// A subscriber whose span exit panics once armed: code outside any
    /// handler that panics in a later poll of a request's future.
    struct PanicsOnExit;

    impl tracing::Subscriber for PanicsOnExit {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, _: &tracing::Event<'_>) {}
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {
            if ARMED.swap(false, std::sync::atomic::Ordering::SeqCst) {
                panic!("the subscriber failed");
            }
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_request_whose_serving_panics_after_it_waited_is_answered() {
        let _subscriber = tracing::subscriber::set_default(PanicsOnExit);
        let tool = crate::protocol::Tool {
            name: "wait".into(),
            input_schema: serde_json::json!({"type": "object"}),
            ..Default::default()
        };
        let wait = crate::server::ToolEntry::dynamic(tool, |_args, _ctx| async {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            ARMED.store(true, std::sync::atomic::Ordering::SeqCst);
            "waited"
        });
        let server = Server::builder().tool_entry(wait).build().unwrap();
        let (outbound, mut answers) = crate::outbound::stream();
        let mut connection = Connection::new(server, outbound);
        connection.receive(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#);
        let answer = tokio::time::timeout(std::time::Duration::from_secs(5), answers.recv())
            .await
            .expect("answered, not left waiting");
        let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(answer["id"], 7, "{answer}");
        assert_eq!(answer["error"]["code"], -32603, "{answer}");
        assert_eq!(answer["error"]["message"], crate::dispatch::PANICKED, "{answer}");
        connection.finish().await;
    }

    #[tokio::test]
    async fn a_session_whose_input_ended_follows_no_resource() {
        let a = crate::protocol::Resource {
            uri: "file:///a".into(),
            name: "a".into(),
            ..Default::default()
        };
        let a = crate::server::ResourceEntry::dynamic(a, |_uri, _ctx| async { "a" });
        let server = Server::builder().resource_entry(a).build().unwrap();
        let (outbound, mut answers) = crate::outbound::stream();
        let mut connection = Connection::new(server, outbound);
        connection.receive(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        );
        connection.receive(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        connection.receive(br#"{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///a"}}"#);
        loop {
            let answer: serde_json::Value = serde_json::from_slice(&answers.recv().await).unwrap();
            if answer["id"] == 2 {
                assert!(answer.get("result").is_some(), "{answer}");
                break;
            }
        }
        // Held on, as a detached task of a handler would hold it.
        let session = connection.session.clone().unwrap();
        assert_eq!(session.subscribed(), ["file:///a"]);
        connection.finish().await;
        assert!(session.subscribed().is_empty());
    }
}
