//! What validation (errors) and facet reading (warnings) share: the bounded list of issues an
//! event collects ([`Issues`]), and the typed reads of a JSON property whose [`Fault`]s become
//! issues. Each caller words its own messages; what counts as missing, blank or of the wrong type
//! is decided here once. A module of its own, so that neither `validate` nor `facets` imports the
//! other for it.

use serde_json::{Map, Value};

use super::model::ValidationIssue;
use super::pointer::key;

/// The most errors, and separately the most warnings, listed for one event; past it one more
/// issue at the root says how many were left out. Keeps a 50 MiB event of bad references from
/// producing a report larger than itself.
pub const MAX_ISSUES: usize = 100;

/// A bounded list of issues.
#[derive(Debug, Default)]
pub(super) struct Issues {
    list: Vec<ValidationIssue>,
    left_out: usize,
}

impl Issues {
    pub(super) fn push(&mut self, pointer: &str, message: impl Into<String>) {
        if self.list.len() < MAX_ISSUES {
            self.list.push(ValidationIssue::new(pointer, message));
        } else {
            self.left_out += 1;
        }
    }

    /// `read`'s value; on a fault, `None` and the issue `words` gives for it, at the pointer of
    /// property `name` under `ptr`.
    pub(super) fn note<'a, T>(
        &mut self,
        read: Result<T, Fault<'a>>,
        ptr: &str,
        name: &str,
        words: impl FnOnce(Fault<'a>) -> String,
    ) -> Option<T> {
        match read {
            Ok(v) => Some(v),
            Err(fault) => {
                self.push(&key(ptr, name), words(fault));
                None
            }
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty() && self.left_out == 0
    }

    pub(super) fn finish(mut self) -> Vec<ValidationIssue> {
        if self.left_out > 0 {
            let n = self.left_out;
            self.list.push(ValidationIssue::new(
                "",
                format!("{n} more issue{} not listed", if n == 1 { " is" } else { "s are" }),
            ));
        }
        self.list
    }
}

/// Why a property could not be read as the type a rule asks for.
pub(super) enum Fault<'a> {
    /// Absent (or `null`, where the reader counts `null` as absent).
    Missing,
    /// A string of whitespace only, where a name is required.
    Blank,
    /// Present, with another JSON type (`null` included, where it does not count as absent).
    Wrong(&'a Value),
}

/// Property `name` of `obj`, when `take` accepts its type (`Value::as_object`, `Value::as_array`,
/// ...). `null_missing`: a `null` counts as absent rather than as a value of the wrong type.
pub(super) fn property<'a, T>(
    obj: &'a Map<String, Value>,
    name: &str,
    null_missing: bool,
    take: impl FnOnce(&'a Value) -> Option<T>,
) -> Result<T, Fault<'a>> {
    match obj.get(name) {
        None => Err(Fault::Missing),
        Some(Value::Null) if null_missing => Err(Fault::Missing),
        Some(v) => take(v).ok_or(Fault::Wrong(v)),
    }
}

/// A string property that names something, so must not be blank.
pub(super) fn nonblank<'a>(obj: &'a Map<String, Value>, name: &str, null_missing: bool) -> Result<&'a str, Fault<'a>> {
    let s = property(obj, name, null_missing, Value::as_str)?;
    if s.trim().is_empty() {
        Err(Fault::Blank)
    } else {
        Ok(s)
    }
}
