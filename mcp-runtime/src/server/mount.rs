//! Composition: another server's entries served under a prefix, each
//! handler run with that server's state.

use super::visibility::{with_hooks, Item};
use super::{BuildError, Parts, Server};
use crate::mrtr::Outcome;
use crate::protocol::ResourceContents;
use crate::resources::UriTemplate;
use std::sync::Arc;

/// How [`ServerBuilder::mount_with`](super::ServerBuilder::mount_with)
/// serves the mounted server's resource and template URIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MountUris {
    /// As they are: `crm://about` stays `crm://about` (the default).
    #[default]
    Kept,
    /// Under the prefix, as the first segment after the scheme:
    /// `crm://about` becomes `crm://PREFIX/about`, `file:///x`
    /// `file://PREFIX/x`, `urn:x` `urn:PREFIX/x`, a template likewise. The
    /// mounted handler still sees the URI it declared, so it needs no
    /// change; but a `notify_resource_updated` it makes names the declared
    /// URI, which subscribers of the prefixed one do not hear.
    Prefixed,
}

/// A mount prefix is 1 to 64 characters of `A-Za-z0-9_.-`.
pub(crate) fn valid_prefix(prefix: &str) -> bool {
    !prefix.is_empty()
        && prefix.len() <= 64
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Where the prefix goes in `uri`: after `scheme://`, else after
/// `scheme:`, else at the start.
fn insertion_point(uri: &str) -> usize {
    if let Some(i) = uri.find("://") {
        return i + 3;
    }
    match uri.find(':') {
        Some(i)
            if uri[..i]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) =>
        {
            i + 1
        }
        _ => 0,
    }
}

fn as_tool(name: &str) -> Item<'_> {
    Item::Tool(name)
}

fn as_prompt(name: &str) -> Item<'_> {
    Item::Prompt(name)
}

/// Where a prefixed URI takes the prefix, and what is inserted there:
/// `crm://about` → `crm://eu/about`; `file:///x` → `file://eu/x`.
fn insertion(uri: &str, prefix: &str) -> (usize, String) {
    let at = insertion_point(uri);
    let inserted = match uri.get(at..) {
        Some(rest) if rest.starts_with('/') => prefix.to_owned(),
        _ => format!("{prefix}/"),
    };
    (at, inserted)
}

fn as_resource(uri: &str) -> Item<'_> {
    Item::Resource(uri)
}

fn as_template(uri: &str) -> Item<'_> {
    Item::ResourceTemplate(uri)
}

