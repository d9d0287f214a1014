//! A stable identity for an event's content, to recognise the same event sent twice.
//!
//! SHA-256 (hex) of a canonical JSON text: object keys sorted by their UTF-8 bytes, no
//! whitespace, strings escaped one fixed way, numbers as serde_json prints them. Two bodies that
//! differ only in key order or spacing give the same fingerprint; any change of content gives
//! another. Numbers are not normalised across forms: `1` and `1.0` differ (a producer resending
//! an event sends the same text, so that is enough). The walk uses an explicit stack, so no
//! value, however deep, can overflow the call stack.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The fingerprint of an event (or any JSON value): 64 lowercase hex digits.
pub fn event_fingerprint(event: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value),
        Key(&'a str),
        Text(&'static str),
    }
    // The canonical text is built whole and hashed once: hashing it piece by piece cost more
    // than the hash itself (an event is a few hundred pieces).
    let mut text: Vec<u8> = Vec::with_capacity(4096);
    let mut stack = vec![Step::Value(event)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => text.extend_from_slice(t.as_bytes()),
            Step::Key(k) => {
                write_string(&mut text, k);
                text.push(b':');
            }
            Step::Value(v) => match v {
                Value::Null => text.extend_from_slice(b"null"),
                Value::Bool(true) => text.extend_from_slice(b"true"),
                Value::Bool(false) => text.extend_from_slice(b"false"),
                Value::Number(n) => text.extend_from_slice(n.to_string().as_bytes()),
                Value::String(s) => write_string(&mut text, s),
                Value::Array(items) => {
                    text.push(b'[');
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    text.push(b'{');
                    stack.push(Step::Text("}"));
                    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                    entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                    for (i, (k, item)) in entries.into_iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        stack.push(Step::Key(k));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
            },
        }
    }
    let digest = Sha256::digest(&text);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    hex
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON string literal: `"` and `\` escaped, control characters as `\u00XX`, the rest as UTF-8
/// (scanned by byte: no byte of a multi-byte UTF-8 character is below 0x80).
fn write_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: [u8; 6];
        let seq: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b if b < 0x20 => {
                escaped = [b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0x0f)]];
                &escaped
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(seq);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_spacing_do_not_matter() {
        let a: Value = serde_json::from_str(r#"{"b": 1, "a": {"y": [1, 2], "x": "s"}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":{"x":"s","y":[1,2]},"b":1}"#).unwrap();
        assert_eq!(event_fingerprint(&a), event_fingerprint(&b));
        assert_eq!(event_fingerprint(&a).len(), 64);
        assert!(event_fingerprint(&a).bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn content_changes_change_the_fingerprint() {
        let base = json!({"a": [1, 2], "b": "x"});
        let variants = [
            json!({"a": [2, 1], "b": "x"}),
            json!({"a": [1, 2], "b": "y"}),
            json!({"a": [1, 2], "b": "x", "c": null}),
            json!({"a": [[1, 2]], "b": "x"}),
            json!({"a": [1, 2], "b": "x\""}),
            json!({"a": "[1,2]", "b": "x"}),
            json!({"a,b": [1, 2]}),
        ];
        for v in variants {
            assert_ne!(event_fingerprint(&base), event_fingerprint(&v), "{v}");
        }
    }

    #[test]
    fn canonical_text_is_what_is_hashed() {
        // sha256 of the canonical text {"a":"\"q\u000a","b":[true,null,1.5]}
        let v = json!({"b": [true, null, 1.5], "a": "\"q\n"});
        let expected = {
            let mut h = Sha256::new();
            h.update(br#"{"a":"\"q\u000a","b":[true,null,1.5]}"#);
            h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>()
        };
        assert_eq!(event_fingerprint(&v), expected);
        // A backslash, a multi-byte character and the last control character.
        let v = json!({"k": "\\é\u{1f}x"});
        let mut h = Sha256::new();
        h.update("{\"k\":\"\\\\é\\u001fx\"}".as_bytes());
        let expected = h.finalize().iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(event_fingerprint(&v), expected);
    }

    #[test]
    fn deep_values_do_not_overflow_the_stack() {
        let mut v = json!(1);
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        assert_eq!(event_fingerprint(&v).len(), 64);
        // Dropping a deep Value recurses in serde_json; unwind it by hand.
        let mut cur = v;
        while let Value::Array(mut items) = cur {
            cur = items.pop().unwrap_or(Value::Null);
        }
    }
}
