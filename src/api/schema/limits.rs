//! The query caps, checked after validation by an extension rather than by async-graphql's own
//! `limit_complexity` / `limit_depth`, whose refusals say only "Query is too complex." or
//! "Query is nested too deep.": a client cannot tell which cap it met, nor by how much. Here a
//! refusal names the cap, the query's value and the excess, and says how to come under it.
//! The values are async-graphql's own (its `ValidationResult`), so what passes is unchanged.

use std::sync::Arc;

use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextValidation};
use async_graphql::{ServerError, ValidationResult};

use super::{MAX_QUERY_COMPLEXITY, MAX_QUERY_DEPTH};

/// The extension; stateless, so every request shares one.
pub struct QueryLimits;

impl ExtensionFactory for QueryLimits {
    fn create(&self) -> Arc<dyn Extension> {
        static ONE: std::sync::OnceLock<Arc<dyn Extension>> = std::sync::OnceLock::new();
        ONE.get_or_init(|| Arc::new(Checker)).clone()
    }
}

struct Checker;

#[async_trait::async_trait]
impl Extension for Checker {
    async fn validation(
        &self,
        ctx: &ExtensionContext<'_>,
        next: NextValidation<'_>,
    ) -> Result<ValidationResult, Vec<ServerError>> {
        let result = next.run(ctx).await?;
        match refusal(result.complexity, result.depth) {
            Some(message) => Err(vec![ServerError::new(message, None)]),
            None => Ok(result),
        }
    }
}

/// The refusal of a query of this complexity and depth, if it is over a cap.
pub fn refusal(complexity: usize, depth: usize) -> Option<String> {
    // Depth first: a deep query is usually also a heavy one, and its depth is what to fix.
    if depth > MAX_QUERY_DEPTH {
        return Some(format!(
            "the query is nested {depth} levels deep, over the limit of {MAX_QUERY_DEPTH} by {}",
            depth - MAX_QUERY_DEPTH
        ));
    }
    if complexity > MAX_QUERY_COMPLEXITY {
        return Some(format!(
            "the query's complexity is {}, over the limit of {} by {}: a list weighs its `size` times its \
             selection, and impact, externalImpact and piiFlow weigh one copy of their selection per 100 of \
             `limit`; select fewer fields or ask for fewer items",
            thousands(complexity),
            thousands(MAX_QUERY_COMPLEXITY),
            thousands(complexity - MAX_QUERY_COMPLEXITY)
        ));
    }
    None
}

/// `1234567` as `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_the_limit_and_the_excess() {
        assert_eq!(refusal(MAX_QUERY_COMPLEXITY, MAX_QUERY_DEPTH), None);
        let m = refusal(200_000, 3).unwrap_or_default();
        assert!(m.contains("200,000") && m.contains("limit of 150,000 by 50,000"), "{m}");
        let m = refusal(10, 17).unwrap_or_default();
        assert!(m.contains("nested 17 levels deep, over the limit of 15 by 2"), "{m}");
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
    }
}
