//! RFC 6570 URI templates as resources use them: `UriTemplate::parse` of an
//! arbitrary template, `matches` of arbitrary URIs against it (and against
//! a few fixed templates), and `percent_decode`.
//!
//! Input: the template on the first line, then one URI a line (up to 8).
//!
//! Invariants: no panic; a parsed template keeps its text and has only
//! `[A-Za-z0-9_]` variable names; a match binds every variable once, in
//! order, to a non-empty value that cannot climb out of its place (a
//! `{var}` value has no `/` and is not `.` or `..`; a `{+var}` value has no
//! `.` or `..` segment); `percent_decode` undoes percent-encoding exactly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_runtime::__private::engine::template::{percent_decode, UriTemplate};

const FIXED: &[&str] = &[
    "test://template/{id}/data",
    "files://{+path}",
    "tickets://by-priority/{priority}",
    "x://{a}-{b}.{c}",
    "db://{schema}/tables/{+rest}",
];

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.split('\n');
    let template = lines.next().unwrap_or_default();
    let uris: Vec<&str> = lines.take(8).collect();
    check_decode(template);
    let parsed = UriTemplate::parse(template);
    match &parsed {
        Ok(t) => {
            assert_eq!(t.as_str(), template);
            for v in t.variables() {
                assert!(
                    !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
                    "{v:?}"
                );
            }
            assert_eq!(
                UriTemplate::parse(t.as_str()).as_ref(),
                Ok(t),
                "parsing is deterministic"
            );
        }
        Err(why) => assert!(!why.is_empty()),
    }
    for uri in uris {
        check_decode(uri);
        if let Ok(t) = &parsed {
            check_match(t, uri);
        }
        for fixed in FIXED {
            check_match(&UriTemplate::parse(fixed).expect("a fixed template parses"), uri);
        }
    }
});

fn check_match(t: &UriTemplate, uri: &str) {
    let Some(bound) = t.matches(uri) else { return };
    let names: Vec<&str> = t.variables().collect();
    let bound_names: Vec<&str> = bound.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, bound_names, "every variable bound once, in order");
    let raw = t.as_str();
    for (name, value) in &bound {
        assert!(!value.is_empty(), "{name} bound to nothing in {uri:?}");
        let reserved = raw.contains(&format!("{{+{name}}}"));
        if reserved {
            assert!(
                !value.split(['/', '\\']).any(|seg| seg == "." || seg == ".."),
                "{{+{name}}} climbs: {value:?} from {uri:?} with {raw:?}"
            );
        } else {
            assert!(
                !value.contains('/') && !value.contains('\\') && value != "." && value != "..",
                "{{{name}}} escapes its segment: {value:?} from {uri:?} with {raw:?}"
            );
        }
        assert!(
            !value.contains(['?', '#']) || uri.contains('%'),
            "{value:?} from {uri:?}"
        );
    }
    // Matching is a function of the URI: the same answer twice.
    assert_eq!(t.matches(uri), Some(bound));
}

fn check_decode(s: &str) {
    match percent_decode(s) {
        Some(decoded) => {
            if !s.contains('%') {
                assert_eq!(decoded, s, "text without escapes is unchanged");
            }
            assert!(decoded.len() <= s.len());
            // Encoding every byte and decoding gives the text back.
            let encoded: String = decoded.bytes().map(|b| format!("%{b:02X}")).collect();
            assert_eq!(percent_decode(&encoded).as_deref(), Some(decoded.as_str()));
            let lower: String = decoded.bytes().map(|b| format!("%{b:02x}")).collect();
            assert_eq!(percent_decode(&lower).as_deref(), Some(decoded.as_str()));
        }
        None => assert!(s.contains('%'), "only an escape can make {s:?} undecodable"),
    }
}
