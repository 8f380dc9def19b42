//! One proxied request (`tools/call`, `prompts/get`, `resources/read`)
//! through its rounds.
//!
//! - A 2026-07-28 upstream's `input_required` goes to the caller as this
//!   server's own round: the upstream's asks as they are, its
//!   `requestState` sealed inside ours; the caller's answers go back up with
//!   it. Nothing is kept here, so any replica serves the next round.
//! - A 2025-11-25 upstream asks with a request of its own in the middle of
//!   the call. The call stays open on this replica, parked under an id the
//!   caller's round carries (sealed); the ask goes to the caller as a round,
//!   and the answer comes back as the reply to the upstream's request. A
//!   round that reaches a replica where the call is not parked (another
//!   replica's, or one that expired) is refused with a retryable error.
//! - A 2025-11-25 upstream's "URL elicitation required" error (-32042),
//!   which 2026-07-28 does not have, goes to a 2026-07-28 caller as a round
//!   asking each URL elicitation; once the caller accepted them all, the
//!   call is made again. A 2025-11-25 caller gets the error as it is.

use crate::cancel::Cancellation;
use crate::client::{Ask, AskFuture, Client, ClientBuilder, ClientError, Era, Note};
use crate::error::McpError;
use crate::mrtr::{Flow, Halt, Input, InputRequired};
use crate::protocol::{ClientCapabilities, ClientCapability, DetailedTask, LoggingLevel};
use crate::server::{Context, FromContext};
use crate::tasks::relay;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

mod task_relay;
mod url;
use url::{url_accepted, url_in_task, url_round, URL_ELICITATION_REQUIRED};

/// How long a 2025-11-25 upstream call waits, parked, for its caller's
/// answer before it is cancelled.
const PARK_TTL: Duration = Duration::from_secs(600);

/// Calls of one upstream parked at once, at most: past it, an upstream call
/// that asks is cancelled and its caller told to retry.
const MAX_PARKED: usize = 1024;

/// Of those, at most this many for one caller (its principal, else its
/// address): a caller that never answers cannot keep the others' calls
/// from asking.
const MAX_PARKED_PER_CALLER: usize = 32;

/// An ask of the upstream's and where its answer goes.
type Asked = (Ask, oneshot::Sender<Result<Value, McpError>>);

/// The open calls that asks are routed to, by upstream request id.
#[derive(Default, Clone)]
pub(crate) struct Routes(Arc<Mutex<HashMap<i64, Route>>>);

/// Where one call's asks go, and whether it is parked (its asks are with
/// its caller: it asks nothing more until they are answered).
#[derive(Clone)]
struct Route {
    id: i64,
    asks: mpsc::Sender<Asked>,
    parked: Arc<std::sync::atomic::AtomicBool>,
    /// The upstream's task the call waits for (`tasks/result`), whose asks
    /// name it.
    task: Option<String>,
}

impl Routes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Route>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The route of the call an ask is about: the one waiting for the task
    /// the ask names, the one the transport named, else the only open call
    /// that is not parked; none when that is not one call.
    fn find(&self, related: Option<i64>, task: Option<&str>) -> Option<Route> {
        let routes = self.lock();
        if let Some(task) = task {
            if let Some(route) = routes.values().find(|r| r.task.as_deref() == Some(task)) {
                return Some(route.clone());
            }
        }
        if let Some(id) = related {
            return routes.get(&id).cloned();
        }
        let mut free = routes
            .values()
            .filter(|r| !r.parked.load(std::sync::atomic::Ordering::Acquire));
        match (free.next(), free.next()) {
            (Some(route), None) => Some(route.clone()),
            _ => None,
        }
    }

    /// Marks call `id` parked, or running again.
    fn set_parked(&self, id: i64, parked: bool) {
        if let Some(route) = self.lock().get(&id) {
            route.parked.store(parked, std::sync::atomic::Ordering::Release);
        }
    }

    /// [`find`](Self::find)'s call id.
    fn find_id(&self, related: Option<i64>) -> Option<i64> {
        self.find(related, None).map(|r| r.id)
    }

    /// The upstream client's answerer: an ask goes to the call it belongs to.
    pub(crate) fn answerer(&self, upstream: Arc<str>) -> impl Fn(Ask) -> AskFuture + Send + Sync + 'static {
        let routes = self.clone();
        move |ask: Ask| {
            let task = ask.params["_meta"][crate::protocol::META_RELATED_TASK]["taskId"].as_str();
            let route = routes.find(ask.related, task);
            let upstream = upstream.clone();
            Box::pin(async move {
                let Some(route) = route else {
                    return Err(McpError::internal(format!(
                        "the gateway cannot tell which call {} of upstream `{upstream}` belongs to \
                         (several calls are open on its stdio)",
                        ask.method
                    )));
                };
                let (tx, rx) = oneshot::channel();
                route
                    .asks
                    .send((ask, tx))
                    .await
                    .map_err(|_| McpError::internal("the call that asked has ended"))?;
                rx.await
                    .unwrap_or_else(|_| Err(McpError::internal("the caller did not answer in time")))
            }) as AskFuture
        }
    }
}

