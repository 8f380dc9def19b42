//! Tasks another server runs, served as this server's own (the `client`
//! feature: a proxied upstream's tasks).
//!
//! When an upstream answers a proxied `tools/call` with a task, the caller
//! gets that task under an id of this server's: the upstream's name and its
//! task id, sealed with the `requestState` keys and bound to the caller's
//! principal. `tasks/get`, `tasks/update` and `tasks/cancel` with such an
//! id open it and go to the upstream; nothing is kept here, so any replica
//! that shares the keys serves them, and another principal's id (or a
//! forged, altered or expired one) is as unknown as any other (-32602).

use crate::error::McpError;
use crate::mrtr::seal::{Binding, Sealed, Sealer};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, RwLock};

/// What a relayed request comes back as.
pub(crate) type RelayFuture = Pin<Box<dyn Future<Output = Result<Value, McpError>> + Send>>;

/// A server that runs tasks for this one.
pub(crate) trait TaskRelay: Send + Sync {
    /// Sends `method` (`tasks/get`, `tasks/update`, `tasks/cancel`) with
    /// `params` (the task id already the upstream's), with the caller's
    /// capabilities `caps`; the upstream's result or error.
    fn relay(&self, method: &str, params: Value, caps: Value) -> RelayFuture;

    /// Follows the upstream's tasks `tasks` on one listen stream of its
    /// own, with the caller's capabilities `caps`: each `notifications/tasks`
    /// about one of them (its params, the upstream's id in them) goes to
    /// `out`. Runs until dropped, which closes the stream.
    fn follow(&self, tasks: Vec<String>, caps: Value, out: Box<dyn Fn(Value) + Send + Sync>) -> FollowFuture;
}

/// What [`TaskRelay::follow`] runs.
pub(crate) type FollowFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Where a proxied tool's handler leaves the task its upstream made.
pub(crate) type Slot = Arc<std::sync::Mutex<Option<crate::protocol::DetailedTask>>>;

/// The servers that run tasks for this one, by the key their ids name
/// them by; and by their own names, which ids sealed by earlier versions
/// of this crate name them by.
#[derive(Default)]
pub(crate) struct Relays {
    keys: RwLock<HashMap<String, Arc<dyn TaskRelay>>>,
    names: RwLock<HashMap<String, Arc<dyn TaskRelay>>>,
}

/// What a relayed id is bound to: no tool, no arguments, the principal.
const BINDING_METHOD: &str = "tasks/relay";

/// How long an id of a task the upstream keeps for ever stays valid (7 days).
const UNLIMITED_MS: u64 = 7 * 24 * 3_600_000;

/// Time past the upstream's time to live an id stays valid: clocks differ,
/// and the upstream says itself when the task is gone.
const MARGIN_MS: u64 = 60_000;

impl Relays {
    /// Serves the tasks of the upstream `key` names (a proxy's prefix),
    /// replacing one of the same key.
    pub(crate) fn add(&self, key: &str, relay: Arc<dyn TaskRelay>) {
        let mut relays = self.keys.write().unwrap_or_else(|p| p.into_inner());
        if relays.insert(key.to_owned(), relay).is_some() {
            tracing::warn!(upstream = %key, "two upstreams are served under {key:?}: tasks are relayed to the last one");
        }
    }

    /// Serves them under the upstream's own `name` too, for ids an earlier
    /// version sealed (the first upstream of a name keeps it).
    pub(crate) fn add_name(&self, name: &str, relay: Arc<dyn TaskRelay>) {
        let mut relays = self.names.write().unwrap_or_else(|p| p.into_inner());
        relays.entry(name.to_owned()).or_insert(relay);
    }

    /// Whether any upstream's tasks are served.
    pub(crate) fn is_empty(&self) -> bool {
        self.keys.read().unwrap_or_else(|p| p.into_inner()).is_empty()
    }

    /// The relay and the upstream's own task id behind `id`, if it is a
    /// relayed id for `principal` that is still valid.
    pub(crate) fn open(
        &self,
        sealer: &Sealer,
        id: &str,
        principal: Option<&str>,
    ) -> Option<(Arc<dyn TaskRelay>, String)> {
        // This server's own ids are 32 hex digits; a sealed one is far longer.
        if id.len() <= 32 || self.is_empty() {
            return None;
        }
        let sealed = sealer.open(id, &binding(principal))?;
        let state = sealed.state?;
        let upstream = state["u"].as_str()?;
        let task = state["t"].as_str()?.to_owned();
        let found = |relays: &RwLock<HashMap<String, Arc<dyn TaskRelay>>>| {
            relays.read().unwrap_or_else(|p| p.into_inner()).get(upstream).cloned()
        };
        let relay = found(&self.keys).or_else(|| found(&self.names))?;
        Some((relay, task))
    }
}

fn binding(principal: Option<&str>) -> Binding<'_> {
    Binding {
        method: BINDING_METHOD,
        name: "",
        arguments: None,
        unread: None,
        principal,
    }
}

