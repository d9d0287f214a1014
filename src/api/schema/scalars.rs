//! Custom scalars: `DateTime`, and the two helpers that wrap domain timestamps in it.

/// Timestamps travel as RFC 3339 in UTC with microseconds and `Z`, as the seeds print them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateTime(pub crate::domain::Timestamp);

#[async_graphql::Scalar(name = "DateTime")]
impl async_graphql::ScalarType for DateTime {
    fn parse(value: async_graphql::Value) -> async_graphql::InputValueResult<Self> {
        match &value {
            async_graphql::Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
                .map(|t| DateTime(t.with_timezone(&chrono::Utc)))
                .map_err(|e| async_graphql::InputValueError::custom(format!("not an RFC 3339 date-time: {e}"))),
            _ => Err(async_graphql::InputValueError::expected_type(value)),
        }
    }
    fn to_value(&self) -> async_graphql::Value {
        async_graphql::Value::String(crate::domain::time::rfc3339_micros(&self.0))
    }
}

pub(super) fn dt(t: crate::domain::Timestamp) -> DateTime {
    DateTime(t)
}
pub(super) fn odt(t: Option<crate::domain::Timestamp>) -> Option<DateTime> {
    t.map(DateTime)
}
