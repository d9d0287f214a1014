//! Disk trouble: SQLite's errors for a full disk, a read-only or vanished file system and
//! failed I/O are the store being unavailable (`StoreError::Unavailable`, HTTP 503 with
//! `Retry-After`), not an internal error: the request was fine, the data directory is not, and
//! SQLite has rolled the transaction back, so the client may retry once space is freed.
//! Each is logged with the data directory, so the operator knows where to look.

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use rusqlite::ErrorCode;

use crate::store::StoreError;

/// The directory named in the log line. One embedded store per process in practice (`serve`,
/// a CLI command); a process that opens several names the last one.
static DATA_DIR: RwLock<Option<PathBuf>> = RwLock::new(None);

pub(super) fn remember_data_dir(dir: &Path) {
    *DATA_DIR.write().unwrap_or_else(|p| p.into_inner()) = Some(dir.to_path_buf());
}

/// What an operator should read for a SQLite error code that means disk trouble.
fn trouble(code: ErrorCode) -> Option<&'static str> {
    match code {
        ErrorCode::DiskFull => Some("the disk is full"),
        ErrorCode::ReadOnly => Some("the data directory is read-only"),
        ErrorCode::SystemIoFailure => Some("the disk failed a read or write"),
        ErrorCode::CannotOpen => Some("a store file cannot be opened"),
        _ => None,
    }
}

/// `Some(Unavailable)` when `e` is a SQLite error meaning disk trouble, logged once here.
pub(super) fn unavailable<E: std::fmt::Display + 'static>(e: &E) -> Option<StoreError> {
    let rusqlite::Error::SqliteFailure(failure, _) = (e as &dyn Any).downcast_ref::<rusqlite::Error>()? else {
        return None;
    };
    let problem = trouble(failure.code)?;
    let dir = DATA_DIR.read().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or_default();
    tracing::error!(
        error = %e,
        data_dir = %dir.display(),
        problem,
        "embedded store cannot write its data directory; free space or make it writable, then retry"
    );
    Some(StoreError::Unavailable(format!("{problem} ({}): {e}", dir.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: std::os::raw::c_int) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn disk_errors_are_unavailable_and_others_are_not() {
        for code in [rusqlite::ffi::SQLITE_FULL, rusqlite::ffi::SQLITE_READONLY, rusqlite::ffi::SQLITE_IOERR] {
            assert!(matches!(unavailable(&failure(code)), Some(StoreError::Unavailable(_))), "code {code}");
        }
        assert!(unavailable(&failure(rusqlite::ffi::SQLITE_CONSTRAINT)).is_none());
        assert!(unavailable(&"not a SQLite error").is_none());
    }
}
