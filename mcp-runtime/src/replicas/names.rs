//! The namespace of one deployment on a shared Redis, and the names of its
//! channels and keys.

/// The environment variable `main!`'s command line reads: the namespace of
/// the Redis channels and keys (default: the server's name).
pub const REDIS_NAMESPACE_ENV: &str = "MCP_REDIS_NAMESPACE";

/// The namespace when nothing names one (a task store used without a server
/// built on the same bus): the names of the versions before namespaces.
pub(super) const FALLBACK: &str = "mcp";

/// The longest namespace, in characters.
const MAX: usize = 128;

/// A namespace and the channel names derived from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Names {
    namespace: String,
    events: std::sync::Arc<str>,
    tasks: String,
}

/// Braces would move a key's Redis Cluster hash tag; whitespace and control
/// characters make names that are hard to type and to read in logs.
fn allowed(c: char) -> bool {
    !(c.is_whitespace() || c.is_control() || c == '{' || c == '}')
}

impl Names {
    fn new(namespace: String) -> Self {
        Names {
            events: format!("{namespace}:events").into(),
            tasks: format!("{namespace}:tasks"),
            namespace,
        }
    }

    /// A namespace given by the operator, checked.
    pub(super) fn given(namespace: &str) -> Result<Self, String> {
        let count = namespace.chars().count();
        if count == 0 || count > MAX {
            return Err(format!("the namespace must have 1 to {MAX} characters, not {count}"));
        }
        if let Some(c) = namespace.chars().find(|c| !allowed(*c)) {
            return Err(format!(
                "the namespace {namespace:?} contains {c:?}: whitespace, control characters and braces are not allowed"
            ));
        }
        Ok(Names::new(namespace.to_owned()))
    }

    /// The namespace of a server: its name, with every character a given
    /// namespace may not contain replaced by `_`.
    pub(super) fn of_server(name: &str) -> Self {
        let namespace: String = name
            .chars()
            .take(MAX)
            .map(|c| if allowed(c) { c } else { '_' })
            .collect();
        if namespace.is_empty() {
            return Names::fallback();
        }
        Names::new(namespace)
    }

    pub(super) fn fallback() -> Self {
        Names::new(FALLBACK.to_owned())
    }

    pub(super) fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The channel of change events.
    pub(super) fn events(&self) -> &std::sync::Arc<str> {
        &self.events
    }

    /// The channel of task changes.
    pub(super) fn tasks(&self) -> &str {
        &self.tasks
    }

    /// The record of a task. The id in braces is the Redis Cluster hash tag:
    /// a task's record and lease live in one slot.
    pub(super) fn record_key(&self, id: &str) -> String {
        format!("{}:task:{{{id}}}", self.namespace)
    }

    pub(super) fn lease_key(&self, id: &str) -> String {
        format!("{}:task-lease:{{{id}}}", self.namespace)
    }

    /// A rate-limit cell (a caller, or a caller of one tool), its name
    /// percent-encoded past `A-Za-z0-9._:@-`: a key without spaces, braces
    /// or control characters, whatever the principal's name.
    pub(super) fn rate_key(&self, cell: &str) -> String {
        let mut key = format!("{}:rate:", self.namespace);
        for b in cell.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'@' | b'-') {
                key.push(char::from(b));
            } else {
                key.push_str(&format!("%{b:02X}"));
            }
        }
        key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_starts_with_the_namespace() {
        let names = Names::of_server("after-sales");
        assert_eq!(names.namespace(), "after-sales");
        assert_eq!(&**names.events(), "after-sales:events");
        assert_eq!(names.tasks(), "after-sales:tasks");
        assert_eq!(names.record_key("t1"), "after-sales:task:{t1}");
        assert_eq!(names.lease_key("t1"), "after-sales:task-lease:{t1}");
        assert_eq!(names.rate_key("alice"), "after-sales:rate:alice");
        assert_eq!(
            names.rate_key("[anonymous 127.0.0.1]"),
            "after-sales:rate:%5Banonymous%20127.0.0.1%5D"
        );
        assert_eq!(names.rate_key("tool\u{1f}x{y}"), "after-sales:rate:tool%1Fx%7By%7D");
    }

    #[test]
    fn a_server_name_becomes_a_namespace_and_a_given_one_is_checked() {
        assert_eq!(Names::of_server("My {beta} desk").namespace(), "My__beta__desk");
        assert_eq!(Names::of_server("").namespace(), FALLBACK);
        assert_eq!(Names::of_server(&"x".repeat(300)).namespace().len(), MAX);
        assert_eq!(
            Names::given("billing:eu").map(|n| n.namespace().to_owned()),
            Ok("billing:eu".into())
        );
        for bad in ["", "a b", "a{b", "a}b", "a\nb", &"x".repeat(MAX + 1)] {
            assert!(Names::given(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
