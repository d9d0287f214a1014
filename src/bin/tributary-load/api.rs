//! The service as the load program sees it: GraphQL and REST ingest over HTTP, with the token.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context as _};
use serde_json::{json, Value};

/// How a request ended, as the report counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Ok,
    /// Push-back: 429 or 503, `OVERLOADED` or `TOO_MANY_REQUESTS` (the service asked to be
    /// called again later).
    Refused,
    /// Anything else: a transport error, another status, a GraphQL error.
    Failed,
}

/// How a request is sent again, as openlineage-python's HTTP transport does (urllib3's `Retry`):
/// after a connection error, a timeout, or a 429, 500, 502, 503 or 504 (and, for GraphQL, an
/// `UNAVAILABLE` or push-back error), up to `attempts` in all, waiting `backoff` x 2^(n-1)
/// before the n-th retry (none before the first), at most `max_wait`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Retry {
    pub(crate) attempts: u32,
    pub(crate) backoff: Duration,
    pub(crate) max_wait: Duration,
}

impl Retry {
    fn wait(&self, retry: u32) -> Duration {
        if retry <= 1 {
            return Duration::ZERO;
        }
        self.backoff.saturating_mul(1 << (retry - 1).min(20)).min(self.max_wait)
    }
}

#[derive(Clone)]
pub(crate) struct Api {
    client: reqwest::Client,
    url: String,
    token: Option<String>,
    /// None: every request once (the mixed load counts failures and push-back as they come).
    retry: Option<(Retry, Arc<AtomicU64>)>,
}

impl Api {
    pub(crate) fn new(url: &str, token: Option<String>, timeout: Duration) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder().timeout(timeout).build().context("cannot build the HTTP client")?;
        Ok(Api { client, url: url.trim_end_matches('/').to_string(), token, retry: None })
    }

    /// The same API, sending a request again as `retry` says; each retry counts in `retries`.
    pub(crate) fn with_retry(mut self, retry: Retry, retries: Arc<AtomicU64>) -> Self {
        self.retry = Some((retry, retries));
        self
    }

    /// Runs `attempt` until it says it is done or the retries are spent; its last answer.
    async fn retried<T, F: std::future::Future<Output = (bool, T)>>(&self, mut attempt: impl FnMut() -> F) -> T {
        let mut n = 0;
        loop {
            let (retryable, answer) = attempt().await;
            match &self.retry {
                Some((policy, count)) if retryable && n + 1 < policy.attempts => {
                    n += 1;
                    count.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(policy.wait(n)).await;
                }
                _ => return answer,
            }
        }
    }

    fn post(&self, path: &str) -> reqwest::RequestBuilder {
        let req = self.client.post(format!("{}{path}", self.url));
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// A GraphQL request's `data`; an error when it fails in any way.
    pub(crate) async fn gql(&self, query: &str, variables: Value) -> anyhow::Result<Value> {
        let (outcome, body) = self.gql_outcome(query, variables).await;
        match outcome {
            Outcome::Ok => Ok(body["data"].clone()),
            _ => Err(anyhow!("GraphQL request failed: {body}")),
        }
    }

    /// A GraphQL request's outcome and body (the error text as a JSON string when there is none).
    pub(crate) async fn gql_outcome(&self, query: &str, variables: Value) -> (Outcome, Value) {
        self.retried(|| async {
            let (outcome, body, retryable) = self.gql_once(query, variables.clone()).await;
            (retryable, (outcome, body))
        })
        .await
    }

    async fn gql_once(&self, query: &str, variables: Value) -> (Outcome, Value, bool) {
        let (outcome, body) = self.gql_attempt(query, variables).await;
        let unavailable =
            body["errors"].as_array().is_some_and(|errs| errs.iter().any(|e| e["extensions"]["code"] == "UNAVAILABLE"));
        let retryable =
            outcome == Outcome::Refused || (outcome == Outcome::Failed && (unavailable || body.is_string()));
        (outcome, body, retryable)
    }

    async fn gql_attempt(&self, query: &str, variables: Value) -> (Outcome, Value) {
        let resp = match self.post("/graphql").json(&json!({ "query": query, "variables": variables })).send().await {
            Ok(r) => r,
            Err(e) => return (Outcome::Failed, Value::String(e.to_string())),
        };
        let status = resp.status();
        let body: Value = match resp.json().await {
            Ok(b) => b,
            Err(e) => return (Outcome::Failed, Value::String(format!("{status}: {e}"))),
        };
        let codes: Vec<&str> = body["errors"]
            .as_array()
            .map(|errs| errs.iter().filter_map(|e| e["extensions"]["code"].as_str()).collect())
            .unwrap_or_default();
        let pushed_back = codes.contains(&"OVERLOADED") || codes.contains(&"TOO_MANY_REQUESTS");
        let outcome = if status.as_u16() == 429 || pushed_back {
            Outcome::Refused
        } else if !status.is_success() || body.get("errors").is_some() {
            Outcome::Failed
        } else {
            Outcome::Ok
        };
        (outcome, body)
    }

    /// `POST /api/v1/lineage` with a list of events: the outcome and the per-event statuses.
    pub(crate) async fn ingest(&self, events: &[Value]) -> (Outcome, Vec<String>, String) {
        let (outcome, body, err) = self.ingest_body(events).await;
        let statuses =
            body["events"].as_array().into_iter().flatten().map(|e| e["status"].as_str().unwrap_or("").to_string());
        (outcome, statuses.collect(), err)
    }

    /// `POST /api/v1/lineage` with a list of events: the outcome, the answer's body (the report
    /// with each event's status and summary) and the error text.
    pub(crate) async fn ingest_body(&self, events: &[Value]) -> (Outcome, Value, String) {
        self.retried(|| async {
            let resp = match self.post("/api/v1/lineage").json(events).send().await {
                Ok(r) => r,
                Err(e) => return (true, (Outcome::Failed, Value::Null, e.to_string())),
            };
            let status = resp.status();
            let retryable = matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504);
            if status.as_u16() == 429 || status.as_u16() == 503 {
                return (retryable, (Outcome::Refused, Value::Null, status.to_string()));
            }
            let body: Value = match resp.json().await {
                Ok(b) => b,
                // The connection broke mid-answer (serve killed): sent again.
                Err(e) => return (true, (Outcome::Failed, Value::Null, format!("{status}: {e}"))),
            };
            if !status.is_success() {
                return (retryable, (Outcome::Failed, Value::Null, format!("{status}: {body}")));
            }
            (false, (Outcome::Ok, body, String::new()))
        })
        .await
    }
}
