//! The web pages, served from the binary: the lineage explorer at `GET /ui` (every path under
//! `/ui` is the same page, so deep links and reloads work; the page reads its state from the
//! query string), its assets under `/ui/assets/`, and GraphiQL at `GET /graphql`.
//!
//! The files are the committed bundle in `web/dist/`, built from `web/src/` by `web/build.mjs`
//! (`scripts/web-check` proves the bundle matches the sources) and embedded here with
//! `include_bytes!`: no CDN and no Node.js at run time. Fetching a page needs no token; the
//! pages ask for one for their GraphQL requests, which are the public API's.
//!
//! Caching: the HTML pages name each asset as `/ui/assets/<name>?v=<hash>`, where `hash` is the
//! first 16 hex digits of the asset's SHA-256 (the build computes it, and so does [`hashes`]).
//! A request whose `v` is the asset's current hash may be cached for a year (`immutable`); any
//! other request, and the pages themselves, revalidate (`no-cache` with an `ETag`), so a new
//! binary is never hidden behind a stale cache. Text is sent gzipped to clients that accept it,
//! compressed once per process on first use.
//!
//! # How it fits
//!
//! The web pages, served from the binary: the lineage explorer at `/ui` (every path under it is the same page; its
//! state is its query string), its assets under `/ui/assets/`, and GraphiQL at `GET /graphql`. The files are
//! `web/dist/`, embedded with `include_bytes!`; pages revalidate, and an asset asked for with the version its page
//! names (`?v=` and a SHA-256 prefix) is cached for a year. `web/` is its own front-end project: sources in `web/src/`
//! (plain JavaScript, cytoscape.js to draw, dagre to lay out in a web worker), one build script `web/build.mjs`
//! (esbuild), a lock file, and the committed bundle that `scripts/web-check` rebuilds and compares; `web/tests/` drives
//! both pages in headless Chromium against a real `serve` on each store (`scripts/ui-test`, the last step of
//! `scripts/test`). The explorer's modules: `main.js` (the URL state, drawing, expansion, time, explain), `home.js`
//! (the home page: `changes` read on from its end cursor, `incidents`, datastores with their counts, recent jobs),
//! `model.js` (what is drawn: containers, externals, jobs and their edges, a diff's marks, and `groupWide`/`visible`,
//! which fold a layer wider than 40 into one group node per feeding node without losing the nodes, so opening a group
//! needs no request), `layout.js` (dagre in the worker; up to 200 nodes both directions and a few wrappings of wide
//! layers are tried and the one Fit shows largest on the canvas wins), `graph.js` (cytoscape; Fit never below 12 px
//! labels), `listview.js` (the same nodes and edges as text, groups with their members), `panel.js` (container,
//! external, job, group, diff and explain panels), `columns.js` (the column view, SVG). Invariant: the pages use only
//! the public GraphQL API (one `lineageGraph` request per draw, carrying the diff, the next depth's `lineageSummary`,
//! the nodes' `healthAlert` and the `incidents` when asked; one per expansion; one more, once, to find the store's
//! first edge when a time is set) and load nothing from elsewhere.

use std::io::Write;
use std::sync::{LazyLock, OnceLock};

use axum::extract::{Path, RawQuery};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use sha2::{Digest, Sha256};

/// One embedded file of `web/dist/`.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $content_type:expr) => {
        Asset {
            name: $name,
            content_type: $content_type,
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/dist/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const HTML: &str = "text/html; charset=utf-8";

/// Every file of `web/dist/` (a test checks that none is missing and none is extra).
static ASSETS: &[Asset] = &[
    asset!("index.html", HTML),
    asset!("graphiql.html", HTML),
    asset!("explorer.js", JS),
    asset!("explorer.css", CSS),
    asset!("layout-worker.js", JS),
    asset!("graphiql.js", JS),
    asset!("graphiql.css", CSS),
    asset!("favicon.svg", "image/svg+xml"),
    asset!("THIRD_PARTY_NOTICES.txt", "text/plain; charset=utf-8"),
];

/// The pages are HTML; only the assets are served under `/ui/assets/`.
const PAGES: [&str; 2] = ["index.html", "graphiql.html"];

/// What the pages may load and talk to: this server only. `style-src 'unsafe-inline'` is for
/// the styles that cytoscape and GraphiQL's components set at run time; no inline script runs.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; worker-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; \
     connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const YEAR: &str = "public, max-age=31536000, immutable";
const REVALIDATE: &str = "no-cache";

/// The first 16 hex digits of each asset's SHA-256, as the build writes them into the pages.
fn hashes() -> &'static [String] {
    static HASHES: LazyLock<Vec<String>> = LazyLock::new(|| {
        ASSETS.iter().map(|a| Sha256::digest(a.bytes).iter().take(8).map(|b| format!("{b:02x}")).collect()).collect()
    });
    &HASHES
}

