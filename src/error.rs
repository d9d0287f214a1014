//! The errors a client can see, each with one stable code, mapped in one table
//! (`Error::code`, `Error::http_status`). Internal and store errors are masked: the client
//! gets the code and a generic message, the log gets the detail.
//!
//! # How it fits
//!
//! `error::Error` is the one table of client-visible errors. `Error::code` gives the GraphQL `extensions.code` and
//! `Error::http_status` the REST status:
//!
//! | variant | code | status |
//! | --- | --- | --- |
//! | `BadInput` | `BAD_USER_INPUT` | 422 |
//! | `Unauthenticated` | `UNAUTHENTICATED` | 401 |
//! | `Forbidden` | `FORBIDDEN` | 403 |
//! | `NotFound` | `NOT_FOUND` | 404 |
//! | `Conflict` | `CONFLICT` | 409 |
//! | `Unavailable` | `UNAVAILABLE` | 503 |
//! | `Internal` | `INTERNAL` | 500 |
//!
//! `From<StoreError>` maps store errors onto this table and logs `Unavailable` and `Internal`. `Error` is deliberately
//! not `Display`, so that async-graphql cannot turn it into an error without a code.

use async_graphql::ErrorExtensions;

use crate::store::StoreError;

/// Deliberately not `Display`: async-graphql converts any `Display` error into a GraphQL error
/// without a code, and this type must always go through `From<Error> for async_graphql::Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    BadInput(String),
    Unauthenticated(String),
    Forbidden(String),
    NotFound(String),
    Conflict(String),
    Unavailable(String),
    /// Past the ingest concurrency limit (push-back): the client should retry later.
    Overloaded(String),
    /// A client address failed authentication too often (the per-address throttle).
    TooManyRequests(String),
    Internal(String),
    /// A change subscriber fell too far behind the log (see `service::changes`).
    FellBehind(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn code(&self) -> &'static str {
        match self {
            Error::BadInput(_) => "BAD_USER_INPUT",
            Error::Unauthenticated(_) => "UNAUTHENTICATED",
            Error::Forbidden(_) => "FORBIDDEN",
            Error::NotFound(_) => "NOT_FOUND",
            Error::Conflict(_) => "CONFLICT",
            Error::Unavailable(_) => "UNAVAILABLE",
            Error::Overloaded(_) => "OVERLOADED",
            Error::TooManyRequests(_) => "TOO_MANY_REQUESTS",
            Error::Internal(_) => "INTERNAL",
            Error::FellBehind(_) => "FELL_BEHIND",
        }
    }

    pub fn http_status(&self) -> u16 {
        match self {
            Error::BadInput(_) => 422,
            Error::Unauthenticated(_) => 401,
            Error::Forbidden(_) => 403,
            Error::NotFound(_) => 404,
            Error::Conflict(_) => 409,
            Error::Unavailable(_) => 503,
            Error::Overloaded(_) => 503,
            Error::TooManyRequests(_) => 429,
            Error::Internal(_) => 500,
            Error::FellBehind(_) => 409,
        }
    }

    /// The detailed message (for logs and for the client when it is about its request).
    pub fn message(&self) -> &str {
        match self {
            Error::BadInput(m)
            | Error::Unauthenticated(m)
            | Error::Forbidden(m)
            | Error::NotFound(m)
            | Error::Conflict(m)
            | Error::Unavailable(m)
            | Error::Internal(m)
            | Error::Overloaded(m)
            | Error::TooManyRequests(m)
            | Error::FellBehind(m) => m,
        }
    }

    /// What the client reads: the message for errors about its request, a generic one for ours.
    pub fn client_message(&self) -> String {
        match self {
            Error::Internal(_) => "Internal error; the server log has the details".to_string(),
            Error::Unavailable(_) => "The store is unavailable or too slow; try again".to_string(),
            other => other.message().to_string(),
        }
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(m) => Error::NotFound(m),
            StoreError::Conflict(m) => Error::Conflict(m),
            StoreError::Invalid(m) => Error::BadInput(m),
            StoreError::Unavailable(m) => {
                tracing::error!(error = %m, "store unavailable");
                Error::Unavailable(m)
            }
            StoreError::Internal(m) => {
                tracing::error!(error = %m, "store failed");
                Error::Internal(m)
            }
        }
    }
}

impl From<Error> for async_graphql::Error {
    fn from(e: Error) -> Self {
        let code = e.code();
        async_graphql::Error::new(e.client_message()).extend_with(|_, ext| ext.set("code", code))
    }
}
