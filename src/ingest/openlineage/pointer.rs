//! JSON pointers (RFC 6901) for validation messages, and short previews of offending values.
//!
//! Every issue names where in the event it is, as a pointer a client can resolve against what it
//! sent: `/outputs/0/facets/columnLineage/fields/a~1b/inputFields/2/field` for a field named
//! `a/b`. Keys are escaped here and nowhere else.

use serde_json::Value;

/// `base` extended by one object key, escaped as RFC 6901 requires (`~` → `~0`, `/` → `~1`).
pub(crate) fn key(base: &str, token: &str) -> String {
    let mut out = String::with_capacity(base.len() + token.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `base` extended by one array index.
pub(crate) fn index(base: &str, i: usize) -> String {
    format!("{base}/{i}")
}

/// The JSON type of a value, as messages name it ("found a number").
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A string quoted for a message, cut to a readable length on a character boundary.
pub(crate) fn preview(s: &str) -> String {
    const MAX_CHARS: usize = 64;
    let mut out = String::from("\"");
    let mut chars = s.chars();
    for c in chars.by_ref().take(MAX_CHARS) {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    if chars.next().is_some() {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_escaped_per_rfc_6901() {
        assert_eq!(key("", "eventTime"), "/eventTime");
        assert_eq!(key("/fields", "a/b~c"), "/fields/a~1b~0c");
        assert_eq!(key("/fields", ""), "/fields/");
        assert_eq!(index("/inputs", 3), "/inputs/3");
    }

    #[test]
    fn previews_are_short_and_quoted() {
        assert_eq!(preview("abc"), "\"abc\"");
        let long = "é".repeat(100);
        let p = preview(&long);
        assert!(p.ends_with("\"..."));
        assert_eq!(p.chars().filter(|c| *c == 'é').count(), 64);
        assert_eq!(preview("a\"b\n"), "\"a\\\"b\\u000a\"");
    }
}
