//! Query masking (seed 003, "Query masking: no data values stored"): every string and number
//! literal becomes `?`, everything else (identifiers, keywords, comments, spacing) stays as written.
//!
//! Done on the lexer's tokens rather than on a parse tree so that text the parser rejects is masked
//! too: a statement that failed to parse is still stored, and must not leak the values it carried.

use super::lexer::{Kind, Lexer};
use super::Dialect;

/// Replaces every string, number and dollar-quoted literal of `sql` with `?`.
pub fn mask_literals(sql: &str, dialect: Dialect) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut last = 0;
    for t in Lexer::new(sql, dialect) {
        if matches!(t.kind, Kind::Str | Kind::Number | Kind::Dollar) {
            out.push_str(sql.get(last..t.start).unwrap_or(""));
            out.push('?');
            last = t.end;
        }
    }
    out.push_str(sql.get(last..).unwrap_or(""));
    out
}
