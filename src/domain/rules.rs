//! Edge rules of seed 000 and the contract, as pure functions.

/// The source types a user may set on create and update.
pub const USER_SOURCE_TYPES: [&str; 3] = ["manual", "catalog_import", "inferred"];

/// `manual`, `catalog_import` and `inferred` are the user's; any other value (`openlineage`, a
/// datastore type from SQL capture, `external`) names a provider that maintains the edge.
pub fn is_user_source_type(source_type: &str) -> bool {
    USER_SOURCE_TYPES.contains(&source_type)
}

/// Deleting a provider-maintained edge retires it, so who asserted it stays auditable; other
/// edges are deleted.
pub fn delete_retires(source_type: &str) -> bool {
    !is_user_source_type(source_type)
}

pub const SAME_GRANULARITY_MESSAGE: &str =
    "Value error, source and target must be at the same granularity (both containers or both fields)";

/// Checks the ends of a create request: exactly one source and one target, same granularity.
/// Returns whether the edge is field-level.
pub fn check_granularity(
    source_container: Option<i64>,
    source_field: Option<i64>,
    target_container: Option<i64>,
    target_field: Option<i64>,
) -> Result<bool, String> {
    let source = match (source_container, source_field) {
        (Some(_), None) => false,
        (None, Some(_)) => true,
        (Some(_), Some(_)) => {
            return Err("Value error, exactly one of sourceContainerId or sourceFieldId must be set, not both".into())
        }
        (None, None) => return Err("Value error, a source is required: set sourceContainerId or sourceFieldId".into()),
    };
    let target = match (target_container, target_field) {
        (Some(_), None) => false,
        (None, Some(_)) => true,
        (Some(_), Some(_)) => {
            return Err("Value error, exactly one of targetContainerId or targetFieldId must be set, not both".into())
        }
        (None, None) => return Err("Value error, a target is required: set targetContainerId or targetFieldId".into()),
    };
    if source != target {
        return Err(SAME_GRANULARITY_MESSAGE.into());
    }
    Ok(source)
}

/// A manual field edge between fields of different containers brings the container edge along.
pub fn wants_auto_container_edge(source_type: &str, source_container: i64, target_container: i64) -> bool {
    source_type == "manual" && source_container != target_container
}

/// Whether a transformation list (OpenLineage shape) marks the value as masked.
pub fn is_masking(transformations: Option<&serde_json::Value>) -> bool {
    transformations
        .and_then(|t| t.as_array())
        .is_some_and(|list| list.iter().any(|t| t.get("masking").and_then(|m| m.as_bool()) == Some(true)))
}

/// Whether every transformation is INDIRECT, so the edge does not carry the value itself.
pub fn is_indirect_only(transformations: Option<&serde_json::Value>) -> bool {
    transformations.and_then(|t| t.as_array()).is_some_and(|list| {
        !list.is_empty()
            && list
                .iter()
                .all(|t| t.get("type").and_then(|v| v.as_str()).is_some_and(|s| s.eq_ignore_ascii_case("INDIRECT")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn granularity() {
        assert_eq!(check_granularity(Some(1), None, Some(2), None), Ok(false));
        assert_eq!(check_granularity(None, Some(1), None, Some(2)), Ok(true));
        assert_eq!(check_granularity(Some(1), None, None, Some(2)), Err(SAME_GRANULARITY_MESSAGE.to_string()));
        assert!(check_granularity(None, None, Some(2), None).is_err());
        assert!(check_granularity(Some(1), Some(1), Some(2), None).is_err());
    }

    #[test]
    fn retirement_by_type() {
        assert!(!delete_retires("manual"));
        assert!(!delete_retires("inferred"));
        assert!(delete_retires("openlineage"));
        assert!(delete_retires("snowflake"));
    }

    #[test]
    fn transformations() {
        let masked = json!([{"type": "DIRECT", "subtype": "TRANSFORMATION", "masking": true}]);
        assert!(is_masking(Some(&masked)));
        assert!(!is_indirect_only(Some(&masked)));
        let indirect = json!([{"type": "INDIRECT", "subtype": "FILTER"}]);
        assert!(is_indirect_only(Some(&indirect)));
        assert!(!is_masking(None));
    }
}
