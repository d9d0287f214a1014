//! Push-back: how the service says "not now" instead of falling over.
//!
//! `IngestGate` bounds the ingest requests that run at once (REST routes and the GraphQL
//! `ingestOpenLineage` mutation share it); a small bounded queue waits for a slot, and past it a
//! request is refused at once with 503 and `Retry-After`: HTTP's status for a temporary overload,
//! and the one the stock OpenLineage clients retry (they give up on a 429). Reads never pass the gate, so a flood
//! of events cannot take the slots, threads and memory the readers need.
//!
//! `AuthThrottle` counts failed authentications per client address (a token bucket per address:
//! a burst, then a steady rate); an address over its budget is answered 429 before its token is
//! even looked at, so tokens cannot be guessed at speed. It is hand-written rather than
//! `governor`'s keyed limiter because the gate must look at an address's budget without
//! spending it (only failures spend), which `governor` does not offer.
//!
//! # How it fits
//!
//! How the service says "not now". `IngestGate` (two tokio semaphores: the running slots, and running + queued) is a
//! middleware on the REST ingest routes, taken before the body is read, and is put in the GraphQL context for
//! `ingestOpenLineage`; past it a request is refused at once with `OVERLOADED` (503, `Retry-After`). `AuthThrottle` is
//! a middleware on every route that authenticates (GraphQL, ingest, the REST API; not health, metrics or the pages): a
//! token bucket of failed authentications per client address (`ConnectInfo`, which `server::run_limited` provides; a
//! router driven without a socket is not throttled), checked before the token is, spent when a presented token fails
//! (401, or the `AuthFailed` mark GraphQL's 200 answers carry). Its warnings go through `LogEvery`, so neither can
//! flood the log. The limits come from `config::PushBackArgs` through `server::run_limited`; `run` and `run_lineage`
//! use the defaults. Invariant: reads never pass the ingest gate.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::Error;

/// What a refused ingest is told to wait before trying again.
const INGEST_RETRY_AFTER_SECS: u64 = 1;
/// Addresses tracked at most; past it, addresses whose budget is whole again are forgotten first.
const MAX_TRACKED_ADDRESSES: usize = 65_536;
/// Warnings about refusals are written at most this often (the count of the rest goes with the next).
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The limits, from `serve`'s flags.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Ingest requests that run at once.
    pub ingest_concurrency: usize,
    /// Ingest requests that may wait for a slot; more are refused at once.
    pub ingest_queue: usize,
    /// How long a waiting ingest request waits before it is refused.
    pub ingest_queue_wait: Duration,
    /// Failed authentications an address may make per minute (and at once); 0: no throttle.
    pub auth_failures_per_minute: u32,
    /// How concurrent OpenLineage requests are grouped into one write (`service::group_commit`).
    pub ingest_group: crate::service::group_commit::GroupConfig,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ingest_concurrency: 8,
            ingest_queue: 32,
            ingest_queue_wait: Duration::from_secs(2),
            auth_failures_per_minute: 20,
            ingest_group: Default::default(),
        }
    }
}

/// Both gates, shared by every request of one server.
#[derive(Clone)]
pub struct PushBack {
    pub ingest: IngestGate,
    pub auth: AuthThrottle,
}

impl PushBack {
    pub fn new(limits: Limits) -> Self {
        PushBack { ingest: IngestGate::new(&limits), auth: AuthThrottle::new(limits.auth_failures_per_minute) }
    }
}

/// Why an ingest request was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub running: usize,
    pub waiting: usize,
}

impl Refused {
    pub fn message(&self) -> String {
        format!(
            "ingest is at its concurrency limit ({} running, {} waiting); retry after {INGEST_RETRY_AFTER_SECS} s",
            self.running, self.waiting
        )
    }
}

/// The bound on concurrent ingest. Two semaphores: `admitted` (running + waiting) refuses at once
/// when the queue is full; `running` is the concurrency itself, waited on for `wait` at most.
#[derive(Clone)]
pub struct IngestGate(Arc<Gate>);

