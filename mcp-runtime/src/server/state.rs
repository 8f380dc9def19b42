//! Application state shared with handlers: the [`State<T>`] extractor.

use super::{Context, FromContext};
use crate::error::McpError;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Values registered with the builder, one per type.
#[derive(Clone, Default)]
pub(crate) struct StateMap {
    map: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        Arc::make_mut(&mut self.map).insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.map
            .get(&TypeId::of::<T>())
            .cloned()
            .and_then(|v| v.downcast::<T>().ok())
    }
}

/// Shared state of type `T`, registered once with
/// [`ServerBuilder::state`](crate::ServerBuilder::state) and handed to every
/// handler that asks for it.
///
/// ```
/// use mcp_runtime::prelude::*;
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// #[derive(Default)]
/// struct Counter {
///     hits: AtomicU64,
/// }
///
/// /// Counts calls.
/// #[tool]
/// fn hit(counter: State<Counter>) -> String {
///     (counter.hits.fetch_add(1, Ordering::Relaxed) + 1).to_string()
/// }
///
/// let server = Server::builder().state(Counter::default()).build()?;
/// # let _ = server;
/// # Ok::<(), mcp_runtime::BuildError>(())
/// ```
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> std::ops::Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

impl<T: Send + Sync + 'static> FromContext for State<T> {
    fn from_context(ctx: &Context) -> Result<Self, McpError> {
        ctx.state::<T>().map(State).ok_or_else(|| {
            McpError::internal(format!(
                "no state of type {} was registered with the server builder",
                std::any::type_name::<T>()
            ))
        })
    }
}
