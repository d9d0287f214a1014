//! The service as the load program sees it: GraphQL and REST ingest over HTTP, with the token.

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

#[derive(Clone)]
pub(crate) struct Api {
    client: reqwest::Client,
    url: String,
    token: Option<String>,
}

impl Api {
    pub(crate) fn new(url: &str, token: Option<String>, timeout: Duration) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder().timeout(timeout).build().context("cannot build the HTTP client")?;
        Ok(Api { client, url: url.trim_end_matches('/').to_string(), token })
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
        let resp = match self.post("/api/v1/lineage").json(events).send().await {
            Ok(r) => r,
            Err(e) => return (Outcome::Failed, Vec::new(), e.to_string()),
        };
        let status = resp.status();
        if status.as_u16() == 429 || status.as_u16() == 503 {
            return (Outcome::Refused, Vec::new(), status.to_string());
        }
        let body: Value = match resp.json().await {
            Ok(b) => b,
            Err(e) => return (Outcome::Failed, Vec::new(), format!("{status}: {e}")),
        };
        if !status.is_success() {
            return (Outcome::Failed, Vec::new(), format!("{status}: {body}"));
        }
        let statuses =
            body["events"].as_array().into_iter().flatten().map(|e| e["status"].as_str().unwrap_or("").to_string());
        (Outcome::Ok, statuses.collect(), String::new())
    }
}
