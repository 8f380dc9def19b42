//! What a client accepts in answer (RFC 9110 section 12.5.1): a JSON body,
//! an event stream, or both. A client that sends no `Accept` accepts either.
//! A client of the field often names only one (a JSON-RPC client only
//! `application/json`, a proxy only `text/event-stream`), so the endpoint
//! answers in the one it names rather than refusing it; it refuses (406)
//! only a request that allows neither.

use http::{header, HeaderMap};

/// Which of the two answers a request's `Accept` allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Accepts {
    /// `application/json` (or `application/*`, `*/*`).
    pub json: bool,
    /// `text/event-stream` (or `text/*`, `*/*`).
    pub sse: bool,
}

impl Accepts {
    /// Either answer will do.
    const BOTH: Accepts = Accepts { json: true, sse: true };

    /// From the request's `Accept` fields. None, or none with a media range
    /// that can be read, allows both. For each of the two types the most
    /// specific range that names it decides, and `q=0` refuses it.
    pub(super) fn of(headers: &HeaderMap) -> Accepts {
        // What clients send, told at a glance.
        let mut values = headers.get_all(header::ACCEPT).iter();
        match (values.next(), values.next()) {
            (None, _) => return Accepts::BOTH,
            (Some(only), None) if USUAL.contains(&only.as_bytes()) => return Accepts::BOTH,
            _ => {}
        }
        let mut json = Best::default();
        let mut sse = Best::default();
        let mut read = false;
        for value in headers.get_all(header::ACCEPT) {
            let Ok(text) = value.to_str() else { continue };
            for range in text.split(',') {
                let mut parts = range.split(';');
                let Some((kind, sub)) = parts.next().and_then(|m| m.trim().split_once('/')) else {
                    continue;
                };
                let (kind, sub) = (kind.trim(), sub.trim());
                if kind.is_empty() || sub.is_empty() {
                    continue;
                }
                read = true;
                let refused = parts.any(weight_zero);
                json.offer(specificity(kind, sub, "application", "json"), refused);
                sse.offer(specificity(kind, sub, "text", "event-stream"), refused);
            }
        }
        if !read {
            return Accepts::BOTH;
        }
        Accepts {
            json: json.allowed(),
            sse: sse.allowed(),
        }
    }

    /// Whether the request allows either answer.
    pub(super) fn any(self) -> bool {
        self.json || self.sse
    }
}

/// The `Accept` values of the field that allow both, spelled as clients
/// spell them.
const USUAL: [&[u8]; 4] = [
    b"application/json, text/event-stream",
    b"text/event-stream, application/json",
    b"application/json,text/event-stream",
    b"*/*",
];

/// The most specific range naming a type seen so far, and whether it allows it.
#[derive(Default)]
struct Best {
    /// 0 for `*/*`, 1 for `type/*`, 2 for the type itself.
    specificity: Option<u8>,
    allowed: bool,
}

impl Best {
    fn offer(&mut self, specificity: Option<u8>, refused: bool) {
        let Some(s) = specificity else { return };
        match self.specificity {
            Some(best) if best > s => {}
            // Two ranges as specific as each other: allowed if either allows.
            Some(best) if best == s => self.allowed |= !refused,
            _ => {
                self.specificity = Some(s);
                self.allowed = !refused;
            }
        }
    }

    fn allowed(&self) -> bool {
        self.specificity.is_some() && self.allowed
    }
}

/// How specifically `kind/sub` names `want_kind/want_sub`, if it does.
fn specificity(kind: &str, sub: &str, want_kind: &str, want_sub: &str) -> Option<u8> {
    if kind == "*" {
        return (sub == "*").then_some(0);
    }
    if !kind.eq_ignore_ascii_case(want_kind) {
        return None;
    }
    if sub == "*" {
        return Some(1);
    }
    sub.eq_ignore_ascii_case(want_sub).then_some(2)
}

/// Whether a range's parameter is a weight of zero (`q=0`, `q=0.000`).
fn weight_zero(parameter: &str) -> bool {
    let Some((name, value)) = parameter.split_once('=') else {
        return false;
    };
    if !name.trim().eq_ignore_ascii_case("q") {
        return false;
    }
    value
        .trim()
        .strip_prefix('0')
        .is_some_and(|rest| rest.is_empty() || rest.strip_prefix('.').is_some_and(|z| z.bytes().all(|b| b == b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: &[&str]) -> (bool, bool) {
        let mut headers = HeaderMap::new();
        for v in values {
            if let Ok(v) = http::HeaderValue::from_str(v) {
                headers.append(header::ACCEPT, v);
            }
        }
        let a = Accepts::of(&headers);
        (a.json, a.sse)
    }

    #[test]
    fn ranges_and_weights_decide() {
        assert_eq!(of(&[]), (true, true));
        assert_eq!(of(&[""]), (true, true));
        assert_eq!(of(&["application/json, text/event-stream"]), (true, true));
        assert_eq!(of(&["application/json", "text/event-stream"]), (true, true));
        assert_eq!(of(&["application/json"]), (true, false));
        assert_eq!(of(&["Text/Event-Stream"]), (false, true));
        assert_eq!(of(&["*/*"]), (true, true));
        assert_eq!(of(&["application/*;q=0.5"]), (true, false));
        assert_eq!(of(&["text/*"]), (false, true));
        assert_eq!(of(&["text/html"]), (false, false));
        assert_eq!(of(&["*/*, text/event-stream;q=0"]), (true, false));
        assert_eq!(of(&["application/json; q=0.000, */*"]), (false, true));
        assert_eq!(of(&["application/json;q=0.001"]), (true, false));
        assert_eq!(of(&["application/json;charset=utf-8"]), (true, false));
        // Not a range: no decision, so either answer.
        assert_eq!(of(&["json"]), (true, true));
    }
}
