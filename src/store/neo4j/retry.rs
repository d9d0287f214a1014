//! One retry policy for every Neo4j write transaction, by the database's own rule: a
//! `Neo.TransientError.*` (deadlock detected, lock acquisition timed out, leader switch, ...)
//! means "run the whole transaction again", and Neo4j's own drivers do so inside their managed
//! transactions (the Java driver's `ExponentialBackoffRetryLogic`, the Python driver's
//! `execute_write`). neo4rs 0.8 does not, so two requests writing the same edges in opposite
//! orders could fail one of them with `UNAVAILABLE` when Neo4j broke their deadlock.
//!
//! What is retried: only a transaction whose failure carries a transient status code, and only
//! as a whole (begin, every statement, commit), so no statement runs twice in one transaction.
//! Client errors (constraint violations, bad Cypher) and an unreachable server never are: a
//! store that is down answers `Unavailable` at once. `Transaction.Terminated` and
//! `Transaction.LockClientStopped` are transient by code but mean someone stopped the
//! transaction on purpose, so, as in the official drivers, they are not retried either.
//!
//! Bounds: at most [`MAX_RETRIES`] runs after the first, waits doubling from 20 ms up to 1 s with
//! jitter (so two deadlocked writers do not collide again in step), and no retry once 5 s of
//! waiting is spent; the store's time limit (`store::timeout`) still bounds the whole call. Each
//! retry is counted in `tributary_store_retries_total{store="neo4j", code}` and logged.

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

use super::KIND;
use crate::metrics;
use crate::store::{StoreError, StoreResult};

/// Runs after the first, at most.
pub(super) const MAX_RETRIES: usize = 8;

/// The transient codes that are not worth running again: the transaction was stopped on purpose.
const NOT_RETRIED: [&str; 2] =
    ["Neo.TransientError.Transaction.Terminated", "Neo.TransientError.Transaction.LockClientStopped"];

/// The Neo4j status code of a transient failure that warrants running the transaction again.
/// The driver error's text (kept in `Unavailable`, see `db_error`) carries the code.
fn retryable_code(e: &StoreError) -> Option<&str> {
    let StoreError::Unavailable(text) = e else { return None };
    let start = text.find("Neo.TransientError.")?;
    let code = &text[start..];
    let end = code.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.')).unwrap_or(code.len());
    let code = &code[..end];
    (!NOT_RETRIED.contains(&code)).then_some(code)
}

fn policy() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(20))
        .with_max_delay(Duration::from_secs(1))
        .with_factor(2.0)
        .with_jitter()
        .with_max_times(MAX_RETRIES)
        .with_total_delay(Some(Duration::from_secs(5)))
}

/// Runs `transaction` (a whole transaction: begin, statements, commit) and runs it again while
/// it fails with a retryable transient error, within the bounds above.
pub(super) async fn transient<T, F, Fut>(transaction: F) -> StoreResult<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = StoreResult<T>>,
{
    transaction
        .retry(policy())
        .sleep(tokio::time::sleep)
        .when(|e| retryable_code(e).is_some())
        .notify(|e, wait| {
            let code = retryable_code(e).unwrap_or("Neo.TransientError");
            metrics::store_retry(KIND, code);
            tracing::warn!(
                code,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                "neo4j transient error; running the transaction again"
            );
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_transient_codes_that_are_not_on_purpose_are_retried() {
        let deadlock = StoreError::Unavailable(
            "unexpected response for PULL: Failure { code: \"Neo.TransientError.Transaction.DeadlockDetected\", \
             message: \"ForsetiClient[12] can't acquire ExclusiveLock\" }"
                .into(),
        );
        assert_eq!(retryable_code(&deadlock), Some("Neo.TransientError.Transaction.DeadlockDetected"));
        let leader = StoreError::Unavailable("Neo4j error `Neo.TransientError.Cluster.NotALeader`: no".into());
        assert_eq!(retryable_code(&leader), Some("Neo.TransientError.Cluster.NotALeader"));
        for not_retried in [
            StoreError::Unavailable("Neo4j error `Neo.TransientError.Transaction.Terminated`: stopped".into()),
            StoreError::Unavailable("Neo4j error `Neo.TransientError.Transaction.LockClientStopped`: x".into()),
            StoreError::Unavailable("an IO error occurred: connection refused".into()),
            StoreError::Internal("Neo.TransientError.Transaction.DeadlockDetected".into()),
            StoreError::Conflict("The change conflicts with data already stored".into()),
        ] {
            assert_eq!(retryable_code(&not_retried), None, "{not_retried:?}");
        }
    }

    #[tokio::test]
    async fn a_transient_failure_runs_the_transaction_again_and_a_client_error_does_not() {
        let mut runs = 0;
        let out = transient(|| {
            runs += 1;
            let attempt = runs;
            async move {
                if attempt < 3 {
                    Err(StoreError::Unavailable("Neo.TransientError.Transaction.DeadlockDetected".into()))
                } else {
                    Ok(attempt)
                }
            }
        })
        .await;
        assert_eq!(out.ok(), Some(3));

        let mut runs = 0;
        let out: StoreResult<()> = transient(|| {
            runs += 1;
            async { Err(StoreError::Conflict("exists".into())) }
        })
        .await;
        assert!(matches!(out, Err(StoreError::Conflict(_))));
        assert_eq!(runs, 1);

        let mut runs = 0;
        let out: StoreResult<()> = transient(|| {
            runs += 1;
            async { Err(StoreError::Unavailable("Neo.TransientError.General.DatabaseUnavailable".into())) }
        })
        .await;
        assert!(matches!(out, Err(StoreError::Unavailable(_))));
        // Bounded by the number of runs, or sooner by the total wait.
        assert!((2..=1 + MAX_RETRIES).contains(&runs), "{runs} runs");
    }
}
