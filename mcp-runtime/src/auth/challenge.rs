//! The HTTP side of authorization: the bearer token of a request (RFC 6750
//! section 2.1), the well-known path of the metadata (RFC 9728), and the
//! `WWW-Authenticate` challenges of a 401 or 403.

use super::{Rejection, ResourceServer};
use http::HeaderMap;

/// The token of the request's `Authorization: Bearer` header: `None` when
/// there is none (or the header names another scheme), an error when it is
/// there but not a single bearer credential (RFC 6750 `invalid_request`, a
/// 400). The token's characters are not looked at here, since a token
/// that verifies is well-formed and a kilobyte-long one comes with every
/// request: [`malformed`] says, for a token that did not verify, whether
/// it was not even a token. A token longer than
/// [`MAX_TOKEN_LEN`](super::MAX_TOKEN_LEN) is refused here, before any
/// verifier (or authorization server) is asked about it.
pub(crate) fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, Rejection> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Rejection::Malformed("more than one Authorization header".into()));
    }
    bearer_value(value)
}

/// The bearer token of one `Authorization` value, as [`bearer_token`] reads it.
pub(crate) fn bearer_value(value: &http::HeaderValue) -> Result<Option<&str>, Rejection> {
    let bytes = value.as_bytes();
    let scheme = bytes.split(|b| *b == b' ').next().unwrap_or_default();
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        // Another scheme carries no bearer token: the plain challenge answers it.
        return Ok(None);
    }
    let token = bytes.get(7..).unwrap_or_default().trim_ascii();
    if bytes.get(6) != Some(&b' ') || token.is_empty() {
        return Err(Rejection::Malformed("Bearer is not followed by a token".into()));
    }
    if token.len() > super::MAX_TOKEN_LEN {
        return Err(super::too_long());
    }
    std::str::from_utf8(token)
        .map(Some)
        .map_err(|_| Rejection::Malformed("the bearer token is not ASCII".into()))
}

/// Why a token that did not verify is not even a token: a character
/// RFC 6750's b64token does not allow (ALPHA / DIGIT / "-" / "." / "_" /
/// "~" / "+" / "/", then "=" padding).
pub(crate) fn malformed(token: &str) -> Option<Rejection> {
    let body = token.trim_end_matches('=');
    let ok = !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/'));
    (!ok).then(|| Rejection::Malformed("the bearer token has characters a token cannot have".into()))
}

/// The well-known path of the metadata of a resource whose URL has `path`
/// (RFC 9728 section 3.1: inserted between the host and the path).
pub(crate) fn metadata_path(path: &str) -> String {
    // Only the slash right after the host goes (RFC 9728 section 3.1).
    let path = if path == "/" { "" } else { path };
    format!("/.well-known/oauth-protected-resource{path}")
}

/// What a refused request is told.
#[derive(Debug)]
pub(crate) enum Challenge<'a> {
    /// No token: 401, the metadata and the scopes to ask for.
    Missing,
    /// A token that is not accepted: 401 `invalid_token`.
    Invalid(&'a Rejection),
    /// A malformed credential (two headers, a bad token syntax): 400 `invalid_request`.
    Malformed(&'a Rejection),
    /// A token without these scopes: 403 `insufficient_scope`.
    InsufficientScope(&'a [String]),
}

/// The most characters of an `error_description`: the values a refusal
/// names are clipped already ([`clip`](super::clip)); this bounds the
/// whole, whatever a verifier of one's own puts in its errors.
const MAX_DESCRIPTION: usize = 256;

/// A quoted-string whose content keeps to RFC 6750's characters for
/// `error_description` and `scope` (%x20-21 / %x23-5B / %x5D-7E): anything
/// else (a quote, a backslash, a control, non-ASCII text from an
/// unverified token) becomes `?`, so the header is always valid.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        let allowed = matches!(c, '\u{20}'..='\u{21}' | '\u{23}'..='\u{5B}' | '\u{5D}'..='\u{7E}');
        out.push(if allowed { c } else { '?' });
    }
    out.push('"');
    out
}

