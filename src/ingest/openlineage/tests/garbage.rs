//! Property-style tests: random bytes, random JSON token soup, and random mutations of real
//! events never panic, and what the body rules accept respects them. A small deterministic PRNG
//! keeps the cases reproducible without a dependency; a failure prints its seed.

use serde_json::{json, Map, Value};

use super::super::{
    check_value, decode_body, event_fingerprint, parse_batch_body, parse_body, validate, BodyError, Limits,
};
use super::{now, run_event};

/// xorshift64*: enough randomness for fuzz-style tests, deterministic per seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn depth(v: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(items) => {
                max = max.max(d);
                stack.extend(items.iter().map(|i| (i, d + 1)));
            }
            Value::Object(map) => {
                max = max.max(d);
                stack.extend(map.values().map(|i| (i, d + 1)));
            }
            _ => {}
        }
    }
    max
}

/// Whatever parse_body accepts obeys the body rules.
fn check_body(bytes: &[u8], limits: &Limits) {
    match parse_body(bytes, limits) {
        Ok(body) => {
            assert!(body.events.len() <= limits.max_events);
            for e in &body.events {
                assert!(depth(e) <= limits.max_nesting);
                assert!(check_value(e, limits).is_ok());
                let _ = validate(e, now(), limits);
                assert_eq!(event_fingerprint(e).len(), 64);
            }
        }
        Err(BodyError::BadRequest(m) | BodyError::TooLarge(m)) => assert!(!m.is_empty()),
    }
    let _ = parse_batch_body(bytes, limits);
}

#[test]
fn random_bytes_never_panic() {
    let limits = Limits { max_body_bytes: 4096, max_nesting: 8, max_events: 4, ..Limits::default() };
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let len = rng.below(600);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        for gzip in [false, true] {
            if let Ok(decoded) = decode_body(&bytes, gzip, &limits) {
                check_body(&decoded, &limits);
            }
        }
        // Gzip headers followed by garbage exercise the inflater's error paths.
        let mut gz = vec![0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0xff];
        gz.extend_from_slice(&bytes);
        let _ = decode_body(&gz, true, &limits);
    }
}

#[test]
fn random_json_token_soup_never_panics() {
    const TOKENS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "\"",
        "\\",
        "\\\"",
        "\\\\",
        "\\u",
        "\\ud800",
        "\\udc00",
        "\\ud83d\\ude00",
        "\\u0000",
        "\\u00",
        "\\uZZZZ",
        "\0",
        "\n",
        " ",
        "1",
        "-0",
        "1e999",
        "-1e400",
        "1.5",
        "NaN",
        "Infinity",
        "true",
        "null",
        "\"eventTime\"",
        "\"2025-01-01T00:00:00Z\"",
        "\"run\"",
        "\"job\"",
        "\"inputs\"",
        "\"outputs\"",
        "\"facets\"",
        "\"columnLineage\"",
        "\"fields\"",
        "\"inputFields\"",
        "é",
        "\u{1F600}",
        "\u{feff}",
    ];
    let limits = Limits { max_nesting: 6, max_events: 3, ..Limits::default() };
    for seed in 0..4000u64 {
        let mut rng = Rng::new(seed);
        let n = rng.below(80);
        let text: String = (0..n).map(|_| *rng.pick(TOKENS)).collect();
        check_body(text.as_bytes(), &limits);
    }
}

fn random_scalar(rng: &mut Rng) -> Value {
    const STRINGS: &[&str] = &[
        "",
        " ",
        "COMPLETE",
        "complete",
        "DIRECT",
        "INDIRECT",
        "IDENTITY",
        "MASKED",
        "RENAME",
        "DROP",
        "2025-01-01T00:00:00Z",
        "2025-01-01T00:00:00",
        "9999-12-31T23:59:59Z",
        "-262143-01-01T00:00:00Z",
        "+262142-12-31T23:59:59Z",
        "2025-01-01T00:00:00.99999999999999999999+23:59",
        "1700000000",
        "https://example.com/p",
        "urn:x",
        "http://[::1",
        "a:b",
        ":",
        "{{ any(result) }}",
        "3f1c9a2e-7b41-4c1e-9d55-0a2f6c1e8b90",
        "a/b~c",
        "é\u{1F600}",
    ];
    match rng.below(7) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 1),
        2 => json!(rng.next() as i64),
        3 => json!((rng.next() as f64) / 3.0),
        _ => json!(*rng.pick(STRINGS)),
    }
}

const KEYS: &[&str] = &[
    "eventType",
    "eventTime",
    "producer",
    "schemaURL",
    "run",
    "runId",
    "job",
    "namespace",
    "name",
    "facets",
    "inputs",
    "outputs",
    "dataset",
    "parent",
    "root",
    "sql",
    "query",
    "sourceCode",
    "language",
    "schema",
    "fields",
    "type",
    "description",
    "documentation",
    "ownership",
    "owners",
    "tags",
    "key",
    "value",
    "source",
    "field",
    "symlinks",
    "identifiers",
    "lifecycleStateChange",
    "previousIdentifier",
    "columnLineage",
    "inputFields",
    "transformations",
    "subtype",
    "masking",
    "transformationType",
    "transformationDescription",
    "transformation",
    "_deleted",
];

