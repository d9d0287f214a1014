//! Bodies: gzip, size limits, and the JSON rules that refuse a whole body (400 and 413).

use std::io::Write;

use serde_json::{json, Value};

use super::super::{check_value, decode_body, parse_batch_body, parse_body, BodyError, Limits};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

fn small(max_body_bytes: usize) -> Limits {
    Limits { max_body_bytes, ..Limits::default() }
}

fn bad_request(result: Result<impl std::fmt::Debug, BodyError>) -> String {
    match result {
        Err(BodyError::BadRequest(m)) => m,
        other => panic!("expected BadRequest, got {other:?}"),
    }
}

fn too_large(result: Result<impl std::fmt::Debug, BodyError>) -> String {
    match result {
        Err(BodyError::TooLarge(m)) => m,
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

fn parse(text: &str) -> Result<super::super::ParsedBody, BodyError> {
    parse_body(text.as_bytes(), &Limits::default())
}

#[test]
fn default_limits_are_the_seeds() {
    let l = Limits::default();
    assert_eq!(l.max_body_bytes, 52_428_800);
    assert_eq!(l.max_events, 1000);
    assert_eq!(l.max_nesting, 100);
    assert_eq!(l.max_relationships, 10_000);
    assert_eq!(l.max_future, chrono::Duration::minutes(5));
}

#[test]
fn plain_bodies_pass_through_and_are_limited_as_sent() {
    assert_eq!(decode_body(b"{}", false, &Limits::default()).unwrap(), b"{}");
    assert_eq!(decode_body(&[b' '; 10], false, &small(10)).unwrap().len(), 10);
    let m = too_large(decode_body(&[b' '; 11], false, &small(10)));
    assert_eq!(m, "the request body is 11 bytes; at most 10 bytes are accepted");
    // The compressed size is checked before inflating too.
    let m = too_large(decode_body(&[0u8; 11], true, &small(10)));
    assert!(m.starts_with("the request body is 11 bytes"), "{m}");
}

#[test]
fn gzip_bodies_are_inflated() {
    let body = br#"{"eventTime": "2024-01-01T00:00:00Z"}"#;
    assert_eq!(decode_body(&gzip(body), true, &Limits::default()).unwrap(), body);
    // Exactly at the limit after inflating is fine.
    let exact = vec![b' '; 4096];
    assert_eq!(decode_body(&gzip(&exact), true, &small(4096)).unwrap().len(), 4096);
    // Two gzip members are one body (RFC 1952).
    let mut two = gzip(b"[1,");
    two.extend(gzip(b"2]"));
    assert_eq!(decode_body(&two, true, &Limits::default()).unwrap(), b"[1,2]");
}

#[test]
fn a_gzip_bomb_stops_at_the_limit() {
    // 64 MiB of zeros compresses to about 64 KiB; with a 1 MiB limit it must stop early.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![0u8; 1 << 20];
    for _ in 0..64 {
        enc.write_all(&block).unwrap();
    }
    let bomb = enc.finish().unwrap();
    assert!(bomb.len() < 1 << 20);
    let m = too_large(decode_body(&bomb, true, &small(1 << 20)));
    assert_eq!(
        m,
        "the body inflates to more than 1048576 bytes; at most 1048576 bytes are accepted after decompression"
    );
    // One byte over is over.
    let m = too_large(decode_body(&gzip(&[b' '; 4097]), true, &small(4096)));
    assert!(m.starts_with("the body inflates to more than 4096 bytes"), "{m}");
}

#[test]
fn invalid_gzip_is_a_bad_request() {
    let m = bad_request(decode_body(b"{\"not\": \"gzip\"}", true, &Limits::default()));
    assert!(m.starts_with("the body is not valid gzip: "), "{m}");
    let mut truncated = gzip(&[b'x'; 10_000]);
    truncated.truncate(truncated.len() / 2);
    let m = bad_request(decode_body(&truncated, true, &Limits::default()));
    assert!(m.starts_with("the body is not valid gzip: "), "{m}");
    let mut corrupted = gzip(b"{\"a\": 1}");
    let n = corrupted.len();
    corrupted[n - 6] ^= 0xff; // the CRC
    let m = bad_request(decode_body(&corrupted, true, &Limits::default()));
    assert!(m.starts_with("the body is not valid gzip: "), "{m}");
}

#[test]
fn one_object_or_a_list() {
    let one = parse(r#"{"a": 1}"#).unwrap();
    assert!(!one.is_list);
    assert_eq!(one.events, vec![json!({"a": 1})]);
    let list = parse(r#"[{"a": 1}, {"b": 2}, 3]"#).unwrap();
    assert!(list.is_list);
    assert_eq!(list.events.len(), 3, "items that are not objects are the validator's to reject");
    let empty = parse("[]").unwrap();
    assert!(empty.is_list && empty.events.is_empty());
    for (text, found) in [("3", "a number"), ("\"x\"", "a string"), ("null", "null"), ("true", "a boolean")] {
        assert_eq!(
            bad_request(parse(text)),
            format!("the body must be one OpenLineage event (a JSON object) or a JSON list of events; found {found}")
        );
    }
}

#[test]
fn invalid_json_says_where() {
    let m = bad_request(parse("{\"a\": 1,\n \"b\": }"));
    assert_eq!(m, "invalid JSON: expected value at line 2 column 7");
    assert_eq!(bad_request(parse("")), "invalid JSON: EOF while parsing a value at line 1 column 0");
    assert!(bad_request(parse("{} {}")).starts_with("invalid JSON: trailing characters at line 1 column 4"));
    // Not UTF-8.
    assert!(bad_request(parse_body(b"{\"a\": \"\xff\"}", &Limits::default())).starts_with("invalid JSON: "));
    // A byte-order mark is not JSON.
    assert!(bad_request(parse_body(b"\xef\xbb\xbf{}", &Limits::default())).starts_with("invalid JSON: "));
}

#[test]
fn non_finite_numbers_are_refused() {
    for text in ["{\"a\": NaN}", "{\"a\": Infinity}", "{\"a\": -Infinity}", "[nan]"] {
        let m = bad_request(parse(text));
        assert!(m.starts_with("invalid JSON: ") && m.contains(" at line 1 column "), "{text}: {m}");
    }
    // Numbers that overflow a 64-bit float would become infinity: serde_json refuses them.
    for text in ["{\"a\": 1e999}", "[-1e400]", "[1.5E+309]"] {
        let m = bad_request(parse(text));
        assert!(m.starts_with("invalid JSON: number out of range at line 1 column "), "{text}: {m}");
        assert!(m.ends_with("(numbers must be finite 64-bit floats)"), "{m}");
    }
    // Huge integers and tiny numbers are finite and fine.
    let parsed = parse("[123456789012345678901234567890, 1e-999, 1.7976931348623157e308]").unwrap();
    assert_eq!(parsed.events[1], json!(0.0));
}

#[test]
fn unpaired_surrogates_are_refused() {
    assert_eq!(
        bad_request(parse(r#"{"a": "x\ud800"}"#)),
        "the JSON contains an unpaired UTF-16 surrogate \\uD800 at line 1 column 9 (a high surrogate must be followed by a low one)"
    );
    assert_eq!(
        bad_request(parse(r#"{"a": "\uDC00y"}"#)),
        "the JSON contains an unpaired UTF-16 surrogate \\uDC00 at line 1 column 8 (a low surrogate without a high one)"
    );
    assert!(bad_request(parse(r#"["\ud800\u0041"]"#)).contains("\\uD800"));
    assert!(bad_request(parse(r#"["\ud800\ud800"]"#)).contains("\\uD800"));
    assert!(bad_request(parse(r#"["\ud800"#)).contains("\\uD800"));
    // In a key too.
    assert!(bad_request(parse(r#"{"\udfff": 1}"#)).contains("\\uDFFF"));
    // A proper pair is an emoji.
    let ok = parse(r#"["\ud83d\ude00", "\uD83D\uDE00"]"#).unwrap();
    assert_eq!(ok.events, vec![json!("😀"), json!("😀")]);
}

#[test]
fn nul_characters_are_refused() {
    assert_eq!(
        bad_request(parse(r#"{"a": "x\u0000"}"#)),
        "the JSON contains a \\u0000 (NUL) character at line 1 column 9, which is not accepted"
    );
    assert_eq!(
        bad_request(parse_body(b"{\"a\": \"x\0\"}", &Limits::default())),
        "the body contains a NUL byte at line 1 column 9"
    );
    assert!(bad_request(parse_body(b"{}\0", &Limits::default())).starts_with("the body contains a NUL byte"));
    // The scan skips through strings to the next quote, escape or line end, never past a NUL.
    assert_eq!(
        bad_request(parse_body(b"[\"a\nbcdef\", \"ghijk\0\"]", &Limits::default())),
        "the body contains a NUL byte at line 2 column 15"
    );
    // An escaped backslash followed by the text u0000 is not a NUL.
    let ok = parse(r#"["\\u0000", "\\\\", "\"\\"]"#).unwrap();
    assert_eq!(ok.events[0], json!("\\u0000"));
}

#[test]
fn nesting_is_limited_to_100_levels() {
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(parse(&nest(100)).is_ok());
    assert_eq!(
        bad_request(parse(&nest(101))),
        "JSON nesting is deeper than 100 levels at line 1 column 101; at most 100 are accepted"
    );
    // Objects count as well, and brackets inside strings do not.
    let objects = format!("{}1{}", "{\"a\":".repeat(100), "}".repeat(100));
    assert!(parse(&objects).is_ok());
    let objects = format!("[{}1{}]", "{\"a\":".repeat(100), "}".repeat(100));
    assert!(bad_request(parse(&objects)).starts_with("JSON nesting is deeper than 100 levels"));
    let in_string = format!("[\"{}\"]", "[{".repeat(500));
    assert!(parse(&in_string).is_ok());
    // A quote escaped inside a string does not end it.
    let escaped = format!("[\"\\\"{}\"]", "[".repeat(200));
    assert!(parse(&escaped).is_ok());
    // Very deep input is refused without recursion.
    assert!(bad_request(parse(&nest(1_000_000))).starts_with("JSON nesting is deeper than 100 levels"));
    // The position counts lines.
    let m = bad_request(parse(&format!("\n\n  {}", nest(101))));
    assert!(m.contains("at line 3 column 103"), "{m}");
    // A lower limit is honoured.
    let limits = Limits { max_nesting: 2, ..Limits::default() };
    assert!(parse_body(b"[[1]]", &limits).is_ok());
    assert!(parse_body(b"[[[1]]]", &limits).is_err());
}

#[test]
fn too_many_events_is_413() {
    let list = |n: usize| format!("[{}]", vec!["{}"; n].join(","));
    assert_eq!(parse(&list(1000)).unwrap().events.len(), 1000);
    assert_eq!(too_large(parse(&list(1001))), "the body carries 1001 events; at most 1000 are accepted in one request");
    // Items are counted before the list is built, and only those of the list itself.
    let two = Limits { max_events: 2, ..Limits::default() };
    for (text, n) in
        [("[]", 0), (" [ \n ] ", 0), ("[[1, 2, 3]]", 1), ("[\"a,b,c\"]", 1), ("[{\"a\": 1, \"b\": [2, 3]}, 4]", 2)]
    {
        assert_eq!(parse_body(text.as_bytes(), &two).unwrap().events.len(), n, "{text}");
    }
    assert_eq!(
        too_large(parse_body(b"[1, 2, 3]", &two)),
        "the body carries 3 events; at most 2 are accepted in one request"
    );
    assert_eq!(
        too_large(parse_body(b"\n[{},\n{},\n{}]", &two)),
        "the body carries 3 events; at most 2 are accepted in one request"
    );
    // parse_body checks the size as well, for callers that skip decode_body.
    assert!(too_large(parse_body(b"[1, 2]", &small(4))).starts_with("the request body is 6 bytes"));
}

#[test]
fn batch_bodies_are_objects_with_events() {
    let b = parse_batch_body(br#"{"events": [{"a": 1}, {"b": 2}]}"#, &Limits::default()).unwrap();
    assert!(b.is_list);
    assert_eq!(b.events.len(), 2);
    let l = Limits::default();
    assert_eq!(
        bad_request(parse_batch_body(b"[{}]", &l)),
        "a batch body must be a JSON object with an \"events\" array; found an array"
    );
    assert_eq!(bad_request(parse_batch_body(b"{}", &l)), "a batch body must have an \"events\" array");
    assert_eq!(bad_request(parse_batch_body(br#"{"events": []}"#, &l)), "\"events\" must hold at least one event");
    assert_eq!(bad_request(parse_batch_body(br#"{"events": {}}"#, &l)), "\"events\" must be an array; found an object");
    let many = format!("{{\"events\": [{}]}}", vec!["{}"; 1001].join(","));
    assert!(too_large(parse_batch_body(many.as_bytes(), &l)).starts_with("the body carries 1001 events"));
    // The body rules apply to batches too.
    assert!(bad_request(parse_batch_body(br#"{"events": ["\u0000"]}"#, &l)).contains("\\u0000"));
}

#[test]
fn check_value_applies_the_body_rules_to_values() {
    let l = Limits::default();
    assert!(check_value(&json!({"a": [1, {"b": "c"}]}), &l).is_ok());
    assert!(bad_request(check_value(&json!({"a": "x\u{0}"}), &l)).contains("\\u0000"));
    assert!(bad_request(check_value(&json!({"x\u{0}": 1}), &l)).contains("\\u0000"));
    let mut deep = json!(1);
    for _ in 0..100 {
        deep = Value::Array(vec![deep]);
    }
    assert!(check_value(&deep, &l).is_ok());
    deep = Value::Array(vec![deep]);
    assert_eq!(bad_request(check_value(&deep, &l)), "JSON nesting is deeper than 100 levels; at most 100 are accepted");
}