struct Gate {
    running: Arc<Semaphore>,
    admitted: Arc<Semaphore>,
    concurrency: usize,
    queue: usize,
    wait: Duration,
    log: LogEvery,
}

/// A running ingest's slot; dropping it frees the slot.
pub struct IngestPermit {
    _running: OwnedSemaphorePermit,
    _admitted: OwnedSemaphorePermit,
}

impl Drop for IngestPermit {
    fn drop(&mut self) {
        crate::metrics::metrics().ingest_in_flight.dec();
    }
}

impl IngestGate {
    pub fn new(limits: &Limits) -> Self {
        let concurrency = limits.ingest_concurrency.max(1);
        IngestGate(Arc::new(Gate {
            running: Arc::new(Semaphore::new(concurrency)),
            admitted: Arc::new(Semaphore::new(concurrency + limits.ingest_queue)),
            concurrency,
            queue: limits.ingest_queue,
            wait: limits.ingest_queue_wait,
            log: LogEvery::new(LOG_EVERY),
        }))
    }

    /// A slot, after waiting in the queue if need be; `Refused` when the queue is full or the
    /// wait ran out.
    pub async fn enter(&self) -> Result<IngestPermit, Refused> {
        let g = &self.0;
        let admitted = match g.admitted.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => return Err(self.refuse()),
        };
        let running = match g.running.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => match tokio::time::timeout(g.wait, g.running.clone().acquire_owned()).await {
                Ok(Ok(p)) => p,
                // Timed out (or the semaphore closed, which it never is).
                _ => {
                    drop(admitted);
                    return Err(self.refuse());
                }
            },
        };
        crate::metrics::metrics().ingest_in_flight.inc();
        Ok(IngestPermit { _running: running, _admitted: admitted })
    }

    fn refuse(&self) -> Refused {
        let g = &self.0;
        let running = g.concurrency - g.running.available_permits();
        let in_gate = g.concurrency + g.queue - g.admitted.available_permits();
        let refused = Refused { running, waiting: in_gate.saturating_sub(running) };
        crate::metrics::metrics().ingest_refused.inc();
        if let Some(suppressed) = g.log.ready() {
            tracing::warn!(
                running = refused.running,
                waiting = refused.waiting,
                concurrency = g.concurrency,
                queue = g.queue,
                refused_since_last = suppressed + 1,
                "ingest refused: at its concurrency limit"
            );
        }
        refused
    }
}

/// The 503 of a refused REST ingest: `{"detail": ...}` and `Retry-After`.
pub fn ingest_refused_response(r: &Refused) -> Response {
    let body = Json(json!({ "detail": r.message() })).into_response();
    retry_after(StatusCode::SERVICE_UNAVAILABLE, INGEST_RETRY_AFTER_SECS, body)
}

fn retry_after(status: StatusCode, retry_after_secs: u64, body: Response) -> Response {
    let mut resp = body;
    *resp.status_mut() = status;
    resp.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs.max(1)));
    resp
}

/// Middleware of the REST ingest routes: a slot is taken before the body is read (so a flood of
/// large bodies is never buffered all at once) and held until the answer is written.
pub async fn limit_ingest(State(gate): State<IngestGate>, req: Request, next: Next) -> Response {
    match gate.enter().await {
        Ok(_permit) => next.run(req).await,
        Err(r) => ingest_refused_response(&r),
    }
}

/// Set on a response whose request failed authentication (GraphQL answers those with 200 and an
/// `UNAUTHENTICATED` error, so the status alone does not tell).
#[derive(Debug, Clone, Copy)]
pub struct AuthFailed;

/// Failed authentications per client address, as token buckets.
#[derive(Clone)]
pub struct AuthThrottle(Option<Arc<Throttle>>);

struct Throttle {
    /// Failures an address may make at once; also the bucket's size.
    burst: f64,
    /// Failures regained per second.
    per_sec: f64,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
    log: LogEvery,
}