fn random_value(rng: &mut Rng, budget: &mut usize, depth: usize) -> Value {
    if *budget == 0 || depth > 12 {
        return random_scalar(rng);
    }
    *budget -= 1;
    match rng.below(4) {
        0 => {
            let n = rng.below(4);
            Value::Array((0..n).map(|_| random_value(rng, budget, depth + 1)).collect())
        }
        1 | 2 => {
            let n = rng.below(5);
            let mut map = Map::new();
            for _ in 0..n {
                map.insert(rng.pick(KEYS).to_string(), random_value(rng, budget, depth + 1));
            }
            Value::Object(map)
        }
        _ => random_scalar(rng),
    }
}

/// Replaces, removes or inserts at a random place in the value.
fn mutate(rng: &mut Rng, v: &mut Value) {
    // Choose the place by walking immutably, then take it mutably by its pointer.
    let mut pointer = String::new();
    let mut cur: &Value = v;
    while rng.below(3) != 0 {
        let next = match cur {
            Value::Object(map) if !map.is_empty() => {
                let (k, next) = map.iter().nth(rng.below(map.len())).unwrap();
                pointer = super::super::pointer::key(&pointer, k);
                next
            }
            Value::Array(items) if !items.is_empty() => {
                let i = rng.below(items.len());
                pointer = super::super::pointer::index(&pointer, i);
                &items[i]
            }
            _ => break,
        };
        cur = next;
    }
    let Some(cur) = v.pointer_mut(&pointer) else { return };
    let mut budget = 6;
    match (rng.below(3), &mut *cur) {
        (0, Value::Object(map)) if !map.is_empty() => {
            let k = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            map.remove(&k);
        }
        (1, Value::Object(map)) => {
            map.insert(rng.pick(KEYS).to_string(), random_value(rng, &mut budget, 0));
        }
        (1, Value::Array(items)) => items.push(random_value(rng, &mut budget, 0)),
        _ => *cur = random_value(rng, &mut budget, 0),
    }
}

fn seeds_for_mutation() -> Vec<Value> {
    let own = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openlineage");
    let mut events = vec![run_event()];
    for name in [
        "column_lineage_1_2_0.json",
        "column_lineage_legacy_1_0_0.json",
        "dataset_event_metadata.json",
        "malformed_references.json",
        "run_with_parent_and_root.json",
    ] {
        let bytes = std::fs::read(own.join(name)).unwrap();
        events.extend(parse_body(&bytes, &Limits::default()).unwrap().events);
    }
    events
}

#[test]
fn mutated_events_never_panic() {
    let seeds = seeds_for_mutation();
    let limits = Limits::default();
    let mut valid = 0;
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let mut event = rng.pick(&seeds).clone();
        for _ in 0..=rng.below(4) {
            mutate(&mut rng, &mut event);
        }
        if let Ok(e) = validate(&event, now(), &limits) {
            valid += 1;
            // A valid event's pointers resolve in what was sent.
            for edge in e.datasets().flat_map(|d| d.column_lineage.iter()) {
                assert!(event.pointer(&edge.pointer).is_some(), "seed {seed}: {}", edge.pointer);
            }
            for w in &e.warnings {
                assert!(w.pointer.is_empty() || w.pointer.starts_with('/'), "seed {seed}: {w}");
            }
        }
        // Serialised and parsed again, it meets the same body rules.
        let text = serde_json::to_vec(&event).unwrap();
        check_body(&text, &limits);
    }
    assert!(valid > 100, "mutations should leave many events valid, got {valid}");
}

#[test]
fn random_structures_never_panic() {
    let limits = Limits::default();
    for seed in 0..3000u64 {
        let mut rng = Rng::new(seed);
        let mut budget = 60;
        let v = random_value(&mut rng, &mut budget, 0);
        if let Err(issues) = validate(&v, now(), &limits) {
            assert!(!issues.is_empty(), "seed {seed}");
            for i in &issues {
                assert!(!i.message.is_empty());
            }
        }
        let _ = event_fingerprint(&v);
        let _ = check_value(&v, &limits);
    }
}

#[test]
fn deep_values_from_elsewhere_are_bounded() {
    // JSON that did not come through parse_body (a GraphQL argument) can be deeper than the
    // body limit: validation walks only the shapes it knows and bounds schema recursion.
    let mut fields = json!([{"name": "leaf"}]);
    for i in 0..300 {
        fields = json!([{"name": format!("f{i}"), "fields": fields}]);
    }
    let mut e = run_event();
    e["outputs"][0]["facets"] = json!({"schema": {"fields": fields}});
    let got = validate(&e, now(), &Limits::default()).unwrap();
    assert_eq!(got.outputs[0].schema.len(), 100);
    assert_eq!(
        got.warnings.last().unwrap().message,
        "schema fields nest deeper than 100 levels; the deeper ones are ignored"
    );
    assert!(check_value(&e, &Limits::default()).is_err());
}