/// An upstream call in progress. Dropped before its result (the caller
/// went away, its round expired), it is cancelled upstream.
struct Call {
    id: i64,
    /// The progress token the call's first request sent (its id), which
    /// stays the call's when it goes on as `tasks/result`.
    token: i64,
    done: oneshot::Receiver<Result<Value, ClientError>>,
    asks: mpsc::Receiver<Asked>,
    routes: Routes,
    client: Client,
    finished: bool,
    /// A 2025-11-25 task-augmented `tools/call`: its answer is a task.
    augmented: bool,
    /// The upstream's task this call waits for (`tasks/result`): cancelled
    /// with the call.
    task: Option<String>,
}

impl Call {
    /// The upstream's task a task-augmented call's answer created.
    fn created_task(&self, result: &Value) -> Option<String> {
        let id = result.get("task")?.get("taskId")?.as_str()?;
        self.augmented.then(|| id.to_owned())
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.id);
        if self.finished {
            return;
        }
        let client = self.client.clone();
        let id = self.id;
        let task = self.task.take();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                client.cancel_request(id, "the caller went away").await;
                if let Some(task) = task {
                    if let Err(e) = client.request("tasks/cancel", json!({ "taskId": task })).await {
                        tracing::debug!(upstream = %client.name(), "cannot cancel its task {task}: {e}");
                    }
                }
            });
        }
    }
}

/// One ask of a parked call: its key, what the caller is asked, where the answer goes.
struct Waiting {
    key: String,
    request: Value,
    reply: oneshot::Sender<Result<Value, McpError>>,
}

/// A call waiting for its caller's answers.
struct Parked {
    call: Call,
    waiting: Vec<Waiting>,
    /// Whose call it is (`tasks::caller_key`), for the bound per caller.
    caller: String,
    /// Which parking this is (a call is parked again at each round): its
    /// expiry removes this one only.
    parking: u64,
}

/// What a round carries to the next, sealed in `requestState`.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Resume {
    /// A 2026-07-28 upstream's own `requestState`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    upstream: Option<String>,
    /// The parked call of a 2025-11-25 upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    park: Option<String>,
    /// The keys of the URL elicitations a 2025-11-25 upstream's -32042
    /// asked for, which the caller must accept before the call is made again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    url: Vec<String>,
}

/// The capabilities a 2025-11-25 upstream may ask of a caller, one bit each.
const ASKS: [ClientCapability; 4] = [
    ClientCapability::ElicitationForm,
    ClientCapability::ElicitationUrl,
    ClientCapability::Sampling,
    ClientCapability::Roots,
];

/// Every bit of [`ASKS`]: what the gateway's first session declares.
pub(crate) const ALL_ASKS: u8 = 0b1111;

/// Sessions of fewer capabilities one 2025-11-25 upstream may have open,
/// besides its first: past them, a caller is served by the first.
const MAX_NARROWER: usize = 8;

/// Which of [`ASKS`] `caps` declares.
fn asks_of(caps: &ClientCapabilities) -> u8 {
    ASKS.iter()
        .enumerate()
        .filter(|(_, c)| c.is_declared_in(caps))
        .fold(0, |mask, (i, _)| mask | (1 << i))
}

/// The capabilities that declare the asks in `mask`.
pub(crate) fn capabilities_of(mask: u8) -> ClientCapabilities {
    let has = |i: usize| mask & (1 << i) != 0;
    let mut caps = Map::new();
    if has(0) || has(1) {
        let mut modes = Map::new();
        if has(0) {
            modes.insert("form".into(), json!({}));
        }
        if has(1) {
            modes.insert("url".into(), json!({}));
        }
        caps.insert("elicitation".into(), Value::Object(modes));
    }
    if has(2) {
        caps.insert("sampling".into(), json!({}));
    }
    if has(3) {
        caps.insert("roots".into(), json!({}));
    }
    serde_json::from_value(Value::Object(caps)).unwrap_or_default()
}