struct Bucket {
    tokens: f64,
    at: Instant,
    failures: u64,
    /// Whether this block of the address was logged already.
    logged: bool,
}

impl Bucket {
    fn refill(&mut self, now: Instant, t: &Throttle) {
        let gained = now.duration_since(self.at).as_secs_f64() * t.per_sec;
        self.tokens = (self.tokens + gained).min(t.burst);
        self.at = now;
        if self.tokens >= 1.0 {
            self.logged = false;
        }
    }

    fn wait(&self, t: &Throttle) -> Duration {
        Duration::from_secs_f64(((1.0 - self.tokens).max(0.0) / t.per_sec).max(0.0))
    }
}

/// IPv6 clients are keyed by their /64: one host usually holds a whole /64 and could otherwise
/// take a fresh address per guess.
fn key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
    }
}

impl AuthThrottle {
    pub fn new(failures_per_minute: u32) -> Self {
        if failures_per_minute == 0 {
            return AuthThrottle(None);
        }
        let burst = f64::from(failures_per_minute);
        AuthThrottle(Some(Arc::new(Throttle {
            burst,
            per_sec: burst / 60.0,
            buckets: Mutex::new(HashMap::new()),
            log: LogEvery::new(Duration::from_secs(1)),
        })))
    }

    /// How long the address must wait, when it has no failures left.
    pub fn blocked(&self, ip: IpAddr) -> Option<Duration> {
        let t = self.0.as_ref()?;
        let mut buckets = t.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let b = buckets.get_mut(&key(ip))?;
        b.refill(Instant::now(), t);
        (b.tokens < 1.0).then(|| b.wait(t))
    }

    /// Spends one of the address's failures; logs (rate-limited) when that blocks it.
    pub fn failed(&self, ip: IpAddr) {
        let Some(t) = self.0.as_ref() else { return };
        let now = Instant::now();
        let mut buckets = t.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_TRACKED_ADDRESSES && !buckets.contains_key(&key(ip)) {
            buckets.retain(|_, b| {
                b.refill(now, t);
                b.tokens < t.burst
            });
            if buckets.len() >= MAX_TRACKED_ADDRESSES {
                // Forgetting budgets is better than growing without bound.
                buckets.clear();
            }
        }
        let b = buckets.entry(key(ip)).or_insert(Bucket { tokens: t.burst, at: now, failures: 0, logged: false });
        b.refill(now, t);
        b.tokens = (b.tokens - 1.0).max(0.0);
        b.failures += 1;
        if b.tokens < 1.0 && !b.logged {
            b.logged = true;
            let (failures, wait) = (b.failures, b.wait(t));
            drop(buckets);
            if let Some(suppressed) = t.log.ready() {
                tracing::warn!(
                    address = %ip,
                    failures,
                    retry_after_secs = wait.as_secs_f64().ceil() as u64,
                    other_addresses_blocked_since_last = suppressed,
                    "authentication failures throttled for a client address"
                );
            }
        }
    }
}

/// Middleware of every route that authenticates: an address out of failures gets 429 with
/// `Retry-After` before anything else; a request whose token fails spends one. Requests that came
/// without a socket (a router driven in-process) carry no address and are not throttled.
pub async fn throttle_auth(State(throttle): State<AuthThrottle>, req: Request, next: Next) -> Response {
    let Some(ip) = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()) else {
        return next.run(req).await;
    };
    if let Some(wait) = throttle.blocked(ip) {
        crate::metrics::metrics().auth_throttled.inc();
        let secs = wait.as_secs_f64().ceil() as u64;
        let e =
            Error::TooManyRequests(format!("too many failed authentications from {ip}; retry after {} s", secs.max(1)));
        let status = StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
        let body = if req.uri().path() == "/graphql" {
            super::error_response(status, e.code(), e.client_message())
        } else {
            Json(json!({ "detail": e.client_message() })).into_response()
        };
        return retry_after(status, secs, body);
    }
    // Only a presented credential that fails is a guess; a request without one is not counted.
    let presented = req.headers().contains_key(header::AUTHORIZATION);
    let resp = next.run(req).await;
    let failed = resp.status() == StatusCode::UNAUTHORIZED || resp.extensions().get::<AuthFailed>().is_some();
    if presented && failed {
        throttle.failed(ip);
    }
    resp
}

