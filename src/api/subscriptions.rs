//! GraphQL subscriptions over websockets at `GET /graphql` (protocol `graphql-transport-ws`, and
//! the older `graphql-ws` that async-graphql also speaks). A GET that is not a websocket upgrade
//! still gets GraphiQL.
//!
//! Authentication is the HTTP queries': a token from the `connection_init` payload
//! (`{"Authorization": "Bearer <token>"}`; `authorization`, `headers.Authorization` and `token`
//! are read too) or else from the upgrade request's `Authorization` header, turned into a
//! `Caller` by `auth::Auth`. A connection without a valid token is closed with 4401, one refused
//! for another reason with 4403, before any subscription runs.

use async_graphql::Data;
use async_graphql_axum::{GraphQLProtocol, GraphQLWebSocket};
use axum::extract::ws::{CloseFrame, Message, WebSocketUpgrade};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};

use super::loaders::Loaders;
use super::{authorization, ui, AppState};
use crate::error::Error;

/// `GET /graphql`: a websocket upgrade runs subscriptions; anything else is GraphiQL.
#[utoipa::path(
    get,
    path = "/graphql",
    tag = "graphql",
    description = "GraphiQL, for a person in a browser. A websocket upgrade (`Upgrade: websocket`, subprotocol `graphql-transport-ws`) runs GraphQL subscriptions instead (`lineageChanged`); its token goes in the `connection_init` payload as `{\"Authorization\": \"Bearer <token>\"}`, and a connection without a valid one is closed with code 4401.",
    responses(
        (status = 200, description = "The GraphiQL page", content_type = "text/html", body = String),
        (status = 101, description = "Switched to the websocket of a subscription client"),
    ),
    security(())
)]
pub async fn graphql_get(State(state): State<AppState>, request: Request) -> Response {
    let upgrade = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    let (mut parts, _) = request.into_parts();
    if !upgrade {
        return ui::graphiql(parts.headers).await;
    }
    let protocol = match GraphQLProtocol::from_request_parts(&mut parts, &()).await {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let ws = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
        Ok(ws) => ws,
        Err(e) => return e.into_response(),
    };
    let header_token = authorization(&parts.headers).map(str::to_string);
    ws.protocols(async_graphql::http::ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| async move {
            let (sink, stream) = socket.split();
            // async-graphql closes a refused `connection_init` with 1002; the reason carries
            // the close code this service gives it (`4401 ...`), put back in place here.
            let sink = sink.with(|msg: Message| async move { Ok::<_, axum::Error>(close_code(msg)) });
            let (lineage, auth) = (state.lineage.clone(), state.auth.clone());
            GraphQLWebSocket::new_with_pair(sink, stream, state.schema.clone(), protocol)
                .on_connection_init(move |payload| async move {
                    let token = token_in(&payload).or(header_token);
                    let caller = auth.authenticate(token.as_deref()).await.map_err(|e| {
                        let code = match e {
                            Error::Unauthenticated(_) => 4401,
                            Error::Forbidden(_) => 4403,
                            _ => 1011,
                        };
                        tracing::info!(code, error = %e.message(), "websocket connection refused");
                        async_graphql::Error::new(format!("{code} {}", e.client_message()))
                    })?;
                    tracing::debug!(user = %caller.user, "websocket connection accepted");
                    let mut data = Data::default();
                    data.insert(std::sync::Arc::new(Loaders::new(lineage.reader())));
                    data.insert(lineage);
                    data.insert(auth);
                    data.insert(caller);
                    Ok(data)
                })
                .serve()
                .await
        })
        .into_response()
}

/// The token a `connection_init` payload carries, in the spellings clients use.
fn token_in(payload: &serde_json::Value) -> Option<String> {
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    for key in ["Authorization", "authorization"] {
        if let Some(t) = payload.get(key).and_then(text) {
            return Some(t);
        }
        if let Some(t) = payload.get("headers").and_then(|h| h.get(key)).and_then(text) {
            return Some(t);
        }
    }
    ["token", "authToken"].iter().find_map(|k| payload.get(*k).and_then(text)).map(|t| format!("Bearer {t}"))
}

/// A close frame whose reason starts with one of our codes takes that code.
fn close_code(msg: Message) -> Message {
    match msg {
        Message::Close(Some(frame)) if frame.code == 1002 => {
            let reason = frame.reason.to_string();
            match reason.split_once(' ').and_then(|(c, rest)| Some((c.parse::<u16>().ok()?, rest))) {
                Some((code @ (4401 | 4403 | 1011), rest)) => {
                    Message::Close(Some(CloseFrame { code, reason: rest.to_string().into() }))
                }
                _ => Message::Close(Some(frame)),
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_are_read_in_the_common_spellings() {
        assert_eq!(token_in(&json!({"Authorization": "Bearer a"})).as_deref(), Some("Bearer a"));
        assert_eq!(token_in(&json!({"authorization": "Token b"})).as_deref(), Some("Token b"));
        assert_eq!(token_in(&json!({"headers": {"Authorization": "Bearer c"}})).as_deref(), Some("Bearer c"));
        assert_eq!(token_in(&json!({"token": "d"})).as_deref(), Some("Bearer d"));
        assert_eq!(token_in(&json!({})), None);
        assert_eq!(token_in(&json!(null)), None);
    }

    #[test]
    fn refusals_take_their_close_code() {
        let refused = Message::Close(Some(CloseFrame { code: 1002, reason: "4401 missing API token".into() }));
        match close_code(refused) {
            Message::Close(Some(f)) => assert_eq!((f.code, f.reason.as_str()), (4401, "missing API token")),
            other => panic!("{other:?}"),
        }
        let other = Message::Close(Some(CloseFrame { code: 1002, reason: "bad message".into() }));
        assert!(matches!(close_code(other), Message::Close(Some(f)) if f.code == 1002));
    }
}
