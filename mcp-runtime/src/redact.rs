//! What of a URL may be shown in logs and error messages: never the user
//! and password of its authority, nor (where a caller reads it) its query,
//! where API keys travel.

/// `url` with the user and password of its authority replaced by `***`.
pub(crate) fn credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_owned(),
    }
}

/// `url` without its credentials, and with its query and fragment replaced
/// by `?***`: an upstream's URL as an error its callers read names it.
#[cfg(feature = "client")]
pub(crate) fn url(url: &str) -> String {
    let mut shown = credentials(url);
    if let Some(at) = shown.find(['?', '#']) {
        shown.truncate(at);
        shown.push_str("?***");
    }
    shown
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_url_is_shown_without_its_credentials() {
        let credentials = crate::redact::credentials;
        assert_eq!(credentials("redis://:s3cret@cache:6379/0"), "redis://***@cache:6379/0");
        assert_eq!(credentials("rediss://app:p@ss@cache/0"), "rediss://***@cache/0");
        assert_eq!(
            credentials("redis://cache:6379/0?user=x@y"),
            "redis://cache:6379/0?user=x@y"
        );
        assert_eq!(credentials("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert_eq!(credentials("not a url"), "not a url");
    }

    #[cfg(feature = "client")]
    #[test]
    fn an_upstream_url_is_shown_without_its_query_either() {
        assert_eq!(
            crate::redact::url("https://u:s3cret@mcp.example/s/mcp?key=s3cret#x"),
            "https://***@mcp.example/s/mcp?***"
        );
        assert_eq!(crate::redact::url("http://127.0.0.1:9/mcp"), "http://127.0.0.1:9/mcp");
    }
}