/// Each asset gzipped, made on first request.
fn gzipped(index: usize) -> &'static [u8] {
    static GZIP: LazyLock<Vec<OnceLock<Vec<u8>>>> = LazyLock::new(|| ASSETS.iter().map(|_| OnceLock::new()).collect());
    GZIP[index].get_or_init(|| {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        // Writing to a Vec cannot fail.
        let _ = enc.write_all(ASSETS[index].bytes);
        enc.finish().unwrap_or_default()
    })
}

/// The routes under `/ui`. GraphiQL's `GET /graphql` is [`graphiql`], routed with the GraphQL
/// endpoint.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new().route("/ui", get(explorer)).route("/ui/", get(explorer_slash)).route("/ui/{*path}", get(under_ui))
}

/// `GET /ui`: the explorer.
#[utoipa::path(
    get,
    path = "/ui",
    tag = "explorer",
    description = "The lineage explorer, a page for a person in a browser (`?container=<id>&depth=&side=up|down`).",
    responses((status = 200, description = "The explorer page", content_type = "text/html", body = String)),
    security(())
)]
pub async fn explorer(headers: HeaderMap) -> Response {
    serve("index.html", None, &headers)
}

/// `GET /ui/`: the explorer, as `/ui`.
#[utoipa::path(
    get,
    path = "/ui/",
    tag = "explorer",
    description = "The lineage explorer (as `/ui`).",
    responses((status = 200, description = "The explorer page", content_type = "text/html", body = String)),
    security(())
)]
pub async fn explorer_slash(headers: HeaderMap) -> Response {
    serve("index.html", None, &headers)
}

/// `GET /graphql`: GraphiQL, with its assets from this server.
pub async fn graphiql(headers: HeaderMap) -> Response {
    serve("graphiql.html", None, &headers)
}

/// `GET /ui/<path>`: an asset under `assets/`, otherwise the explorer (a deep link).
#[utoipa::path(
    get,
    path = "/ui/{path}",
    tag = "explorer",
    description = "The explorer's assets (`/ui/assets/...`) and deep links: any other path under `/ui` is the explorer page.",
    params(("path" = String, Path, description = "Any path under /ui (axum's catch-all `{*path}`)")),
    responses((status = 200, description = "An asset, or the explorer page")),
    security(())
)]
pub async fn under_ui(Path(path): Path<String>, RawQuery(query): RawQuery, headers: HeaderMap) -> Response {
    match path.strip_prefix("assets/") {
        Some(name) if !PAGES.contains(&name) => serve(name, query.as_deref(), &headers),
        Some(_) => not_found(),
        None => serve("index.html", None, &headers),
    }
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "not found").into_response()
}

/// The `v` parameter of a query string.
fn version(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|kv| kv.strip_prefix("v="))
}

/// Whether the client accepts gzip (`Accept-Encoding: gzip`, not with `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let zero = parts.any(|p| p.replace(' ', "").eq_ignore_ascii_case("q=0"));
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !zero
        },
    )
}

