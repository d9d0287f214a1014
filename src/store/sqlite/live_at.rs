//! "Was this edge live at t?" answered inside the embedded store's SQL (issue #45, item 3), so an
//! as-of read tests each edge where it lies and decodes only those live then.
//!
//! `edge_live_at(created, retired_at, intervals, instants)` is true when the edge was live at one
//! of `instants` (micros RFC 3339 texts joined by `,`, the [`instants`] parameter): the rule of
//! [`crate::domain::live_at`], called here on the row's columns, so SQL and `Edge::live_at`
//! cannot disagree. The instants are parsed once per statement (SQLite's auxiliary data on a
//! bound parameter); an `intervals` text is read by a small scanner of the one shape this store
//! writes (`rows::intervals_text`), any other shape by serde as a row decode reads it.
//!
//! The reads put [`since`] before it, on the indexed `retired_at`: an edge retired before every
//! instant was live at none (its last interval ended when it was retired; earlier ones before),
//! so its row is not even fetched. `>=`, not `>`: the column keeps microseconds, an interval's
//! end may be finer (an imported one), and the function decides the rest exactly.

use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::rows::{intervals_col, ts};
use crate::domain::time::{parse_rfc3339, push_rfc3339_auto};
use crate::domain::Timestamp;

/// Registers `edge_live_at` on a connection (every connection of the store, as `unicode_lower`).
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "edge_live_at",
        4,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            let at = ctx.get_or_create_aux(3, parse_instants)?;
            let text = |i: usize| -> rusqlite::Result<Option<&str>> {
                match ctx.get_raw(i) {
                    ValueRef::Null => Ok(None),
                    v => v.as_str().map(Some).map_err(|e| rusqlite::Error::UserFunctionError(e.into())),
                }
            };
            let parse = |s: &str| parse_rfc3339(s).map_err(|e| rusqlite::Error::UserFunctionError(e.into()));
            let intervals = intervals_of(text(2)?.unwrap_or("[]"));
            if intervals.is_empty() {
                // Only an edge without intervals needs `created` and `retired_at`.
                let created = parse(text(0)?.unwrap_or_default())?;
                let retired = text(1)?.map(parse).transpose()?;
                return Ok(at.iter().any(|t| crate::domain::live_at(created, retired, std::iter::empty(), *t)));
            }
            Ok(at.iter().any(|t| crate::domain::live_at(Timestamp::MIN_UTC, None, intervals.iter().copied(), *t)))
        },
    )
}

/// The `instants` parameter of `edge_live_at`, to the nanosecond (an instant asked for may be
/// finer than the columns keep).
pub(super) fn instants(at: &[Timestamp]) -> String {
    let mut out = String::with_capacity(at.len() * 31);
    for (i, t) in at.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_rfc3339_auto(&mut out, t);
    }
    out
}

/// The `retired_at` bound the reads test before `edge_live_at`: the earliest instant.
pub(super) fn since(at: &[Timestamp]) -> String {
    at.iter().min().map(ts).unwrap_or_default()
}

fn parse_instants(v: ValueRef<'_>) -> Result<Vec<Timestamp>, String> {
    let text = v.as_str().map_err(|e| format!("edge_live_at: the instants are not text: {e}"))?;
    text.split(',').map(|t| parse_rfc3339(t).map_err(|e| format!("edge_live_at: bad instant {t:?}: {e}"))).collect()
}

type Span = (Timestamp, Option<Timestamp>);

/// An `intervals` column's spans: the store's own shape scanned, anything else read by serde
/// (which reads what it cannot parse whole as no intervals, as a row decode does).
fn intervals_of(text: &str) -> Vec<Span> {
    scan(text).unwrap_or_else(|| intervals_col(text).into_iter().map(|i| (i.from, i.to)).collect())
}

