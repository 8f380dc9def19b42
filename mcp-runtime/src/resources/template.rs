//! RFC 6570 URI templates, the subset resources use: level 1 simple
//! expansion `{var}` and level 2 reserved expansion `{+var}`.
//!
//! Matching a URI against a template binds each variable to the
//! percent-decoded text it covers. A `{var}` value never contains `/` or
//! `\` (raw or encoded as `%2F`), never starts with a drive (a letter
//! and `:`, `C:`) and is
//! never `.` or `..`; a `{+var}` value may
//! span `/` but is a relative path: no `.` or `..` segment, no empty one, no
//! leading `/` or `\`, no drive (`C:`), so a value cannot climb out of the
//! place the template puts it (`Path::join` of an absolute path would
//! replace the base). No value contains NUL. Where a variable is followed by
//! a literal that its value may contain (`{+dir}/{name}`), each place the
//! literal occurs is tried in turn, within a bounded number of steps, so
//! every URI the template expands to is matched. Other operators (`#`, `.`, `/`,
//! `;`, `?`, `&`), lists and modifiers are rejected when the template is
//! parsed (at compile time by `#[resource]`).

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    raw: String,
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses a template, or says what is unsupported in it (the rules of
    /// `mcp-runtime-grammar`, which `#[resource]` applies at compile time).
    pub fn parse(raw: &str) -> Result<Self, String> {
        let parts = mcp_grammar::parse_template(raw)
            .map_err(|why| format!("{why} (URI template {raw:?})"))?
            .into_iter()
            .map(|part| match part {
                mcp_grammar::TemplatePart::Literal(text) => Part::Literal(text.to_owned()),
                mcp_grammar::TemplatePart::Variable { name, reserved } => Part::Var {
                    name: name.to_owned(),
                    reserved,
                },
            })
            .collect();
        Ok(UriTemplate {
            raw: raw.to_owned(),
            parts,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The variable names, in order.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { name, .. } => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// Matches a URI, returning each variable's decoded value, or `None`.
    pub fn matches(&self, uri: &str) -> Option<Vec<(String, String)>> {
        let mut bound = Vec::new();
        let mut budget = Budget {
            steps: MAX_STEPS,
            bytes: uri.len().saturating_mul(16).saturating_add(1 << 16),
        };
        self.match_from(0, uri, &mut bound, &mut budget).then_some(bound)
    }

    /// Whether `rest` matches the parts from `i` on, binding into `bound`
    /// (in the template's order). A value is decoded only once what follows
    /// it has matched: the places it may end are told apart by the
    /// literals, not by decoding each candidate in full.
    fn match_from(&self, i: usize, rest: &str, bound: &mut Vec<(String, String)>, budget: &mut Budget) -> bool {
        let Some(left) = budget.steps.checked_sub(1) else {
            return false;
        };
        budget.steps = left;
        match self.parts.get(i) {
            None => rest.is_empty(),
            Some(Part::Literal(lit)) => rest
                .strip_prefix(lit.as_str())
                .is_some_and(|rest| self.match_from(i + 1, rest, bound, budget)),
            Some(Part::Var { name, reserved }) => {
                // Where the value may end: before each occurrence of the next
                // literal, or at the end when none follows.
                let next = match self.parts.get(i + 1) {
                    Some(Part::Literal(next)) => Some(next.as_str()),
                    _ => None,
                };
                let at_literal = next
                    .into_iter()
                    .flat_map(|next| rest.match_indices(next).map(|(at, _)| at));
                let depth = bound.len();
                // No value holds a `?` or a `#`, nor a `{var}`'s a `/`: it
                // ends before the first (the scan is paid for).
                let affordable = &rest.as_bytes()[..rest.len().min(budget.bytes)];
                let found = affordable
                    .iter()
                    .position(|b| matches!(b, b'?' | b'#') || (!reserved && *b == b'/'));
                if found.is_none() && affordable.len() < rest.len() {
                    return budget.spent();
                }
                let scanned = found.map_or(affordable.len(), |at| at.saturating_add(1));
                budget.bytes = budget.bytes.saturating_sub(scanned);
                let limit = found.unwrap_or(usize::MAX);
                for end in at_literal.chain(next.is_none().then_some(rest.len())) {
                    if budget.steps == 0 {
                        return false;
                    }
                    // A longer value would hold it too.
                    if end > limit {
                        break;
                    }
                    let raw = &rest[..end];
                    if raw.is_empty() {
                        continue;
                    }
                    if !self.match_from(i + 1, &rest[end..], bound, budget) {
                        bound.truncate(depth);
                        continue;
                    }
                    // Decoding is what costs: counted against the budget, so
                    // that no URI makes matching cost much more than reading it.
                    let Some(bytes) = budget.bytes.checked_sub(raw.len()) else {
                        bound.truncate(depth);
                        return budget.spent();
                    };
                    budget.bytes = bytes;
                    match decode_value(raw, *reserved) {
                        Some(value) => {
                            bound.insert(depth, (name.clone(), value));
                            return true;
                        }
                        None => bound.truncate(depth),
                    }
                }
                false
            }
        }
    }
}

/// What one match may spend: steps (each part tried at one place counts
/// one), so that a URI with many occurrences of a literal cannot make
/// matching slow; and bytes decoded or scanned (sixteen times the URI's
/// length, and 64 KiB: a value may be scanned once per place the one before
/// it may end, and decoded again when the first decoding is refused).
struct Budget {
    steps: u32,
    bytes: usize,
}

impl Budget {
    /// Out of bytes: no step is left either, so that the whole match ends.
    fn spent(&mut self) -> bool {
        self.steps = 0;
        false
    }
}

/// The most steps one match takes.
const MAX_STEPS: u32 = 1024;

/// A variable's value, `raw` as `match_from` cut it (not empty; no `?` or
/// `#`, and no `/` in a `{var}`'s: those are told where it may end),
/// decoded and checked.
fn decode_value(raw: &str, reserved: bool) -> Option<String> {
    let value = percent_decode(raw)?;
    if value.contains('\0') {
        return None;
    }
    // A drive (`C:`): joined to a Windows path, it would replace the base.
    let drive = value.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) && value.as_bytes().get(1) == Some(&b':');
    if !reserved {
        let escapes = drive || value.contains(['/', '\\']) || value == "." || value == "..";
        return (!escapes).then_some(value);
    }
    // A relative path: every segment a name, the first no drive.
    let relative = !drive
        && value
            .split(['/', '\\'])
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
    relative.then_some(value)
}

/// Decodes `%XX` escapes; `None` for a malformed escape or invalid UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    #[cfg(test)]
    tests::DECODED.with(|d| d.set(d.get() + s.len()));
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits exactly: `from_str_radix` alone would take `+F`.
            let hi = hex_digit(*bytes.get(i + 1)?)?;
            let lo = hex_digit(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Bytes `percent_decode` was given on this thread.
        pub(super) static DECODED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Matches `uri` against `template`: what it bound, and the bytes decoded.
    fn decoding(template: &str, uri: &str) -> (Option<Vec<(String, String)>>, usize) {
        let t = UriTemplate::parse(template).unwrap();
        DECODED.with(|d| d.set(0));
        let bound = t.matches(uri);
        (bound, DECODED.with(std::cell::Cell::get))
    }

    #[test]
    fn matching_decodes_about_what_it_reads() {
        let long = format!("files://{}{}/", "a".repeat(1 << 20), "/b".repeat(600));
        let (bound, decoded) = decoding("files://{+dir}/{name}", &long);
        assert_eq!(bound, None);
        assert!(
            decoded <= 16 * long.len() + (1 << 16),
            "decoded {decoded} of {}",
            long.len()
        );
        // Two paths, each may end at any `/`: still bounded.
        let long = format!("repo://{}{}", "a/x/".repeat(1 << 16), "b/");
        let (bound, decoded) = decoding("repo://{+a}/x/{+b}", &long);
        assert_eq!(bound, None);
        assert!(
            decoded <= 16 * long.len() + (1 << 16),
            "decoded {decoded} of {}",
            long.len()
        );
        // Values refused once, and several paths in a row, still match.
        let tail = "q".repeat(5000);
        let (bound, _) = decoding("x://{+a}/{+b}", &format!("x://p/C:/{tail}"));
        assert_eq!(
            bound,
            Some(vec![("a".into(), "p/C:".into()), ("b".into(), tail.clone())])
        );
        let (bound, _) = decoding("x://{+a}/{+b}/{+c}/{+d}/end", &format!("x://a/b/c/{tail}/end"));
        assert_eq!(bound.map(|b| b.len()), Some(4));
        // A deep path that matches decodes each value once.
        let deep = format!("files://{}f.txt", "d/".repeat(500));
        let (bound, decoded) = decoding("files://{+dir}/{name}", &deep);
        let dir = "d/".repeat(500).trim_end_matches('/').to_owned();
        assert_eq!(bound, Some(vec![("dir".into(), dir), ("name".into(), "f.txt".into())]));
        assert!(decoded <= deep.len());
    }

    #[test]
    fn percent_escapes_are_two_hex_digits() {
        assert_eq!(percent_decode("a%2Fb%2f").as_deref(), Some("a/b/"));
        assert_eq!(percent_decode("%E2%82%AC").as_deref(), Some("\u{20ac}"));
        for bad in ["%+F", "%-1", "%+", "%2", "%", "%G0", "% 1", "%\u{e9}0"] {
            assert_eq!(percent_decode(bad), None, "{bad:?}");
        }
        let t = UriTemplate::parse("x://{id}").unwrap();
        assert_eq!(t.matches("x://a%+Fb"), None);
    }

    #[test]
    fn matches_and_decodes() {
        let t = UriTemplate::parse("test://template/{id}/data").unwrap();
        assert_eq!(
            t.matches("test://template/123/data"),
            Some(vec![("id".into(), "123".into())])
        );
        assert_eq!(
            t.matches("test://template/a%20b/data"),
            Some(vec![("id".into(), "a b".into())])
        );
        assert_eq!(t.matches("test://template/123/other"), None);
        assert_eq!(t.matches("test://template//data"), None);
    }

    #[test]
    fn rejects_traversal() {
        let t = UriTemplate::parse("files://{name}").unwrap();
        assert_eq!(t.matches("files://a/b"), None);
        assert_eq!(t.matches("files://a%2Fb"), None);
        assert_eq!(t.matches("files://.."), None);
        assert_eq!(t.matches("files://%2E%2E"), None);
        // A drive: `base.join("C:secret")` on Windows leaves the base.
        let under_docs = UriTemplate::parse("files://docs/{name}").unwrap();
        assert_eq!(under_docs.matches("files://docs/C:secret.txt"), None);
        assert_eq!(under_docs.matches("files://docs/c%3Asecret.txt"), None);
        for named in ["notes:today", "9:30", "é:1"] {
            assert_eq!(
                under_docs.matches(&format!("files://docs/{named}")),
                Some(vec![("name".into(), named.into())]),
                "{named}"
            );
        }
        let r = UriTemplate::parse("files://{+path}").unwrap();
        assert_eq!(
            r.matches("files://a/b.txt"),
            Some(vec![("path".into(), "a/b.txt".into())])
        );
        assert_eq!(r.matches("files://a/../etc/passwd"), None);
        assert_eq!(r.matches("files://a/%2e%2e/etc"), None);
        // Absolute paths would replace the base they are joined to.
        for absolute in [
            "files:///etc/passwd",
            "files://%2Fetc%2Fpasswd",
            "files://%5Cwindows",
            "files://C:%5Cwindows",
            "files://c:/windows",
            "files://a//etc",
            "files://a/",
            "files://a%00b",
            "files://../x",
        ] {
            assert_eq!(r.matches(absolute), None, "{absolute}");
        }
        let under = UriTemplate::parse("files://docs/{+path}").unwrap();
        assert_eq!(under.matches("files://docs//etc/passwd"), None);
        assert_eq!(
            UriTemplate::parse("files://{name}").unwrap().matches("files://a%00"),
            None
        );
    }

    #[test]
    fn a_value_may_contain_the_literal_that_follows_it() {
        let t = UriTemplate::parse("files://{+dir}/{name}").unwrap();
        assert_eq!(
            t.matches("files://a/b/c.txt"),
            Some(vec![("dir".into(), "a/b".into()), ("name".into(), "c.txt".into())])
        );
        let h = UriTemplate::parse("repo://{+path}/history").unwrap();
        assert_eq!(
            h.matches("repo://docs/history/notes/history"),
            Some(vec![("path".into(), "docs/history/notes".into())])
        );
        // Many occurrences cost a bounded number of steps, then no match.
        let many = UriTemplate::parse("x://{+a}/{+b}/{+c}/{+d}/end").unwrap();
        let uri = format!("x://{}", "s/".repeat(2000));
        assert_eq!(many.matches(&uri), None);
    }

    #[test]
    fn rejects_unsupported_operators() {
        for bad in ["x://{#a}", "x://{a,b}", "x://{a*}", "x://{?q}", "x://{a", "x://{a}{b}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }
}