/// Lets a repeated warning through at most once per period; `ready` returns how many were held
/// back since the last one written.
struct LogEvery {
    period: Duration,
    last: Mutex<Option<Instant>>,
    held: AtomicU64,
}

impl LogEvery {
    fn new(period: Duration) -> Self {
        LogEvery { period, last: Mutex::new(None), held: AtomicU64::new(0) }
    }

    fn ready(&self) -> Option<u64> {
        let now = Instant::now();
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if last.is_some_and(|l| now.duration_since(l) < self.period) {
            self.held.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *last = Some(now);
        Some(self.held.swap(0, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(concurrency: usize, queue: usize, wait_ms: u64) -> Limits {
        Limits {
            ingest_concurrency: concurrency,
            ingest_queue: queue,
            ingest_queue_wait: Duration::from_millis(wait_ms),
            auth_failures_per_minute: 0,
            ..Limits::default()
        }
    }

    #[tokio::test]
    async fn the_gate_lets_in_its_concurrency_and_refuses_past_a_full_queue() {
        let gate = IngestGate::new(&limits(2, 0, 10_000));
        let a = gate.enter().await.expect("first slot");
        let _b = gate.enter().await.expect("second slot");
        // No queue: refused at once, whatever the wait.
        assert_eq!(gate.enter().await.err(), Some(Refused { running: 2, waiting: 0 }));
        drop(a);
        gate.enter().await.expect("a freed slot is taken again");
    }

    #[tokio::test]
    async fn a_queued_request_gets_a_freed_slot_and_a_late_one_is_refused() {
        let gate = IngestGate::new(&limits(1, 1, 60_000));
        let first = gate.enter().await.expect("slot");
        let g = gate.clone();
        let waiting = tokio::spawn(async move { g.enter().await.map(|_| ()) });
        // The queue's one place is taken (by the waiter) or about to be: a third is refused
        // once the waiter is in.
        while gate.0.admitted.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(gate.enter().await.err(), Some(Refused { running: 1, waiting: 1 }));
        drop(first);
        assert_eq!(waiting.await.expect("joins"), Ok(()));

        let gate = IngestGate::new(&limits(1, 1, 20));
        let _held = gate.enter().await.expect("slot");
        assert!(gate.enter().await.is_err(), "the wait runs out while the slot is held");
    }

    #[test]
    fn an_address_is_blocked_after_its_burst_of_failures_and_others_are_not() {
        let t = AuthThrottle::new(3);
        let a: IpAddr = "192.0.2.1".parse().expect("ip");
        let b: IpAddr = "192.0.2.2".parse().expect("ip");
        for _ in 0..2 {
            t.failed(a);
            assert_eq!(t.blocked(a), None);
        }
        t.failed(a);
        let wait = t.blocked(a).expect("blocked after 3 failures");
        // One failure comes back every 20 s at 3 a minute.
        assert!(wait <= Duration::from_secs(20) && wait > Duration::from_secs(19), "{wait:?}");
        assert_eq!(t.blocked(b), None);
        assert_eq!(AuthThrottle::new(0).blocked(a), None);
    }

    #[test]
    fn ipv6_addresses_of_one_prefix_share_a_budget() {
        let t = AuthThrottle::new(1);
        t.failed("2001:db8::1".parse().expect("ip"));
        assert!(t.blocked("2001:db8::ffff".parse().expect("ip")).is_some());
        assert!(t.blocked("2001:db8:0:1::1".parse().expect("ip")).is_none());
    }
}