/// Adds a mounted server's entries to `parts`: tools and prompts renamed
/// `prefix_name`, resources and templates under their URIs or prefixed
/// ones, every handler run with the mounted server's state.
/// `shared_rates`: whether the mounting server counts rates in a shared store.
pub(super) fn mount_into(
    parts: &mut Parts,
    prefix: &str,
    other: &Server,
    uris: MountUris,
    shared_rates: bool,
) -> Result<(), BuildError> {
    if !valid_prefix(prefix) {
        return Err(BuildError::InvalidMountPrefix(prefix.to_owned()));
    }
    // What the mounted server applies around every call is not carried with
    // its entries: refused, rather than dropped without a word.
    let dropped = if !other.inner.middleware.is_empty() {
        Some("middleware")
    } else if other.inner.limits.server_wide() {
        Some("server-wide rate limits or calls-in-progress limits")
    } else if other.inner.limits.shares_tool_rates() && !shared_rates {
        // Its tools' rates go with them, but would be counted per replica here.
        Some("a rate store its tools' own rates are counted in")
    } else {
        None
    };
    if let Some(what) = dropped {
        return Err(BuildError::MountedGuards(prefix.to_owned(), what));
    }
    let catalog = other.catalog();
    let state = &other.inner.state;
    let tool_timeout = other.config().tool_timeout;
    // The mounted server's visibility hooks go with its items, asked with
    // the names the items have there.
    let hooks = &other.inner.visibility;
    for tool in &catalog.tools {
        let mut entry = tool.clone();
        // The mounted server's default timeout goes with its tools.
        entry.timeout = entry.timeout.or(tool_timeout);
        entry.visible = with_hooks(entry.visible.take(), hooks, as_tool, tool.name().to_owned());
        entry.rename(format!("{prefix}_{}", tool.name()));
        // Its view moves with the mounted resources.
        if let Some(view) = entry.ui.as_ref().and_then(|ui| ui.resource_uri.as_deref()) {
            if uris == MountUris::Prefixed {
                let (at, inserted) = insertion(view, prefix);
                let mut ui = entry.ui.clone().unwrap_or_default();
                ui.resource_uri = Some(format!("{}{inserted}{}", &view[..at], &view[at..]));
                entry = entry.ui(ui);
            }
        }
        let (inner, state) = (entry.handler.clone(), state.clone());
        entry.handler = Arc::new(move |args, ctx| inner(args, ctx.with_state(&state)));
        parts.tools.push(entry);
    }
    for prompt in &catalog.prompts {
        let mut entry = prompt.clone();
        entry.visible = with_hooks(entry.visible.take(), hooks, as_prompt, prompt.prompt.name.clone());
        entry.prompt.name = format!("{prefix}_{}", entry.prompt.name);
        let (inner, state) = (entry.handler.clone(), state.clone());
        entry.handler = Arc::new(move |args, ctx| inner(args, ctx.with_state(&state)));
        parts.prompts.push(entry);
    }
    for part in &catalog.skills {
        let mut part = part.clone();
        part.visible = with_hooks(part.visible.take(), hooks, as_resource, part.skill.uri.clone());
        // Each file is asked with its own URI, as the mounted server asks.
        part.files_visible.resize(part.skill.files.len(), None);
        for (visible, file) in part.files_visible.iter_mut().zip(&part.skill.files) {
            *visible = with_hooks(visible.take(), hooks, as_resource, file.uri.clone());
        }
        // A watched folder of the mounted server is not the mounting one's.
        part.source = 0;
        if uris == MountUris::Prefixed {
            part.skill = Arc::new(part.skill.prefixed(prefix));
        }
        parts.skills.push(part);
    }
    // Skill files (from `own_resources` on) come with their skills.
    let own = &catalog.resources[..catalog.own_resources];
    for resource in own.iter().chain(&catalog.templates) {
        let mut entry = resource.clone();
        let item: for<'n> fn(&'n str) -> Item<'n> = if entry.template.is_some() {
            as_template
        } else {
            as_resource
        };
        entry.visible = with_hooks(entry.visible.take(), hooks, item, resource.uri.clone());
        let (inner, state) = (entry.handler.clone(), state.clone());
        if uris == MountUris::Kept {
            entry.handler = Arc::new(move |uri, vars, ctx| inner(uri, vars, ctx.with_state(&state)));
            parts.resources.push(entry);
            continue;
        }
        let (at, inserted) = insertion(&entry.uri, prefix);
        let served = format!("{}{inserted}{}", &entry.uri[..at], &entry.uri[at..]);
        if entry.template.is_some() {
            let template =
                UriTemplate::parse(&served).map_err(|e| BuildError::InvalidTemplate(format!("{served}: {e}")))?;
            entry.template = Some(template);
        }
        let field = if entry.template.is_some() { "uriTemplate" } else { "uri" };
        if let Some(listed) = entry.listing.get_mut(field) {
            *listed = serde_json::Value::String(served.clone());
        }
        entry.uri = served;
        // The mounted handler reads the URI it declared; the contents it
        // returns for that URI name the one the client asked for.
        entry.handler = Arc::new(move |uri, vars, ctx| {
            let declared = match uri.get(at..).and_then(|rest| rest.strip_prefix(inserted.as_str())) {
                Some(rest) => format!("{}{rest}", &uri[..at]),
                None => uri.to_owned(),
            };
            let read = inner(&declared, vars, ctx.with_state(&state));
            let asked = uri.to_owned();
            Box::pin(async move {
                let mut outcome = read.await?;
                if let Outcome::Complete(contents) = &mut outcome {
                    for content in contents {
                        let named = match content {
                            ResourceContents::Text(t) => &mut t.uri,
                            ResourceContents::Blob(b) => &mut b.uri,
                        };
                        if *named == declared {
                            named.clone_from(&asked);
                        }
                    }
                }
                Ok(outcome)
            })
        });
        parts.resources.push(entry);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::insertion_point;

    #[test]
    fn the_prefix_goes_after_the_scheme() {
        assert_eq!(insertion_point("crm://about"), 6);
        assert_eq!(insertion_point("urn:isbn:1"), 4);
        assert_eq!(insertion_point("{+path}/x"), 0);
        assert_eq!(insertion_point("a b:c"), 0);
    }
}