/// `[{"from":"<ts>","to":null|"<ts>"},...]`, as `rows::intervals_text` writes it; `None` for
/// any other text.
fn scan(text: &str) -> Option<Vec<Span>> {
    let mut rest = text.strip_prefix('[')?;
    let mut out = Vec::with_capacity(1);
    if rest == "]" {
        return Some(out);
    }
    loop {
        rest = rest.strip_prefix("{\"from\":\"")?;
        let end = rest.find('"')?;
        let from = parse_rfc3339(&rest[..end]).ok()?;
        rest = rest[end + 1..].strip_prefix(",\"to\":")?;
        let to = match rest.strip_prefix("null") {
            Some(r) => {
                rest = r;
                None
            }
            None => {
                rest = rest.strip_prefix('"')?;
                let end = rest.find('"')?;
                let to = parse_rfc3339(&rest[..end]).ok()?;
                rest = &rest[end + 1..];
                Some(to)
            }
        };
        rest = rest.strip_prefix('}')?;
        out.push((from, to));
        match rest.strip_prefix(',') {
            Some(r) => rest = r,
            None => return (rest == "]").then_some(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Edge, End, Interval};
    use chrono::TimeZone;

    fn t(s: i64, nanos: u32) -> Timestamp {
        chrono::Utc.timestamp_opt(1_700_000_000 + s, nanos).unwrap()
    }

    fn edge(created: Timestamp, retired_at: Option<Timestamp>, intervals: Vec<Interval>) -> Edge {
        Edge {
            id: 1,
            created,
            source: End::Container { id: 1 },
            target: End::Container { id: 2 },
            description: None,
            source_type: "x".into(),
            operation: None,
            derived: None,
            transformations: None,
            last_asserted_at: None,
            retired_at,
            intervals,
        }
    }

    /// The SQL function answers as `Edge::live_at` for every kind of edge and instant, with the
    /// `retired_at` bound the reads put before it.
    #[test]
    fn sql_answers_as_edge_live_at() {
        let conn = Connection::open_in_memory().unwrap();
        register(&conn).unwrap();
        let iv = |from: Timestamp, to: Option<Timestamp>| Interval { from, to };
        let edges = vec![
            edge(t(10, 0), None, vec![iv(t(10, 0), None)]),
            edge(t(10, 0), Some(t(20, 0)), vec![iv(t(10, 0), Some(t(20, 0)))]),
            edge(t(10, 0), None, vec![iv(t(10, 0), Some(t(20, 0))), iv(t(30, 0), None)]),
            edge(t(10, 0), Some(t(40, 0)), vec![iv(t(10, 0), Some(t(20, 0))), iv(t(30, 0), Some(t(40, 0)))]),
            // Finer than the columns keep (an imported edge), and edges without intervals.
            edge(t(10, 0), Some(t(20, 1_500)), vec![iv(t(10, 500), Some(t(20, 1_500)))]),
            edge(t(10, 0), None, vec![]),
            edge(t(10, 0), Some(t(20, 0)), vec![]),
        ];
        let instants: Vec<Timestamp> = [0, 10, 15, 20, 25, 30, 35, 40, 45]
            .iter()
            .flat_map(|&s| [t(s, 0), t(s, 1_000), t(s - 1, 999_999_000)])
            .chain([t(10, 400), t(10, 500), t(20, 1_000), t(20, 1_400), t(20, 1_500)])
            .collect();
        for e in &edges {
            let row = (ts(&e.created), e.retired_at.as_ref().map(ts), super::super::rows::intervals_text(&e.intervals));
            for at in &instants {
                let live: bool = conn
                    .query_row(
                        "SELECT (?2 IS NULL OR ?2 >= ?5) AND edge_live_at(?1, ?2, ?3, ?4)",
                        rusqlite::params![row.0, row.1, row.2, instants_of(&[*at]), since(&[*at])],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(live, e.live_at(*at), "{e:?} at {at}");
            }
            // Several instants: live at any of them.
            let pair = [t(15, 0), t(35, 0)];
            let live: bool = conn
                .query_row(
                    "SELECT edge_live_at(?1, ?2, ?3, ?4)",
                    rusqlite::params![row.0, row.1, row.2, instants_of(&pair)],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(live, pair.iter().any(|at| e.live_at(*at)), "{e:?}");
        }
    }

    fn instants_of(at: &[Timestamp]) -> String {
        instants(at)
    }

    #[test]
    fn the_scanner_reads_what_the_store_writes_and_leaves_the_rest_to_serde() {
        let spans = vec![Interval { from: t(1, 0), to: Some(t(2, 123_000_000)) }, Interval { from: t(3, 7), to: None }];
        let text = super::super::rows::intervals_text(&spans);
        assert_eq!(scan(&text), Some(spans.iter().map(|i| (i.from, i.to)).collect()));
        assert_eq!(scan("[]"), Some(vec![]));
        // Serde's own spacing is not the store's: read by serde instead, to the same spans.
        let spaced = text.replace(',', ", ");
        assert_eq!(scan(&spaced), None);
        assert_eq!(intervals_of(&spaced), spans.iter().map(|i| (i.from, i.to)).collect::<Vec<_>>());
        assert!(intervals_of("not json").is_empty());
    }
}