/// The id the caller knows upstream `upstream`'s task `task` by, valid as
/// long as the upstream keeps it (`ttl_ms` from now, `None` for unlimited).
pub(crate) fn seal_id(
    sealer: &Sealer,
    upstream: &str,
    task: &str,
    principal: Option<&str>,
    ttl_ms: Option<u64>,
) -> Result<String, McpError> {
    let lifetime = ttl_ms.unwrap_or(UNLIMITED_MS).saturating_add(MARGIN_MS);
    let exp = crate::mrtr::seal::now_ms().saturating_add(lifetime);
    let contents = Sealed {
        state: Some(json!({"u": upstream, "t": task})),
        ..Sealed::default()
    };
    sealer
        .seal_until(contents, &binding(principal), exp)
        .ok_or_else(|| McpError::internal(format!("the task of upstream `{upstream}` could not be given an id")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    struct Echo;

    impl TaskRelay for Echo {
        fn relay(&self, method: &str, params: Value, _caps: Value) -> RelayFuture {
            let out = json!({"method": method, "params": params});
            Box::pin(async move { Ok(out) })
        }

        fn follow(&self, _tasks: Vec<String>, _caps: Value, _out: Box<dyn Fn(Value) + Send + Sync>) -> FollowFuture {
            Box::pin(std::future::pending())
        }
    }

    #[test]
    fn an_id_opens_for_its_principal_only_and_names_the_upstream_task() {
        let sealer = Sealer::new(&[[3; 32]], Duration::from_secs(60)).for_server("gw");
        let relays = Relays::default();
        relays.add("files", Arc::new(Echo));
        let id = seal_id(&sealer, "files", "abc", Some("alice"), Some(60_000)).unwrap();
        assert!(id.len() > 32 && !id.contains('.'));
        let (_, task) = relays.open(&sealer, &id, Some("alice")).unwrap();
        assert_eq!(task, "abc");
        assert!(relays.open(&sealer, &id, Some("bob")).is_none());
        assert!(relays.open(&sealer, &id, None).is_none());
        // Another server's keys, an altered id, a local id: none open.
        let other = Sealer::new(&[[4; 32]], Duration::from_secs(60)).for_server("gw");
        assert!(relays.open(&other, &id, Some("alice")).is_none());
        let mut altered = id.clone().into_bytes();
        altered[40] = if altered[40] == b'A' { b'B' } else { b'A' };
        assert!(relays
            .open(&sealer, &String::from_utf8(altered).unwrap(), Some("alice"))
            .is_none());
        assert!(relays.open(&sealer, "0123456789abcdef0123456789abcdef", None).is_none());
        // An upstream that is no longer served: the id is unknown.
        let gone = seal_id(&sealer, "gone", "abc", None, None).unwrap();
        assert!(relays.open(&sealer, &gone, None).is_none());
    }

    /// Answers with its own name.
    struct Named(&'static str);

    impl TaskRelay for Named {
        fn relay(&self, _method: &str, _params: Value, _caps: Value) -> RelayFuture {
            let name = self.0;
            Box::pin(async move { Ok(json!(name)) })
        }

        fn follow(&self, _tasks: Vec<String>, _caps: Value, _out: Box<dyn Fn(Value) + Send + Sync>) -> FollowFuture {
            Box::pin(std::future::pending())
        }
    }

    #[tokio::test]
    async fn two_upstreams_of_one_name_keep_their_own_tasks() {
        let sealer = Sealer::new(&[[3; 32]], Duration::from_secs(60));
        let relays = Relays::default();
        for key in ["a", "b"] {
            let relay: Arc<dyn TaskRelay> = Arc::new(Named(key));
            relays.add(key, relay.clone());
            relays.add_name("npx", relay);
        }
        let served_by = |upstream: &str| {
            let id = seal_id(&sealer, upstream, "t1", None, None).unwrap();
            relays.open(&sealer, &id, None).map(|(relay, _)| relay)
        };
        for key in ["a", "b"] {
            let relay = served_by(key).unwrap();
            assert_eq!(
                relay.relay("tasks/get", json!({}), json!({})).await.unwrap(),
                json!(key)
            );
        }
        // An id sealed by an earlier version names the upstream: the first of that name.
        let relay = served_by("npx").unwrap();
        assert_eq!(
            relay.relay("tasks/get", json!({}), json!({})).await.unwrap(),
            json!("a")
        );
    }

    #[test]
    fn an_expired_id_does_not_open() {
        let sealer = Sealer::new(&[[3; 32]], Duration::from_secs(60));
        let relays = Relays::default();
        relays.add("files", Arc::new(Echo));
        let contents = Sealed {
            state: Some(json!({"u": "files", "t": "abc"})),
            ..Sealed::default()
        };
        let past = crate::mrtr::seal::now_ms() - 1;
        let id = sealer.seal_until(contents, &binding(None), past).unwrap();
        assert!(relays.open(&sealer, &id, None).is_none());
    }
}
