//! The HTTP surface a user meets before any lineage: GraphiQL, health, body limits, CORS, and
//! crafted queries refused before they reach the store.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use serde_json::{json, Value};
use tributary::store::sqlite::SqliteStore;

async fn serve(cors: &[&str]) -> (String, tempfile::TempDir, tokio::sync::oneshot::Sender<()>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(dir.path()).unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let cors: Vec<String> = cors.iter().map(|s| s.to_string()).collect();
    tokio::spawn(async move {
        let _ = tributary::server::run(listener, store, &cors, async {
            let _ = rx.await;
        })
        .await;
    });
    (url, dir, tx)
}

fn code(v: &Value) -> &str {
    v["errors"][0]["extensions"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn graphiql_health_and_readiness() {
    let (url, _d, _s) = serve(&[]).await;
    let page = reqwest::get(format!("{url}/graphql")).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().to_lowercase().contains("graphiql"));
    assert_eq!(reqwest::get(format!("{url}/healthz")).await.unwrap().status(), 200);
    assert_eq!(reqwest::get(format!("{url}/readyz")).await.unwrap().status(), 200);
}

#[tokio::test]
async fn oversized_and_malformed_bodies_are_refused() {
    let (url, _d, _s) = serve(&[]).await;
    let c = reqwest::Client::new();
    let big = format!("{{\"query\": \"{{ datastores {{ id }} }}\", \"x\": \"{}\"}}", "a".repeat(3 * 1024 * 1024));
    let r = c.post(format!("{url}/graphql")).header("content-type", "application/json").body(big).send().await.unwrap();
    assert_eq!(r.status(), 413);
    let r = c
        .post(format!("{url}/graphql"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(code(&v), "BAD_USER_INPUT");
    let v: Value = c
        .post(format!("{url}/graphql"))
        .json(&json!({"query": "{ nope }"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(code(&v), "BAD_USER_INPUT", "{v}");
}

#[tokio::test]
async fn crafted_queries_are_refused_before_the_store() {
    let (url, _d, _s) = serve(&[]).await;
    let c = reqwest::Client::new();
    let aliases: String = (0..200).map(|i| format!("a{i}: datastores {{ id }} ")).collect();
    let v: Value = c
        .post(format!("{url}/graphql"))
        .json(&json!({"query": format!("{{ {aliases} }}")}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(code(&v), "BAD_USER_INPUT", "{v}");
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("aliases"));
    // Deeper than the cap (15) but within the parser's own recursion limit (32), which a deeper
    // query meets first with a message of its own.
    let nest = "container { fields { items { ".repeat(5);
    let deep = format!("{{ edges {{ items {{ sourceField {{ {nest} id {} }} }} }} }}", "} } } ".repeat(5));
    let v: Value =
        c.post(format!("{url}/graphql")).json(&json!({"query": deep})).send().await.unwrap().json().await.unwrap();
    assert_eq!(code(&v), "BAD_USER_INPUT", "{v}");
    // Any malformed query gets that code too: the message must name the depth and the cap.
    let message = v["errors"][0]["message"].as_str().unwrap_or_default();
    let cap = tributary::api::schema::MAX_QUERY_DEPTH;
    assert_eq!(message, format!("the query is nested 19 levels deep, over the limit of {cap} by {}", 19 - cap), "{v}");
    let metrics = reqwest::get(format!("{url}/metrics")).await.unwrap().text().await.unwrap();
    assert!(!metrics.contains("operation=\"list_edges\""), "the refused queries reached the store");
}

#[tokio::test]
async fn cors_only_when_configured() {
    let (url, _d, _s) = serve(&["https://app.example.com"]).await;
    let c = reqwest::Client::new();
    let r = c
        .request(reqwest::Method::OPTIONS, format!("{url}/graphql"))
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers().get("access-control-allow-origin").unwrap(), "https://app.example.com");
    let r = c.get(format!("{url}/healthz")).header("origin", "https://evil.example.com").send().await.unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());
    let (plain, _d2, _s2) = serve(&[]).await;
    let r = c.get(format!("{plain}/healthz")).header("origin", "https://app.example.com").send().await.unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());
}

/// `GET /` lands on the explorer; a path no route has, and a method a path does not take, answer
/// the `{"detail": ...}` body every other REST error has (they were empty).
#[tokio::test]
async fn root_redirects_and_unrouted_requests_get_a_json_error() {
    let (url, _d, _s) = serve(&[]).await;
    let c = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let r = c.get(format!("{url}/")).send().await.unwrap();
    assert!(r.status().is_redirection(), "{}", r.status());
    assert_eq!(r.headers()["location"], "/ui");
    let r = c.get(format!("{url}/no/such/page")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/json"));
    let v: Value = r.json().await.unwrap();
    let detail = v["detail"].as_str().unwrap();
    assert!(detail.contains("GET /no/such/page") && detail.contains("/openapi.json"), "{v}");
    let r = c.delete(format!("{url}/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert!(r.headers().contains_key("allow"), "{:?}", r.headers());
    let v: Value = r.json().await.unwrap();
    assert!(v["detail"].as_str().unwrap().contains("DELETE is not allowed on /healthz"), "{v}");
    let r = c.put(format!("{url}/graphql")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    assert!(r.json::<Value>().await.unwrap()["detail"].is_string());
}

/// What a user reads (`--help`, the SDL, the OpenAPI document) says what a thing does, not which
/// design document ("seed 000/002/004") it came from.
#[tokio::test]
async fn user_facing_text_names_no_seed_documents() {
    let sdl = tributary::api::schema::build_schema().sdl().to_lowercase();
    let doc = tributary::api::rest::openapi().to_json().unwrap().to_lowercase();
    for (what, text) in [("the SDL", &sdl), ("the OpenAPI document", &doc)] {
        for word in ["seed 00", "seed's"] {
            if let Some(at) = text.find(word) {
                panic!(
                    "{what} mentions a seed document: ...{}...",
                    &text[at.saturating_sub(80)..(at + 40).min(text.len())]
                );
            }
        }
    }
}

/// The OpenAPI document lists the 429 and 503 answers that ingest and `/graphql` send, and it
/// comes from the real handlers' `#[utoipa::path]` (api::answers' typed shapes), not from
/// stand-in functions beside them.
#[test]
fn the_document_lists_push_back_and_has_no_stand_ins() {
    let doc: Value = serde_json::from_str(&tributary::api::rest::openapi().to_json().unwrap()).unwrap();
    for path in [
        "/graphql",
        "/api/v1/lineage",
        "/api/lineage/openlineage",
        "/api/v1/openlineage/lineage",
        "/api/v1/openlineage/lineage/batch",
        "/v1/api/lineage",
    ] {
        let responses = &doc["paths"][path]["post"]["responses"];
        for status in ["429", "503"] {
            assert!(responses.get(status).is_some(), "{path} does not list {status}: {responses}");
        }
    }
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/api/rest/docs.rs")).unwrap();
    assert!(!docs.contains("() {}"), "docs.rs describes routes with stand-in functions");
}
