//! DNS-rebinding protection: which `Host` and `Origin` headers are accepted.
//!
//! A server bound to a loopback address accepts only loopback hosts
//! (`localhost`, `127.0.0.1`, `[::1]`, any port) unless more are allowed. A
//! server bound elsewhere accepts the hosts it is configured with (and
//! loopback), or any host when none is configured. Whatever the bind, an
//! `Origin` header, when present, must name a loopback or allowed host: a
//! browser page is only ever let in from those, so a page whose name was
//! rebound to this server's address (sending its own name as both `Host`
//! and `Origin`) is refused. Clients that are not browsers send no `Origin`.

/// Host and Origin policy.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// Allowed host names (without port), lowercase. Empty: see the module docs.
    pub allowed_hosts: Vec<String>,
    /// Whether only loopback hosts are accepted by default.
    pub loopback_only: bool,
}

use std::borrow::Cow;

/// A name that cannot be an allowed host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a host name (give the name alone, for example mcp.example.com)")]
pub struct InvalidHost(pub String);

const LOOPBACK: &[&str] = &["localhost", "127.0.0.1", "[::1]", "::1"];

/// The host part of a `host[:port]` authority, lowercased (borrowed when
/// it already is).
fn host_of(authority: &str) -> Cow<'_, str> {
    let a = authority.trim();
    let host = match a.strip_prefix('[') {
        Some(rest) => match rest.find(']') {
            Some(end) => &a[..end + 2],
            None => a,
        },
        None => match a.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => a,
        },
    };
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(host.to_ascii_lowercase())
    } else {
        Cow::Borrowed(host)
    }
}

impl HostPolicy {
    /// Loopback hosts and these names (a port, if given, is ignored; any
    /// case): what a server reached as `https://mcp.example.com` needs, as
    /// `HostPolicy::allowing(["mcp.example.com"])`.
    pub fn allowing<I, S>(hosts: I) -> Result<Self, InvalidHost>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut allowed_hosts = Vec::new();
        for host in hosts {
            let given = host.as_ref().trim();
            let name = host_of(given);
            let bad = |b: u8| b.is_ascii_whitespace() || b.is_ascii_control() || b"/?#@*,".contains(&b);
            if name.is_empty() || name.bytes().any(bad) || name == "[]" {
                return Err(InvalidHost(given.to_owned()));
            }
            allowed_hosts.push(name.into_owned());
        }
        Ok(HostPolicy {
            allowed_hosts,
            loopback_only: true,
        })
    }

    fn host_allowed(&self, host: &str) -> bool {
        if self.allowed_hosts.iter().any(|h| h == host) {
            return true;
        }
        if self.loopback_only || !self.allowed_hosts.is_empty() {
            return LOOPBACK.contains(&host) && self.loopback_only;
        }
        true
    }

    /// Checks the headers; `Err` names what was refused.
    pub fn check(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), String> {
        let host_name = host.map(host_of);
        if let Some(h) = &host_name {
            if !self.host_allowed(h) {
                return Err(format!("Forbidden: invalid Host header {h:?}"));
            }
        } else if self.loopback_only {
            return Err("Forbidden: missing Host header".into());
        }
        if let Some(origin) = origin {
            if origin == "null" {
                return Err("Forbidden: opaque Origin".into());
            }
            let authority = origin.split_once("://").map(|(_, rest)| rest).unwrap_or(origin);
            let authority = authority.split('/').next().unwrap_or_default();
            let o = host_of(authority);
            // Loopback or named, whatever the bind: a rebinding page sends
            // its own name as both `Host` and `Origin`.
            let ok = LOOPBACK.contains(&o.as_ref()) || self.allowed_hosts.iter().any(|h| *h == o);
            if !ok {
                return Err(format!("Forbidden: invalid Origin header {origin:?}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_policy() {
        let p = HostPolicy {
            allowed_hosts: vec![],
            loopback_only: true,
        };
        assert!(p.check(Some("127.0.0.1:3000"), Some("http://127.0.0.1:3000")).is_ok());
        assert!(p.check(Some("localhost"), None).is_ok());
        assert!(p.check(Some("[::1]:80"), Some("http://[::1]:80")).is_ok());
        assert!(p
            .check(Some("evil.example.com"), Some("http://evil.example.com"))
            .is_err());
        assert!(p
            .check(Some("127.0.0.1:3000"), Some("http://evil.example.com"))
            .is_err());
        let p = HostPolicy {
            allowed_hosts: vec!["mcp.example.com".into()],
            loopback_only: true,
        };
        assert!(p
            .check(Some("mcp.example.com"), Some("https://mcp.example.com"))
            .is_ok());
    }

    #[test]
    fn open_policy_lets_a_browser_in_from_loopback_only() {
        let p = HostPolicy::default();
        assert!(
            p.check(Some("mcp.example.com"), None).is_ok(),
            "any Host without Origin"
        );
        assert!(p.check(Some("10.0.0.5:3000"), Some("http://localhost:5173")).is_ok());
        // A page rebound to this address sends its own name as both.
        assert!(p
            .check(Some("rebind.example.com:3000"), Some("http://rebind.example.com:3000"))
            .is_err());
        assert!(p
            .check(Some("mcp.example.com"), Some("https://evil.example.com"))
            .is_err());
    }

    #[test]
    fn allowing_names() {
        let p = HostPolicy::allowing(["MCP.example.com:443", " api.example.com "]).unwrap();
        assert_eq!(p.allowed_hosts, ["mcp.example.com", "api.example.com"]);
        assert!(p
            .check(Some("mcp.example.com"), Some("https://mcp.example.com"))
            .is_ok());
        assert!(p.check(Some("127.0.0.1:3000"), None).is_ok());
        assert!(p.check(Some("other.example.com"), None).is_err());
        for bad in [
            "",
            "https://mcp.example.com",
            "mcp.example.com/mcp",
            "a b",
            "*.example.com",
        ] {
            assert_eq!(
                HostPolicy::allowing([bad]).unwrap_err(),
                InvalidHost(bad.trim().to_owned())
            );
        }
    }
}
