//! Request bodies: size limits, gzip, and the JSON rules seed 000 applies to the whole body.
//!
//! A body is refused whole (400 or 413) before any event in it is validated or stored. The checks
//! serde_json does not make, or makes with unhelpful messages, are done by [`scan`], one
//! iterative pass over the bytes: JSON nesting (serde_json's own guard is a recursion limit of
//! 128, higher than the seed's 100), `\u0000` and raw NUL bytes, and UTF-16 surrogate escapes
//! that are not a high-low pair. Everything else (syntax, UTF-8, numbers that overflow to
//! infinity such as `1e999`, NaN and Infinity literals) is left to serde_json, which refuses
//! them all and says where.

use std::io::Read;

use serde_json::Value;

use super::pointer::type_name;
use super::Limits;

/// Why a body was refused. Each variant is one HTTP status; the message says what is wrong in
/// words a client can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// 413 Payload Too Large: over the size limit before or after decompression, or more events
    /// than a list may carry.
    #[error("{0}")]
    TooLarge(String),
    /// 400 Bad Request: not gzip when it said so, not JSON, or JSON that breaks seed 000's rules.
    #[error("{0}")]
    BadRequest(String),
}

/// A parsed body: the events it carries, in order, still as JSON (each is validated on its own).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedBody {
    pub events: Vec<Value>,
    /// The body was a list (or a batch object), so the caller answers with a per-event report;
    /// a single event answers with its own status.
    pub is_list: bool,
}

/// The body as bytes of JSON: checked against `max_body_bytes` as sent and, when `gzip` is set
/// (`Content-Encoding: gzip`), inflated through a reader that stops one byte past the limit.
pub fn decode_body(raw: &[u8], gzip: bool, limits: &Limits) -> Result<Vec<u8>, BodyError> {
    let max = limits.max_body_bytes;
    if raw.len() > max {
        return Err(BodyError::TooLarge(format!(
            "the request body is {} bytes; at most {max} bytes are accepted",
            raw.len()
        )));
    }
    if !gzip {
        return Ok(raw.to_vec());
    }
    // Multi-member gzip is valid gzip (RFC 1952 section 2.2), so every member is read.
    let mut reader =
        flate2::read::MultiGzDecoder::new(raw).take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1));
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(BodyError::BadRequest(format!("the body is not valid gzip: {e}"))),
        };
        if out.len() + n > max {
            return Err(BodyError::TooLarge(format!(
                "the body inflates to more than {max} bytes; at most {max} bytes are accepted after decompression"
            )));
        }
        // Grow by doubling but never past the limit, so capacity stays bounded by it.
        if out.len() + n > out.capacity() {
            let wanted = (out.capacity().saturating_mul(2)).max(out.len() + n).min(max);
            out.reserve_exact(wanted - out.len());
        }
        out.extend_from_slice(chunk.get(..n).unwrap_or_default());
    }
    Ok(out)
}

/// Seed 000's body: one event object, or a JSON list of at most `max_events` of them.
///
/// List items are not checked here beyond the body rules: an item that is not an object is
/// rejected by [`super::validate`] as that event's own outcome. An empty list is a valid body
/// that carries no events.
pub fn parse_body(bytes: &[u8], limits: &Limits) -> Result<ParsedBody, BodyError> {
    let top_level_items = check_bytes(bytes, limits)?;
    // Counted before parsing, so a 50 MiB list of tiny items is refused without building it.
    if let Some(n) = top_level_items {
        check_event_count(n, limits)?;
    }
    match parse_json(bytes)? {
        Value::Object(map) => Ok(ParsedBody { events: vec![Value::Object(map)], is_list: false }),
        Value::Array(items) => {
            check_event_count(items.len(), limits)?;
            Ok(ParsedBody { events: items, is_list: true })
        }
        other => Err(BodyError::BadRequest(format!(
            "the body must be one OpenLineage event (a JSON object) or a JSON list of events; found {}",
            type_name(&other)
        ))),
    }
}