/// An upstream's error with the code this server sends for it: 2025-11-25's
/// "resource not found" (-32002) is -32602 (its `data`, with the `uri` a
/// 2025-11-25 server gives, kept), as 2026-07-28 has it; a legacy session
/// is told -32002 again, as for this server's own resources.
fn current_code(e: McpError) -> McpError {
    let not_found = e.message().to_ascii_lowercase().contains("not found");
    if e.code() == crate::error::ErrorCode::INVALID_PARAMS && not_found && e.data().and_then(|d| d.get("uri")).is_some()
    {
        // 2026-07-28's own "resource not found".
        return e.marked_resource_not_found();
    }
    if e.code() != crate::error::ErrorCode::LEGACY_RESOURCE_NOT_FOUND {
        return e;
    }
    let data = match e.data() {
        Some(data) if data.is_object() => data.clone(),
        Some(other) => json!({ "upstreamData": other }),
        None => json!({}),
    };
    McpError::invalid_params(e.message().to_owned())
        .with_data(data)
        .marked_resource_not_found()
}

/// A proxied server: its client, and its calls in progress.
pub(crate) struct Upstream {
    pub client: Client,
    /// What the ids of its tasks handed to callers name it by (see
    /// `tasks::relay`): its prefix, unique to it where upstreams' names
    /// (a program's, a host's) may not be.
    relay_key: Arc<str>,
    routes: Routes,
    parked: Arc<Mutex<HashMap<String, Parked>>>,
    /// How to open another session of a 2025-11-25 upstream (`None` for
    /// such a session itself).
    base: Option<ClientBuilder>,
    /// A 2025-11-25 upstream hears a session's capabilities once, when it
    /// opens: a caller that declared fewer than the first session did is
    /// served by a session that declared just those (opened at its first
    /// call, another process for a stdio upstream), so that the upstream's
    /// tools see what the caller can answer. By the asks it declared; each
    /// opened once, and opening one holds up only the callers that need it.
    narrower: Mutex<HashMap<u8, Arc<tokio::sync::OnceCell<Arc<Upstream>>>>>,
    /// Told when one of those sessions hears that the upstream's lists
    /// changed (a server may tell only the session that changed them).
    pub(crate) lists_changed: Arc<tokio::sync::Notify>,
}

impl Upstream {
    pub(crate) fn new(client: Client, relay_key: Arc<str>, routes: Routes, base: Option<ClientBuilder>) -> Self {
        Upstream {
            client,
            relay_key,
            routes,
            parked: Arc::default(),
            base,
            narrower: Mutex::default(),
            lists_changed: Arc::default(),
        }
    }

    /// The session of this 2025-11-25 upstream that declared what `caps`
    /// declares, opened if it is not yet.
    async fn session_for(&self, caps: &ClientCapabilities) -> Result<Option<Arc<Upstream>>, McpError> {
        let mask = asks_of(caps);
        let Some(base) = self.base.as_ref().filter(|_| mask != ALL_ASKS) else {
            return Ok(None);
        };
        let cell = {
            let mut sessions = self.narrower.lock().unwrap_or_else(|p| p.into_inner());
            match sessions.get(&mask) {
                Some(cell) => cell.clone(),
                None if sessions.len() >= MAX_NARROWER => return Ok(None),
                None => sessions.entry(mask).or_default().clone(),
            }
        };
        // Callers of the same asks wait for the one opening; others do not
        // (one that fails leaves the cell empty: the next caller tries again).
        cell.get_or_try_init(|| self.open_narrower(base, mask))
            .await
            .map(|session| Some(session.clone()))
    }