fn serve(name: &str, query: Option<&str>, headers: &HeaderMap) -> Response {
    let Some(index) = ASSETS.iter().position(|a| a.name == name) else {
        return not_found();
    };
    let asset = &ASSETS[index];
    let hash = &hashes()[index];
    let etag = format!("\"{hash}\"");
    let page = PAGES.contains(&name);
    let cache = if !page && version(query) == Some(hash.as_str()) { YEAR } else { REVALIDATE };
    let mut response = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim().trim_start_matches("W/") == etag))
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else if accepts_gzip(headers) {
        let mut r = gzipped(index).into_response();
        r.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        r
    } else {
        asset.bytes.into_response()
    };
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    if page {
        h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
        h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;
    use tower::ServiceExt;

    async fn get(path: &str, headers: &[(&str, &str)]) -> (StatusCode, HeaderMap, Vec<u8>) {
        let app: Router = routes().route("/graphql", axum::routing::get(graphiql));
        let mut req = axum::http::Request::get(path);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = app.oneshot(req.body(axum::body::Body::empty()).expect("request")).await.expect("infallible");
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = to_bytes(resp.into_body(), usize::MAX).await.expect("body").to_vec();
        (status, headers, body)
    }

    fn text(body: &[u8]) -> String {
        String::from_utf8_lossy(body).into_owned()
    }

    /// The `/ui/assets/...` URLs a page references.
    fn asset_urls(html: &str) -> Vec<String> {
        html.split('"').filter(|s| s.starts_with("/ui/assets/")).map(str::to_string).collect()
    }

    #[test]
    fn every_file_of_the_bundle_is_embedded_and_nothing_else() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/web/dist");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .expect("web/dist exists")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = ASSETS.iter().map(|a| a.name.to_string()).collect();
        embedded.sort();
        assert_eq!(on_disk, embedded);
        for a in ASSETS {
            let ext = a.name.rsplit('.').next().unwrap_or("");
            let want = match ext {
                "html" => HTML,
                "js" => JS,
                "css" => CSS,
                "svg" => "image/svg+xml",
                _ => "text/plain; charset=utf-8",
            };
            assert_eq!(a.content_type, want, "{}", a.name);
        }
    }

    #[tokio::test]
    async fn the_explorer_is_served_at_ui_and_its_deep_links() {
        for path in ["/ui", "/ui/", "/ui?container=3&depth=2&side=up", "/ui/lineage/anything?container=1"] {
            let (status, headers, body) = get(path, &[]).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            assert_eq!(headers[header::CONTENT_TYPE], HTML);
            assert_eq!(headers[header::CACHE_CONTROL], REVALIDATE);
            assert!(headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap_or("").contains("connect-src 'self'"));
            let html = text(&body);
            assert!(html.contains("Tributary lineage explorer"), "{path}");
            assert!(!html.contains("http://") && !html.contains("https://"), "the page loads nothing from elsewhere");
        }
    }

    #[tokio::test]
    async fn graphiql_loads_its_assets_from_this_server() {
        let (status, headers, body) = get("/graphql", &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_TYPE], HTML);
        let html = text(&body);
        assert!(!html.contains("http://") && !html.contains("https://"), "{html}");
        let urls = asset_urls(&html);
        assert!(urls.iter().any(|u| u.starts_with("/ui/assets/graphiql.js?v=")), "{urls:?}");
        assert!(urls.iter().any(|u| u.starts_with("/ui/assets/graphiql.css?v=")), "{urls:?}");
        for url in urls {
            let (status, headers, _) = get(&url, &[]).await;
            assert_eq!(status, StatusCode::OK, "{url}");
            assert_eq!(headers[header::CACHE_CONTROL], YEAR, "{url}: the page's version is the asset's");
        }
    }

    #[tokio::test]
    async fn assets_have_their_types_validators_and_gzip() {
        let (_, _, page) = get("/ui", &[]).await;
        let urls = asset_urls(&text(&page));
        assert_eq!(urls.len(), 3, "favicon, stylesheet, script: {urls:?}");
        let js = urls.iter().find(|u| u.contains("explorer.js")).expect("explorer.js");
        let (status, headers, plain) = get(js, &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_TYPE], JS);
        assert_eq!(headers[header::CACHE_CONTROL], YEAR);
        assert!(headers.get(header::CONTENT_ENCODING).is_none());
        let etag = headers[header::ETAG].to_str().unwrap_or("").to_string();

        // Not the page's version: served, but revalidated.
        let (_, headers, _) = get("/ui/assets/explorer.js", &[]).await;
        assert_eq!(headers[header::CACHE_CONTROL], REVALIDATE);
        let (_, headers, _) = get("/ui/assets/explorer.js?v=0000000000000000", &[]).await;
        assert_eq!(headers[header::CACHE_CONTROL], REVALIDATE);

        let (status, _, body) = get(js, &[("if-none-match", &etag)]).await;
        assert_eq!(status, StatusCode::NOT_MODIFIED);
        assert!(body.is_empty());

        let (status, headers, zipped) = get(js, &[("accept-encoding", "br, gzip;q=0.8")]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers[header::CONTENT_ENCODING], "gzip");
        assert_eq!(headers[header::VARY], "accept-encoding");
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut unzipped).expect("gunzip");
        assert_eq!(unzipped, plain);
        assert!(zipped.len() < plain.len() / 2);
        let (_, headers, _) = get(js, &[("accept-encoding", "gzip;q=0")]).await;
        assert!(headers.get(header::CONTENT_ENCODING).is_none());

        for (path, want) in [
            ("/ui/assets/explorer.css", CSS),
            ("/ui/assets/layout-worker.js", JS),
            ("/ui/assets/favicon.svg", "image/svg+xml"),
            ("/ui/assets/THIRD_PARTY_NOTICES.txt", "text/plain; charset=utf-8"),
        ] {
            let (status, headers, _) = get(path, &[]).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            assert_eq!(headers[header::CONTENT_TYPE], want, "{path}");
            assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        }
    }

    #[tokio::test]
    async fn unknown_assets_are_not_found() {
        for path in ["/ui/assets/nope.js", "/ui/assets/", "/ui/assets/index.html", "/ui/assets/../Cargo.toml"] {
            let (status, _, _) = get(path, &[]).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        }
    }

    #[test]
    fn the_pages_name_the_hashes_the_server_computes() {
        let index = ASSETS.iter().position(|a| a.name == "index.html").expect("index.html");
        let html = String::from_utf8_lossy(ASSETS[index].bytes).into_owned();
        for url in asset_urls(&html) {
            let (path, v) = url.split_once("?v=").expect("versioned");
            let name = path.trim_start_matches("/ui/assets/");
            let i = ASSETS.iter().position(|a| a.name == name).expect("embedded");
            assert_eq!(v, hashes()[i], "{name}");
        }
    }
}
