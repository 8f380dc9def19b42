//! DNS-rebinding protection: which `Host` and `Origin` headers are accepted.
//!
//! A server bound to a loopback address accepts only loopback hosts
//! (`localhost`, `127.0.0.1`, `[::1]`, any port) unless more are allowed;
//! an `Origin` header, when present, must name an allowed host too. A server
//! bound elsewhere accepts the hosts it is configured with, or any host when
//! none is configured, and then still rejects an `Origin` whose host differs
//! from the `Host` header.

/// Host and Origin policy.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// Allowed host names (without port), lowercase. Empty: see the module docs.
    pub allowed_hosts: Vec<String>,
    /// Whether only loopback hosts are accepted by default.
    pub loopback_only: bool,
}

use std::borrow::Cow;

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
            let ok = if self.loopback_only || !self.allowed_hosts.is_empty() {
                self.host_allowed(&o)
            } else {
                host_name.as_deref().is_none_or(|h| h == o.as_ref())
            };
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
    fn open_policy_still_checks_origin_against_host() {
        let p = HostPolicy::default();
        assert!(p
            .check(Some("mcp.example.com"), Some("https://mcp.example.com"))
            .is_ok());
        assert!(p
            .check(Some("mcp.example.com"), Some("https://evil.example.com"))
            .is_err());
    }
}
