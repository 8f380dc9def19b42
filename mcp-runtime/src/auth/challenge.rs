//! The HTTP side of authorization: the bearer token of a request (RFC 6750
//! section 2.1), the well-known path of the metadata (RFC 9728), and the
//! `WWW-Authenticate` challenges of a 401 or 403.

use super::{Rejection, ResourceServer};
use http::HeaderMap;

/// The token of the request's `Authorization: Bearer` header: `None` when
/// there is no such header, an error when it is there but not a single
/// well-formed bearer credential.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, Rejection> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Rejection::Malformed("more than one Authorization header".into()));
    }
    let text = value
        .to_str()
        .map_err(|_| Rejection::Malformed("Authorization is not visible ASCII".into()))?;
    let (scheme, token) = text.split_once(' ').unwrap_or((text, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Rejection::Malformed("the Authorization scheme is not Bearer".into()));
    }
    let token = token.trim();
    // RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
    let body = token.trim_end_matches('=');
    let well_formed = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/'));
    if !well_formed {
        return Err(Rejection::Malformed(
            "the bearer token is empty or has characters a token cannot have".into(),
        ));
    }
    Ok(Some(token))
}

/// The well-known path of the metadata of a resource whose URL has `path`
/// (RFC 9728 section 3.1: inserted between the host and the path).
pub(crate) fn metadata_path(path: &str) -> String {
    let path = path.trim_end_matches('/');
    format!("/.well-known/oauth-protected-resource{path}")
}

/// What a refused request is told.
#[derive(Debug)]
pub(crate) enum Challenge<'a> {
    /// No token: 401, the metadata and the scopes to ask for.
    Missing,
    /// A token that is not accepted: 401 `invalid_token`.
    Invalid(&'a Rejection),
    /// A token without these scopes: 403 `insufficient_scope`.
    InsufficientScope(&'a [String]),
}

/// A quoted-string of RFC 9110 (quotes and backslashes escaped, controls dropped).
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars().filter(|c| !c.is_control()) {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The `WWW-Authenticate` value of a challenge.
pub(crate) fn challenge(rs: &ResourceServer, which: &Challenge<'_>) -> String {
    let mut params = Vec::with_capacity(4);
    match which {
        Challenge::Missing => {}
        Challenge::Invalid(why) => {
            params.push("error=\"invalid_token\"".to_owned());
            params.push(format!("error_description={}", quoted(&why.to_string())));
        }
        Challenge::InsufficientScope(needed) => {
            params.push("error=\"insufficient_scope\"".to_owned());
            params.push(format!(
                "error_description={}",
                quoted(&format!("the token lacks the scope {}", needed.join(" ")))
            ));
        }
    }
    params.push(format!("resource_metadata={}", quoted(&rs.metadata_url())));
    let scope = match which {
        Challenge::InsufficientScope(needed) => needed.join(" "),
        _ => rs.scopes_supported.join(" "),
    };
    if !scope.is_empty() {
        params.push(format!("scope={}", quoted(&scope)));
    }
    format!("Bearer {}", params.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn with(values: &[&'static str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(http::header::AUTHORIZATION, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn a_bearer_token_is_read_and_anything_else_refused() {
        assert_eq!(bearer_token(&with(&[])), Ok(None));
        assert_eq!(
            bearer_token(&with(&["Bearer abc.def-_~+/=="])),
            Ok(Some("abc.def-_~+/=="))
        );
        assert_eq!(bearer_token(&with(&["bearer abc"])), Ok(Some("abc")));
        for bad in ["Basic dXNlcjpwdw==", "Bearer", "Bearer ", "Bearer a b", "Bearer a\"b"] {
            assert!(bearer_token(&with(&[bad])).is_err(), "{bad}");
        }
        assert!(bearer_token(&with(&["Bearer a", "Bearer b"])).is_err());
    }

    #[test]
    fn the_metadata_path_keeps_the_resource_path() {
        assert_eq!(metadata_path("/mcp"), "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(metadata_path("/"), "/.well-known/oauth-protected-resource");
        assert_eq!(metadata_path(""), "/.well-known/oauth-protected-resource");
    }

    #[test]
    fn quoted_strings_escape() {
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\"");
    }
}
