//! `Retry-After` on every 503: a 503 here means the store is down, too slow or out of disk
//! (`Error::Unavailable`), which passes, or ingest push-back, which sets its own; clients that honour the header (urllib3, so the
//! openlineage-python client) wait that long and send again instead of giving up.

use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

/// Seconds a client is asked to wait before retrying: short, since a restarting database is
/// back in seconds and the retries of a down store cost a refused connection each.
pub const RETRY_AFTER_SECS: u64 = 2;

/// Adds `Retry-After` to a 503 that has none.
pub async fn retry_after(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    if resp.status() == StatusCode::SERVICE_UNAVAILABLE && !resp.headers().contains_key(header::RETRY_AFTER) {
        resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    }
    resp
}