/// Seed 002's batch body: an object whose `events` array holds at least one event. A bare JSON
/// list is not a batch (seed 002 says so).
pub fn parse_batch_body(bytes: &[u8], limits: &Limits) -> Result<ParsedBody, BodyError> {
    check_bytes(bytes, limits)?;
    let value = parse_json(bytes)?;
    let Value::Object(mut map) = value else {
        return Err(BodyError::BadRequest(format!(
            "a batch body must be a JSON object with an \"events\" array; found {}",
            type_name(&value)
        )));
    };
    match map.remove("events") {
        Some(Value::Array(items)) => {
            if items.is_empty() {
                return Err(BodyError::BadRequest("\"events\" must hold at least one event".into()));
            }
            check_event_count(items.len(), limits)?;
            Ok(ParsedBody { events: items, is_list: true })
        }
        Some(other) => Err(BodyError::BadRequest(format!("\"events\" must be an array; found {}", type_name(&other)))),
        None => Err(BodyError::BadRequest("a batch body must have an \"events\" array".into())),
    }
}

/// The body rules for JSON that did not arrive as bytes (a GraphQL `JSON` argument): nesting at
/// most `max_nesting` and no NUL character in any string or key. Walks iteratively.
pub fn check_value(value: &Value, limits: &Limits) -> Result<(), BodyError> {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::String(s) => check_no_nul(s)?,
            Value::Array(items) => {
                check_depth(depth, limits)?;
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
            Value::Object(map) => {
                check_depth(depth, limits)?;
                for (k, item) in map {
                    check_no_nul(k)?;
                    stack.push((item, depth + 1));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    Ok(())
}

fn check_depth(depth: usize, limits: &Limits) -> Result<(), BodyError> {
    if depth > limits.max_nesting {
        return Err(BodyError::BadRequest(format!(
            "JSON nesting is deeper than {} levels; at most {} are accepted",
            limits.max_nesting, limits.max_nesting
        )));
    }
    Ok(())
}

fn check_no_nul(s: &str) -> Result<(), BodyError> {
    if s.contains('\0') {
        return Err(BodyError::BadRequest("the JSON contains a \\u0000 (NUL) character, which is not accepted".into()));
    }
    Ok(())
}

fn check_event_count(n: usize, limits: &Limits) -> Result<(), BodyError> {
    if n > limits.max_events {
        return Err(BodyError::TooLarge(format!(
            "the body carries {n} events; at most {} are accepted in one request",
            limits.max_events
        )));
    }
    Ok(())
}

/// The size limit and [`scan`]; returns how many items a top-level list holds.
fn check_bytes(bytes: &[u8], limits: &Limits) -> Result<Option<usize>, BodyError> {
    if bytes.len() > limits.max_body_bytes {
        return Err(BodyError::TooLarge(format!(
            "the request body is {} bytes; at most {} bytes are accepted",
            bytes.len(),
            limits.max_body_bytes
        )));
    }
    scan(bytes, limits.max_nesting)
}

fn parse_json(bytes: &[u8]) -> Result<Value, BodyError> {
    serde_json::from_slice::<Value>(bytes).map_err(|e| {
        let text = e.to_string();
        if text.starts_with("number out of range") {
            BodyError::BadRequest(format!("invalid JSON: {text} (numbers must be finite 64-bit floats)"))
        } else {
            BodyError::BadRequest(format!("invalid JSON: {text}"))
        }
    })
}

/// Where a byte is, in the terms serde_json's messages use (line and column from 1, in bytes).
struct Position {
    line: usize,
    line_start: usize,
}

impl Position {
    fn at(&self, i: usize) -> String {
        format!("line {} column {}", self.line, i - self.line_start + 1)
    }
}

/// One pass over the bytes, outside and inside strings, for what serde_json does not refuse (or
/// refuses too late): nesting over `max_nesting`, NUL (raw or `\u0000`), unpaired surrogates.
/// When the body is a list, returns how many items it holds (commas at level 1, plus one): exact
/// for valid JSON, and invalid JSON is refused by serde_json anyway.
fn scan(bytes: &[u8], max_nesting: usize) -> Result<Option<usize>, BodyError> {
    let mut pos = Position { line: 1, line_start: 0 };
    let mut depth = 0usize;
    let mut in_string = false;
    let top_is_list = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
    let mut level_one_commas = 0usize;
    let mut level_one_empty = true;
    // Inside a string only quotes, escapes, line ends and NUL matter: the scan skips to the next
    // of them (most of an event's bytes are names), and never past the first NUL.
    let first_nul = memchr::memchr(0, bytes).unwrap_or(bytes.len());
    let mut i = 0usize;
    while let Some(&b) = bytes.get(i) {
        if b == 0 {
            return Err(BodyError::BadRequest(format!("the body contains a NUL byte at {}", pos.at(i))));
        }
        if b == b'\n' {
            pos.line += 1;
            pos.line_start = i + 1;
            i += 1;
            continue;
        }
        if in_string {
            match b {
                b'"' => in_string = false,
                b'\\' => {
                    if bytes.get(i + 1) == Some(&b'u') {
                        if let Some(unit) = hex4(bytes, i + 2) {
                            i = check_escape(bytes, i, unit, &pos)?;
                            continue;
                        }
                    }
                    // Any other escape is two bytes; a malformed one is serde_json's to report.
                    i += 2;
                    continue;
                }
                _ => {
                    // Nothing else in a string changes the scan's state (its opening quote already
                    // counted for `level_one_empty`).
                    let end = first_nul.max(i + 1);
                    i = memchr::memchr3(b'"', b'\\', b'\n', &bytes[i + 1..end]).map_or(end, |k| i + 1 + k);
                    continue;
                }
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > max_nesting {
                        return Err(BodyError::BadRequest(format!(
                            "JSON nesting is deeper than {max_nesting} levels at {}; at most {max_nesting} are accepted",
                            pos.at(i)
                        )));
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                b',' if depth == 1 => level_one_commas += 1,
                _ => {}
            }
        }
        if depth == 1 && level_one_empty && !matches!(b, b'[' | b' ' | b'\t' | b'\r') {
            level_one_empty = false;
        }
        i += 1;
    }
    Ok(top_is_list.then_some(if level_one_empty { 0 } else { level_one_commas + 1 }))
}

/// Checks the `\uXXXX` escape at `i` (whose code unit is `unit`) and returns the index after it
/// (after both halves of a surrogate pair).
fn check_escape(bytes: &[u8], i: usize, unit: u16, pos: &Position) -> Result<usize, BodyError> {
    match unit {
        0 => Err(BodyError::BadRequest(format!(
            "the JSON contains a \\u0000 (NUL) character at {}, which is not accepted",
            pos.at(i)
        ))),
        0xD800..=0xDBFF => {
            let paired = bytes.get(i + 6) == Some(&b'\\')
                && bytes.get(i + 7) == Some(&b'u')
                && matches!(hex4(bytes, i + 8), Some(0xDC00..=0xDFFF));
            if paired {
                Ok(i + 12)
            } else {
                Err(BodyError::BadRequest(format!(
                    "the JSON contains an unpaired UTF-16 surrogate \\u{unit:04X} at {} (a high surrogate must be followed by a low one)",
                    pos.at(i)
                )))
            }
        }
        0xDC00..=0xDFFF => Err(BodyError::BadRequest(format!(
            "the JSON contains an unpaired UTF-16 surrogate \\u{unit:04X} at {} (a low surrogate without a high one)",
            pos.at(i)
        ))),
        _ => Ok(i + 6),
    }
}

fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    let digits = bytes.get(at..at.checked_add(4)?)?;
    let mut unit: u16 = 0;
    for &d in digits {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        unit = (unit << 4) | u16::from(v);
    }
    Some(unit)
}
