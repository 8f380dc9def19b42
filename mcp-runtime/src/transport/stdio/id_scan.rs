//! The id of a request too long to keep, found as its bytes go by: its
//! answer (-32600, the line is too long) then names the request, and a
//! client waiting for it does not wait for its own timeout.

use crate::protocol::RequestId;

/// The longest id value kept (its JSON text); a longer one is not named.
const MAX_ID: usize = 256;

/// Reads a message's bytes in pieces, keeping only what names it: the
/// top-level `"id"` member's value, and whether a top-level `"method"`
/// member is there (a response, which has an id but no method, is not
/// named). Strings are skipped whole, so an `"id"` inside `params` is not
/// taken for the request's, wherever the members lie. Bytes that cannot be
/// one JSON object (more after it ends, an id member without its colon, a
/// value with a space inside) name nothing.
#[derive(Default)]
pub(super) struct IdScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// At the top level, where the next string names a member.
    at_name: bool,
    /// The name of the member being read (its first bytes).
    name: Option<Vec<u8>>,
    /// The member just named is `"id"`: its value starts after the colon.
    id_next: bool,
    /// The `"id"` member's value so far; `None` past [`MAX_ID`] bytes.
    value: Option<Vec<u8>>,
    reading_value: bool,
    /// A space or a newline ended the value being read: anything more but
    /// its delimiter makes it no value.
    value_spaced: bool,
    id: Option<Vec<u8>>,
    method: bool,
    /// The top-level object or array has ended.
    closed: bool,
    /// The top-level value ended (anything more is not one message), or a
    /// name went without its colon.
    broken: bool,
}

impl IdScan {
    pub(super) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.step(b);
        }
    }

    /// The request's id, when the bytes read were a request with one.
    pub(super) fn request_id(&self) -> Option<RequestId> {
        let id = self.id.as_deref().filter(|_| self.method && !self.broken)?;
        serde_json::from_slice(id).ok()
    }

    fn step(&mut self, b: u8) {
        if self.broken {
            return;
        }
        if self.in_string {
            self.keep(b);
            if self.escaped {
                self.escaped = false;
                self.name_byte(b);
            } else if b == b'\\' {
                // A name written with an escape is none of those looked for.
                self.escaped = true;
                self.name_byte(b);
            } else if b == b'"' {
                self.in_string = false;
                if let Some(name) = self.name.take() {
                    match name.as_slice() {
                        b"id" => self.id_next = true,
                        b"method" => self.method = true,
                        _ => {}
                    }
                }
            } else {
                self.name_byte(b);
            }
            return;
        }
        if self.depth == 0 && self.closed && !b.is_ascii_whitespace() {
            self.broken = true;
            return;
        }
        if self.id_next && b != b':' && !b.is_ascii_whitespace() {
            self.broken = true;
            return;
        }
        match b {
            b'"' => {
                if self.depth == 1 && self.at_name {
                    self.name = Some(Vec::new());
                    self.at_name = false;
                }
                self.in_string = true;
                self.keep(b);
            }
            b':' if self.depth == 1 && self.id_next => {
                self.id_next = false;
                self.reading_value = true;
                self.value_spaced = false;
                self.value = Some(Vec::new());
            }
            b',' | b'}' | b']' if self.depth == 1 => {
                if std::mem::take(&mut self.reading_value) {
                    self.id = self.value.take();
                }
                if b == b',' {
                    self.at_name = true;
                } else {
                    self.depth = 0;
                    self.closed = true;
                }
            }
            b'{' | b'[' => {
                self.depth = self.depth.saturating_add(1);
                if self.depth == 1 {
                    self.at_name = b == b'{';
                }
                self.keep(b);
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                self.keep(b);
            }
            b if b.is_ascii_whitespace() => {
                if self.reading_value && self.value.as_ref().is_some_and(|v| !v.is_empty()) {
                    self.value_spaced = true;
                }
            }
            _ => self.keep(b),
        }
    }

    /// Keeps a byte of a member's name, while one is being read.
    fn name_byte(&mut self, b: u8) {
        if let Some(name) = &mut self.name {
            // Seven bytes tell "id" and "method" from any longer name.
            if name.len() < 7 {
                name.push(b);
            }
        }
    }

    /// Keeps a byte of the id's value, while it is being read.
    fn keep(&mut self, b: u8) {
        if !self.reading_value {
            return;
        }
        match &mut self.value {
            Some(value) if value.len() < MAX_ID && !self.value_spaced => value.push(b),
            _ => self.value = None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id found in `text`, fed whole and then split at every byte.
    fn scanned(text: &str) -> Option<RequestId> {
        let mut whole = IdScan::default();
        whole.feed(text.as_bytes());
        let found = whole.request_id();
        for at in 0..text.len() {
            let mut split = IdScan::default();
            split.feed(&text.as_bytes()[..at]);
            split.feed(&text.as_bytes()[at..]);
            assert_eq!(split.request_id(), found, "split at {at} of {text}");
        }
        found
    }

    #[test]
    fn the_top_level_id_of_a_request_is_found_wherever_it_lies() {
        let first = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":9,"a":"}\"id\":8"}}"#;
        assert_eq!(scanned(first), Some(RequestId::Number(7)));
        let last = r#"{"method":"tools/call","params":{"x":[{"id":1}],"id":"no"},"jsonrpc":"2.0","id":"r-1"}"#;
        assert_eq!(scanned(last), Some(RequestId::String("r-1".into())));
        let spaced = "{ \"method\" : \"x\" , \"id\" : \"a\\\"b\" }";
        assert_eq!(scanned(spaced), Some(RequestId::String("a\"b".into())));
    }

    #[test]
    fn a_response_a_notification_or_an_unusable_id_names_nothing() {
        assert_eq!(scanned(r#"{"jsonrpc":"2.0","id":3,"result":{"method":"x"}}"#), None);
        assert_eq!(scanned(r#"{"jsonrpc":"2.0","method":"x","params":{"id":4}}"#), None);
        assert_eq!(scanned(r#"{"method":"x","id":{"n":1}}"#), None);
        assert_eq!(scanned(r#"{"method":"x","id":1.5}"#), None);
        assert_eq!(scanned(r#"{"methods":"x","id":1}"#), None);
        assert_eq!(scanned(r#"{"method":"x","i\"d":1}"#), None);
        let long = format!(r#"{{"method":"x","id":"{}"}}"#, "z".repeat(MAX_ID));
        assert_eq!(scanned(&long), None);
        assert_eq!(scanned(r#"[{"method":"x","id":1}]"#), None);
        // Not one JSON object.
        assert_eq!(scanned(r#"{"method":"x","id":1}{"id":2,"result":{}}"#), None);
        assert_eq!(scanned(r#"{"method":"x","id":1} junk"#), None);
        assert_eq!(scanned(r#"{"id","x":5,"method":"m"}"#), None);
        assert_eq!(scanned(r#"{"method":"x","id":1 2}"#), None);
        assert_eq!(scanned("{\"method\":\"x\",\"id\": 12 }\r"), Some(RequestId::Number(12)));
    }
}