/// A refusal as an `error_description`: at most [`MAX_DESCRIPTION`]
/// characters, through [`clip`](super::clip)'s rules.
fn description(why: &Rejection) -> String {
    let text = why.to_string();
    match text.char_indices().nth(MAX_DESCRIPTION) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

/// The `WWW-Authenticate` value of a challenge.
pub(crate) fn challenge(rs: &ResourceServer, which: &Challenge<'_>) -> String {
    let mut params = Vec::with_capacity(4);
    match which {
        Challenge::Missing => {}
        Challenge::Invalid(why) => {
            params.push("error=\"invalid_token\"".to_owned());
            params.push(format!("error_description={}", quoted(&description(why))));
        }
        Challenge::Malformed(why) => {
            params.push("error=\"invalid_request\"".to_owned());
            params.push(format!("error_description={}", quoted(&description(why))));
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
        _ => rs.challenge_scopes.as_ref().unwrap_or(&rs.scopes_supported).join(" "),
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
        assert_eq!(bearer_token(&with(&["Basic dXNlcjpwdw=="])), Ok(None), "another scheme");
        for bad in ["Bearer", "Bearer ", "Bearer  "] {
            assert!(bearer_token(&with(&[bad])).is_err(), "{bad}");
        }
        for (token, bad) in [("abc.def-_~+/==", false), ("a b", true), ("a\"b", true), ("==", true)] {
            assert_eq!(malformed(token).is_some(), bad, "{token}");
        }
        assert!(bearer_token(&with(&["Bearer a", "Bearer b"])).is_err());
        let mut h = HeaderMap::new();
        let long = format!("Bearer {}", "a".repeat(crate::auth::MAX_TOKEN_LEN + 1));
        h.insert(http::header::AUTHORIZATION, HeaderValue::from_str(&long).unwrap());
        assert!(bearer_token(&h).is_err(), "a token past the limit is refused unread");
        let at_limit = format!("Bearer {}", "a".repeat(crate::auth::MAX_TOKEN_LEN));
        h.insert(http::header::AUTHORIZATION, HeaderValue::from_str(&at_limit).unwrap());
        assert!(bearer_token(&h).is_ok());
    }

    #[test]
    fn descriptions_are_bounded() {
        let why = Rejection::Malformed("x".repeat(10_000));
        assert!(description(&why).len() <= MAX_DESCRIPTION + 3);
    }

    #[test]
    fn the_metadata_path_keeps_the_resource_path() {
        assert_eq!(metadata_path("/mcp"), "/.well-known/oauth-protected-resource/mcp");
        assert_eq!(metadata_path("/mcp/"), "/.well-known/oauth-protected-resource/mcp/");
        assert_eq!(metadata_path("/"), "/.well-known/oauth-protected-resource");
        assert_eq!(metadata_path(""), "/.well-known/oauth-protected-resource");
    }

    #[test]
    fn a_401_asks_for_the_challenge_scopes_and_a_403_for_what_is_missing() {
        struct Refuse;
        impl crate::auth::TokenVerifier for Refuse {
            fn verify<'a>(&'a self, _: &'a str) -> crate::auth::VerifyFuture<'a> {
                Box::pin(async { Err(Rejection::Inactive) })
            }
        }
        let rs = ResourceServer::new("https://mcp.example.com/mcp", "https://as.example.com", Refuse)
            .scopes(["a:read", "a:write"]);
        let scope =
            |rs: &ResourceServer, which: &Challenge<'_>| challenge(rs, which).split("scope=").nth(1).map(str::to_owned);
        assert_eq!(scope(&rs, &Challenge::Missing).as_deref(), Some("\"a:read a:write\""));
        let rs = rs.challenge_scopes(["a:read"]);
        assert_eq!(scope(&rs, &Challenge::Missing).as_deref(), Some("\"a:read\""));
        assert_eq!(
            scope(&rs, &Challenge::Invalid(&Rejection::Inactive)).as_deref(),
            Some("\"a:read\"")
        );
        let needed = ["a:write".to_owned()];
        assert_eq!(
            scope(&rs, &Challenge::InsufficientScope(&needed)).as_deref(),
            Some("\"a:write\"")
        );
        let rs = rs.challenge_scopes(Vec::<String>::new());
        assert_eq!(
            scope(&rs, &Challenge::Missing),
            None,
            "no scope: clients read the metadata's"
        );
    }

    #[test]
    fn quoted_strings_escape() {
        assert_eq!(quoted("a\"b\\c\né"), "\"a?b?c??\"");
    }
}