    /// Opens a session of this 2025-11-25 upstream that declares `mask`'s asks.
    async fn open_narrower(&self, base: &ClientBuilder, mask: u8) -> Result<Arc<Upstream>, McpError> {
        let routes = Routes::default();
        let name: Arc<str> = Arc::from(self.client.name());
        let client = base
            .clone()
            .era(Era::Legacy)
            .capabilities(capabilities_of(mask))
            .on_ask(routes.answerer(name))
            .connect()
            .await?;
        tracing::debug!(upstream = %self.client.name(), "a session for callers that declared {:?}", capabilities_of(mask));
        // Its list changes are the upstream's: the lists are read again.
        let mut notes = client.notifications();
        let changed = self.lists_changed.clone();
        tokio::spawn(async move {
            loop {
                match notes.recv().await {
                    Ok(note)
                        if note.message["method"]
                            .as_str()
                            .is_some_and(|m| m.ends_with("/list_changed")) =>
                    {
                        changed.notify_one();
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Ok(Arc::new(Upstream::new(client, self.relay_key.clone(), routes, None)))
    }

    fn failed(&self, e: ClientError) -> Halt {
        Halt::Protocol(current_code(McpError::from(e)))
    }

    /// Sends `method` with `params` (the name or URI already the upstream's)
    /// for the caller in `ctx`; the upstream's result, or a round to ask.
    pub(crate) async fn forward(&self, method: &str, mut params: Map<String, Value>, ctx: &Context) -> Flow<Value> {
        let input = Input::from_context(ctx).map_err(Halt::Protocol)?;
        let resume: Resume = input.state().unwrap_or_default();
        let progress = ctx.meta().progress_token.is_some();
        if self.client.era() == Some(Era::Legacy) {
            let session = self
                .session_for(ctx.client_capabilities())
                .await
                .map_err(Halt::Protocol)?;
            let session = session.as_deref().unwrap_or(self);
            return session
                .forward_legacy(method, params, ctx, &input, resume, progress)
                .await;
        }
        // Answers go up whenever the caller gave some (extra keys included:
        // the upstream ignores what it did not ask), its state with them.
        if !input.answers().is_empty() {
            params.insert("inputResponses".into(), Value::Object(input.answers().clone()));
        }
        if let Some(state) = resume.upstream {
            params.insert("requestState".into(), Value::String(state));
        }
        // The caller's capabilities, so that the upstream asks only what it can answer.
        let caps = serde_json::to_value(ctx.client_capabilities()).unwrap_or_else(|_| json!({}));
        let mut meta = json!({ crate::protocol::META_CLIENT_CAPABILITIES: caps });
        if let Some(level) = ctx.meta().log_level {
            meta[crate::protocol::META_LOG_LEVEL] = json!(level);
        }
        params.insert("_meta".into(), meta);
        let call = self.start(method, params, progress);
        let result = self.finish(call, ctx).await?;
        let result = match result["resultType"].as_str() {
            Some("input_required") => {
                let asks = result["inputRequests"].as_object().cloned().unwrap_or_default();
                check_capabilities(asks.values(), input.capabilities())?;
                let upstream = result["requestState"].as_str().map(str::to_owned);
                input.save(&Resume {
                    upstream,
                    ..Resume::default()
                })?;
                return Err(Halt::Ask(InputRequired {
                    input_requests: asks,
                    request_state: None,
                }));
            }
            Some("task") => {
                let id = result["taskId"].as_str().unwrap_or_default().to_owned();
                if method == "tools/call" && self.hand_over(result, ctx)? {
                    return Ok(json!({"resultType": "complete", "content": []}));
                }
                // A caller that cannot follow it (or a task where none is
                // expected): followed here to its end.
                crate::calls::Calls::follow(&self.client, &id)
                    .await
                    .map_err(Halt::Protocol)?
            }
            _ => result,
        };
        Ok(result)
    }

    /// Hands the upstream's task (its `CreateTaskResult`) to the caller
    /// under a relayed id (`tasks::relay`), when the caller declared the
    /// tasks extension and the call can answer with it; the call's result
    /// is then the task.
    fn hand_over(&self, created: Value, ctx: &Context) -> Result<bool, Halt> {
        if !crate::tasks::declared(ctx.client_capabilities()) {
            return Ok(false);
        }
        let Ok(mut task) = serde_json::from_value::<DetailedTask>(created) else {
            return Ok(false);
        };
        let sealer = &ctx.server().inner.sealer;
        task.task_id = relay::seal_id(sealer, &self.relay_key, &task.task_id, ctx.principal(), task.ttl_ms)
            .map_err(Halt::Protocol)?;
        Ok(ctx.relay_task(task))
    }

    /// A 2025-11-25 upstream: the call runs (or resumes) until its result
    /// or its next asks, which park it.
    async fn forward_legacy(
        &self,
        method: &str,
        params: Map<String, Value>,
        ctx: &Context,
        input: &Input,
        resume: Resume,
        progress: bool,
    ) -> Flow<Value> {
        // Whose call it is, for the bound per caller: wanted only when it parks.
        let caller = || crate::tasks::caller_key(ctx.principal(), ctx.scope.peer);
        // Run as a task (the caller declared the extension and the call
        // outlived its first moments), the upstream's asks are the task's:
        // the call stays open here while the caller answers with
        // `tasks/update`, on whichever replica, and the task's cancellation
        // is what cancels it.
        let task = ctx
            .scope
            .task
            .get()
            .filter(|t| t.is_task())
            .map(|shared| crate::tasks::Task { shared: shared.clone() });
        // Kept for making the call again after a -32042 in a task; a call
        // that is no task answers one with a round and needs no copy.
        let retry = task.as_ref().map(|_| params.clone());
        let (mut call, park) = match resume.park {
            Some(park) => {
                let parked = self
                    .parked
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&park)
                    .ok_or_else(|| Halt::Protocol(not_parked(self.client.name())))?;
                // Each answer goes up; what is still unanswered is asked again.
                let mut unanswered = Vec::new();
                for waiting in parked.waiting {
                    match input.answers().get(&waiting.key).filter(|a| !a.is_null()) {
                        Some(answer) => drop(waiting.reply.send(Ok(answer.clone()))),
                        None => unanswered.push(waiting),
                    }
                }
                if !unanswered.is_empty() {
                    return self.ask(park, parked.call, unanswered, input, caller());
                }
                self.routes.set_parked(parked.call.id, false);
                (parked.call, park)
            }
            None => {
                url_accepted(&resume.url, input, self.client.name())?;
                (self.start(method, params, progress), crate::tasks::new_id())
            }
        };
        let cancel = task
            .as_ref()
            .map_or_else(|| ctx.cancellation().clone(), |t| t.shared.cancel.clone());
        let mut asking = tokio::task::JoinSet::new();
        let mut notes = self.client.notifications();
        // The upstream's request waits for as long as the call is parked;
        // running, it answers or asks within the client's timeout (unless
        // it runs as a task, which takes the time it takes).
        let quiet = tokio::time::sleep(self.client.timeout());
        tokio::pin!(quiet);
        loop {
            let asked = tokio::select! {
                note = notes.recv() => {
                    if let Ok(note) = note {
                        self.pass_on(&note, &call, ctx);
                    }
                    continue;
                }
                () = &mut quiet, if task.is_none() && call.task.is_none() => {
                    return Err(self.failed(ClientError::Transport {
                        upstream: self.client.name().to_owned(),
                        detail: format!("no answer to {method} within {} s", self.client.timeout().as_secs()),
                    }));
                }
                done = &mut call.done => {
                    call.finished = true;
                    let done = done
                        .unwrap_or_else(|_| Err(ClientError::Closed { upstream: self.client.name().to_owned(), why: "the call was dropped".into() }));
                    let result = match done {
                        Err(ClientError::Rpc(e))
                            if e.code() == URL_ELICITATION_REQUIRED
                                && ctx.protocol_version() == crate::protocol::LATEST_PROTOCOL_VERSION =>
                        {
                            let (Some(task), Some(retry)) = (&task, &retry) else {
                                return url_round(e, input);
                            };
                            url_in_task(e, task, self.client.name()).await?;
                            call = self.start(method, retry.clone(), progress);
                            continue;
                        }
                        done => done.map_err(|e| self.failed(e))?,
                    };
                    match call.created_task(&result) {
                        Some(task) => Err(task),
                        // The upstream's task means nothing to the caller.
                        None => return Ok(crate::tasks::legacy::unrelated(result)),
                    }
                }
                asked = call.asks.recv() => Ok(asked),
                _ = cancelled(&cancel) => {
                    return Err(Halt::Protocol(McpError::internal("the call was cancelled")));
                }
            };
            let asked = match asked {
                Ok(asked) => asked,
                // The upstream made the call a task: its result (and its
                // asks, each naming the task) come on `tasks/result`.
                Err(task) => {
                    let params = json!({ "taskId": task });
                    let token = call.token;
                    call = self.start_as("tasks/result", params, task);
                    call.token = token;
                    continue;
                }
            };
            let Some(first) = asked else {
                continue;
            };
            // Asked before a task-augmented call was made the upstream's task,
            // it is a round of the call (the upstream's `input_required`
            // before its task), not an ask of the caller's task.
            if let Some(task) = task.as_ref().filter(|_| !call.augmented) {
                // Each ask waits for its answer on its own; the call goes on.
                let (ask, reply) = first;
                let task = task.clone();
                asking.spawn(async move {
                    let _ = reply.send(ask_in_task(&task, ask).await);
                });
                continue;
            }
            // Asks made together (a server's `input.ask((a, b, c))`) arrive
            // together: they go to the caller in one round.
            let mut asks = vec![first];
            while let Ok(Some(more)) = tokio::time::timeout(Duration::from_millis(20), call.asks.recv()).await {
                asks.push(more);
            }
            let mut waiting: Vec<Waiting> = Vec::with_capacity(asks.len());
            for (i, (ask, reply)) in asks.into_iter().enumerate() {
                let mut params = ask.params;
                let key = take_key(&mut params)
                    .filter(|k| waiting.iter().all(|w| &w.key != k))
                    .unwrap_or_else(|| format!("upstream-{}-{i}", input.round()));
                let request = json!({"method": ask.method, "params": params});
                waiting.push(Waiting { key, request, reply });
            }
            // An ask the caller answered already (answers sent ahead, under
            // the key the upstream uses) is answered at once.
            let mut unanswered = Vec::with_capacity(waiting.len());
            for w in waiting {
                match input.answers().get(&w.key).filter(|a| !a.is_null()) {
                    Some(answer) => drop(w.reply.send(Ok(answer.clone()))),
                    None => unanswered.push(w),
                }
            }
            let waiting = unanswered;
            if waiting.is_empty() {
                continue;
            }
            if let Err(halt) = check_capabilities(waiting.iter().map(|w| &w.request), input.capabilities()) {
                // The caller cannot answer them: -32021 to the caller, as a
                // server asking at 2026-07-28 answers; the upstream hears the
                // same and its call is cancelled (when `call` is dropped).
                if let Halt::Protocol(e) = &halt {
                    for w in waiting {
                        let _ = w.reply.send(Err(e.clone()));
                    }
                }
                return Err(halt);
            }
            return self.ask(park, call, waiting, input, caller());
        }
    }

    /// Parks `call` and asks its caller `waiting`, in one round.
    fn ask(&self, park: String, call: Call, waiting: Vec<Waiting>, input: &Input, caller: String) -> Flow<Value> {
        input.save(&Resume {
            park: Some(park.clone()),
            ..Resume::default()
        })?;
        let requests: Map<String, Value> = waiting.iter().map(|w| (w.key.clone(), w.request.clone())).collect();
        self.routes.set_parked(call.id, true);
        self.park(park, call, waiting, caller)?;
        Err(Halt::Ask(InputRequired {
            input_requests: requests,
            request_state: None,
        }))
    }

    /// Sends the request (with its id as progress token when `progress`);
    /// its result and the asks about it arrive on the call.
    fn start(&self, method: &str, params: Map<String, Value>, progress: bool) -> Call {
        let id = self.client.next_id();
        let augmented = params.contains_key("task");
        let mut call = self.start_with(id, method, Value::Object(params), progress.then_some(id), None);
        call.augmented = augmented;
        call
    }

    /// [`start`](Self::start) of a request about the upstream's `task`
    /// (`tasks/result`), without a progress token of its own.
    fn start_as(&self, method: &str, params: Value, task: String) -> Call {
        let id = self.client.next_id();
        self.start_with(id, method, params, None, Some(task))
    }

    fn start_with(&self, id: i64, method: &str, params: Value, token: Option<i64>, task: Option<String>) -> Call {
        let (asks_tx, asks) = mpsc::channel(4);
        let route = Route {
            id,
            asks: asks_tx,
            parked: Arc::default(),
            task: task.clone(),
        };
        self.routes.lock().insert(id, route);
        let (done_tx, done) = oneshot::channel();
        let client = self.client.clone();
        let routes = self.routes.clone();
        let method = method.to_owned();
        // A 2025-11-25 upstream's call may wait, parked, for people's answers,
        // or follow a task: `forward_legacy` bounds the time it runs.
        let within = (client.era() != Some(Era::Legacy)).then(|| client.timeout());
        // In the caller's request span: the upstream's request carries its
        // trace (`traceparent` in `_meta`).
        tokio::spawn(tracing::Instrument::in_current_span(async move {
            let result = client.request_within(id, &method, params, token, within).await;
            routes.lock().remove(&id);
            let _ = done_tx.send(result);
        }));
        Call {
            id,
            token: id,
            done,
            asks,
            routes: self.routes.clone(),
            client: self.client.clone(),
            finished: false,
            augmented: false,
            task,
        }
    }

    /// Waits for a call that cannot ask (a 2026-07-28 upstream's), passing
    /// its progress on and its cancellation up.
    async fn finish(&self, mut call: Call, ctx: &Context) -> Flow<Value> {
        let mut notes = self.client.notifications();
        loop {
            tokio::select! {
                done = &mut call.done => {
                    call.finished = true;
                    return done
                        .unwrap_or_else(|_| Err(ClientError::Closed { upstream: self.client.name().to_owned(), why: "the call was dropped".into() }))
                        .map_err(|e| self.failed(e));
                }
                note = notes.recv() => {
                    if let Ok(note) = note {
                        self.pass_on(&note, &call, ctx);
                    }
                }
                _ = cancelled(ctx.cancellation()) => {
                    return Err(Halt::Protocol(McpError::internal("the call was cancelled")));
                }
            }
        }
    }

    /// Keeps a call for its caller's next round, at most [`PARK_TTL`]
    /// (then it is dropped, which cancels it upstream); past
    /// [`MAX_PARKED`] calls parked, or [`MAX_PARKED_PER_CALLER`] of
    /// `caller`'s, the call is dropped now and its caller told to retry.
    fn park(&self, park: String, call: Call, waiting: Vec<Waiting>, caller: String) -> Result<(), Halt> {
        static PARKINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let parking = PARKINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        {
            let mut table = self.parked.lock().unwrap_or_else(|p| p.into_inner());
            let full = match table.len() >= MAX_PARKED {
                true => Some(format!("{MAX_PARKED} calls wait for their callers' answers")),
                // At most MAX_PARKED looked at.
                false => (table.values().filter(|p| p.caller == caller).count() >= MAX_PARKED_PER_CALLER)
                    .then(|| format!("{MAX_PARKED_PER_CALLER} calls wait for this caller's answers")),
            };
            if let Some(full) = full {
                drop(table);
                tracing::warn!(upstream = %self.client.name(), "{full}: one more is cancelled");
                return Err(Halt::Protocol(
                    McpError::internal(format!("upstream `{}`: {full}; retry later", self.client.name()))
                        .with_data(json!({"upstream": self.client.name(), "retryable": true})),
                ));
            }
            table.insert(
                park.clone(),
                Parked {
                    call,
                    waiting,
                    caller,
                    parking,
                },
            );
        }
        let table = self.parked.clone();
        let upstream = self.client.name().to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(PARK_TTL).await;
            let mut table = table.lock().unwrap_or_else(|p| p.into_inner());
            // Parked again since (a later round): that parking's own expiry removes it.
            if table.get(&park).is_some_and(|p| p.parking == parking) {
                table.remove(&park);
                drop(table);
                tracing::info!(upstream = %upstream, "a call waited {} s for its caller's answer: cancelled", PARK_TTL.as_secs());
            }
        });
        Ok(())
    }

    /// An upstream's progress on request `id`, and its log messages about
    /// it, passed to the caller. A log message the transport does not tie to
    /// a request is taken to be about the only open call not waiting for an
    /// answer; when that is not one call it is not passed on (it could be
    /// another caller's).
    fn pass_on(&self, note: &Note, call: &Call, ctx: &Context) {
        let params = &note.message["params"];
        let id = call.id;
        match note.message["method"].as_str() {
            Some("notifications/progress") if params["progressToken"] == json!(call.token) => {
                if let Some(progress) = params["progress"].as_f64() {
                    ctx.progress(progress, params["total"].as_f64(), params["message"].as_str());
                }
            }
            Some("notifications/message") => {
                let about = note.related.or_else(|| self.routes.find_id(None));
                if about == Some(id) {
                    if let Ok(level) = serde_json::from_value::<LoggingLevel>(params["level"].clone()) {
                        ctx.log(level, params["logger"].as_str(), &params["data"]);
                    }
                }
            }
            _ => {}
        }
    }
}

/// An upstream's ask made of the caller as its task's input request, under
/// the key the upstream used; the caller's answer.
async fn ask_in_task(task: &crate::tasks::Task, ask: Ask) -> Result<Value, McpError> {
    let mut params = ask.params;
    let key = take_key(&mut params).unwrap_or_else(|| "upstream".to_owned());
    let request = json!({"method": ask.method, "params": params});
    let capability = needed(&request)
        .ok_or_else(|| McpError::invalid_params(format!("the caller cannot be asked {}", ask.method)))?;
    Ok(task.ask_value(&key, capability, request).await?)
}

/// The key an ask of one of our own servers carries in its `_meta`
/// (`session::INPUT_KEY_META`), taken out of `params` with the upstream's
/// task it names, if any (which means nothing to the caller), and a `_meta`
/// left empty.
fn take_key(params: &mut Value) -> Option<String> {
    let meta = params.get_mut("_meta").and_then(Value::as_object_mut)?;
    meta.remove(crate::protocol::META_RELATED_TASK);
    let key = meta
        .remove(crate::session::INPUT_KEY_META)
        .and_then(|k| k.as_str().map(str::to_owned));
    if meta.is_empty() {
        if let Some(p) = params.as_object_mut() {
            p.remove("_meta");
        }
    }
    key
}

/// Resolves when `cancel` fires.
async fn cancelled(cancel: &Cancellation) {
    cancel.cancelled().await;
}

/// The error of a round whose parked call is not on this replica.
fn not_parked(upstream: &str) -> McpError {
    McpError::internal(format!(
        "the call to upstream `{upstream}` that this answer belongs to is not open here: it ended, \
         waited too long, or another replica holds it; call again"
    ))
    .with_data(json!({"upstream": upstream, "retryable": true}))
}

/// -32021 when the caller lacks a capability one of `asks` needs.
fn check_capabilities<'a>(asks: impl IntoIterator<Item = &'a Value>, caps: &ClientCapabilities) -> Result<(), Halt> {
    let mut missing = Map::new();
    for ask in asks {
        let Some(needed) = needed(ask) else {
            continue;
        };
        if !needed.is_declared_in(caps) {
            needed.add_to(&mut missing);
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Halt::Protocol(McpError::missing_capability(Value::Object(missing))))
    }
}

/// The client capability an ask (`{"method", "params"}`) needs.
fn needed(ask: &Value) -> Option<ClientCapability> {
    Some(match ask["method"].as_str().unwrap_or_default() {
        "elicitation/create" if ask["params"]["mode"] == "url" => ClientCapability::ElicitationUrl,
        "elicitation/create" => ClientCapability::ElicitationForm,
        "sampling/createMessage" => ClientCapability::Sampling,
        "roots/list" => ClientCapability::Roots,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_legacy_resource_not_found_is_sent_as_2026_07_28_has_it() {
        let legacy = McpError::new(crate::error::ErrorCode::LEGACY_RESOURCE_NOT_FOUND, "Resource not found")
            .with_data(json!({"uri": "file:///a"}));
        let current = current_code(legacy);
        assert_eq!(current.code(), crate::error::ErrorCode::INVALID_PARAMS);
        assert_eq!(current.message(), "Resource not found");
        assert_eq!(current.data(), Some(&json!({"uri": "file:///a"})));
        assert_eq!(
            current.clone().for_legacy().code(),
            crate::error::ErrorCode::LEGACY_RESOURCE_NOT_FOUND
        );
        let bare = current_code(
            McpError::new(crate::error::ErrorCode::LEGACY_RESOURCE_NOT_FOUND, "gone").with_data(json!("file:///a")),
        );
        assert_eq!(bare.data(), Some(&json!({"upstreamData": "file:///a"})));
        // A 2026-07-28 upstream's own, told to a legacy session as its era has it.
        let modern = current_code(McpError::invalid_params("Resource not found: a").with_data(json!({"uri": "a"})));
        assert_eq!(modern.code(), crate::error::ErrorCode::INVALID_PARAMS);
        assert_eq!(
            modern.for_legacy().code(),
            crate::error::ErrorCode::LEGACY_RESOURCE_NOT_FOUND
        );
        let other_params = current_code(McpError::invalid_params("bad cursor"));
        assert_eq!(
            other_params.for_legacy().code(),
            crate::error::ErrorCode::INVALID_PARAMS
        );
        let other_params = current_code(McpError::invalid_params("not a directory").with_data(json!({"uri": "a"})));
        assert_eq!(
            other_params.for_legacy().code(),
            crate::error::ErrorCode::INVALID_PARAMS
        );
        // Any other code is the upstream's own.
        let other = current_code(McpError::new(crate::error::ErrorCode(-32042), "open this URL"));
        assert_eq!(other.code(), crate::error::ErrorCode(-32042));
    }
}
