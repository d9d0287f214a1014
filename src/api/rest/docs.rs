//! The OpenAPI document's frame: its info, the bearer scheme, the tags, and the routes
//! `api::router` registers itself (GraphQL, the OpenLineage and external-engine ingest, health,
//! metrics, the pages and this document). Those are listed by their real handlers, whose own
//! `#[utoipa::path]` attributes describe them with the typed answers they send
//! (`api::answers`); nothing here is a stand-in or a copy of a shape. The REST lineage routes
//! are merged in by `rest::openapi` from their `routes!` registration.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi;
use utoipa::{Modify, OpenApi as _};

use crate::api::{openlineage, subscriptions, ui};

/// The bearer scheme: `Authorization: Bearer <token>` (`Token <token>` is accepted too).
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut OpenApi) {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(
                "An API token from `tributary token create` (or the one `serve` prints on first start), as \
                 `Authorization: Bearer <token>`; `Authorization: Token <token>` works too. Missing or invalid: 401.",
            ))
            .build();
        openapi
            .components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", SecurityScheme::Http(scheme));
    }
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Tributary",
        description = "Data lineage over REST and GraphQL. The REST lineage routes are `/api/lineage/...` (edges, the graph, fields and their connections, by id) and `/admin/lineage/...` (read-only, tables by qualified name); every route calls the same service as GraphQL, with the same rules, permissions and limits.",
        license(name = "Apache-2.0")
    ),
    paths(
        openlineage::ingest,
        openlineage::ingest_openlineage,
        openlineage::collate_single,
        openlineage::collate_batch,
        openlineage::external_lineage,
        crate::api::graphql_handler,
        subscriptions::graphql_get,
        crate::api::healthz,
        crate::api::readyz,
        crate::api::metrics,
        super::openapi_json,
        crate::api::root_redirect,
        ui::explorer,
        ui::explorer_slash,
        ui::under_ui
    ),
    modifiers(&Bearer),
    security(("bearer" = [])),
    tags(
        (name = "lineage", description = "Lineage by id: edges, the graph, fields, connections, metadata"),
        (name = "lineage by table name", description = "Read-only lineage routes; tables by qualified name"),
        (name = "ingest", description = "OpenLineage and external-engine ingest"),
        (name = "graphql", description = "The GraphQL endpoint"),
        (name = "operations", description = "Health, readiness, metrics, this document"),
        (name = "explorer", description = "The lineage explorer page and its assets"),
    )
)]
struct Frame;

/// The document before the REST routes are merged in.
pub fn base() -> OpenApi {
    let mut doc = Frame::openapi();
    doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    doc
}
