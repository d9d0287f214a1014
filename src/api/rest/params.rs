//! Reading query strings and JSON bodies with errors that name the parameter: a query parameter
//! that is not the type the route documents, or a body field of the wrong type, is refused with
//! the route's invalid-input answer (`ApiError::invalid`), `loc` naming it.
//!
//! A route's query parameters are one struct that both derives `IntoParams` (the OpenAPI
//! document) and `Deserialize` (the parsing), taken by the handler as [`Query<T>`], so what the
//! document says and what is parsed cannot drift apart. axum's own `Query` (serde_urlencoded)
//! is not used because the answers it would give differ from the ones the routes have always
//! given, which this module's deserializer keeps:
//! - a parameter given twice is refused ("which one would count?"), except a list's;
//! - integers and booleans are trimmed; booleans also read `1`/`0` and `yes`/`no`;
//! - a list (`Vec<i64>`) is the parameter repeated, or its values comma-separated;
//! - a choice (`side`, `direction`) is case-insensitive ([`choice`]);
//! - each refusal says `query parameter <name> ...` and names the parameter in `loc`; a missing
//!   required one says what it is to be ([`QueryParams::REQUIRED`]);
//! - `format` is read before every other parameter, and its unknown values are 400 on every
//!   route (`export::Format`), as they always were.
//!
//! Parameters a route does not document are ignored, as before.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::{self, DeserializeOwned, Deserializer, IntoDeserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{ApiError, Seed};

/// A request's query parameters, in order; repeated ones kept (`?container_ids=1&container_ids=2`).
struct Params {
    pairs: Vec<(String, String)>,
}

impl Params {
    fn parse(query: Option<&str>) -> Self {
        let pairs = url::form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect();
        Params { pairs }
    }

    fn values<'a>(&'a self, name: &'a str) -> Vec<&'a str> {
        self.pairs.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }
}

/// The query parameters of a route: the struct its OpenAPI document describes (`IntoParams`).
pub trait QueryParams: DeserializeOwned {
    /// Whose error conventions the route follows.
    const SEED: Seed;
    /// What a required parameter (a field that is not an `Option`) is to be, in the refusal
    /// when it is missing: `query parameter <name> is required: <REQUIRED>`.
    const REQUIRED: &'static str = "a value";
}

/// A route's query parameters, parsed as the module says; a bad one answers the route's
/// invalid-input error naming it. A handler that must check a path parameter first takes
/// `Result<Query<T>, ApiError>` and reads it after.
pub struct Query<T>(pub T);

impl<T: QueryParams> Query<T> {
    pub fn parse(query: Option<&str>) -> Result<Self, ApiError> {
        let params = Params::parse(query);
        T::deserialize(Struct { params: &params }).map(Query).map_err(|e| e.refusal(T::SEED, T::REQUIRED))
    }
}

impl<S: Send + Sync, T: QueryParams> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        Query::parse(parts.uri.query())
    }
}

/// A query parameter's refusal: which parameter, and what is wrong with it.
#[derive(Debug)]
pub struct ParamError {
    name: Option<&'static str>,
    kind: Kind,
    /// What follows `query parameter <name> ` in the message.
    message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Missing,
    Repeated,
    Invalid,
}

impl ParamError {
    fn new(kind: Kind, message: String) -> Self {
        ParamError { name: None, kind, message }
    }

    fn of(mut self, name: &'static str) -> Self {
        self.name.get_or_insert(name);
        self
    }

    fn refusal(self, seed: Seed, required: &str) -> ApiError {
        let name = self.name.unwrap_or("query");
        let message = match self.kind {
            Kind::Missing => format!("query parameter {name} is required: {required}"),
            _ => format!("query parameter {name} {}", self.message),
        };
        if self.kind == Kind::Invalid && name == super::export::FORMAT {
            return super::export::Format::refusal(message);
        }
        ApiError::invalid(seed, &["query", name], message)
    }
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParamError {}

impl de::Error for ParamError {
    fn custom<M: std::fmt::Display>(message: M) -> Self {
        ParamError::new(Kind::Invalid, message.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        ParamError::new(Kind::Missing, String::new()).of(field)
    }
}

/// The whole query as a struct: its fields that are present, `format` first.
struct Struct<'a> {
    params: &'a Params,
}

impl<'de> Deserializer<'de> for Struct<'_> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        self.deserialize_struct("", &[], visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamError> {
        let mut present: Vec<(&'static str, Vec<&str>)> =
            fields.iter().map(|f| (*f, self.params.values(f))).filter(|(_, values)| !values.is_empty()).collect();
        present.sort_by_key(|(f, _)| *f != super::export::FORMAT);
        visitor.visit_map(Fields { present: present.into_iter(), value: None })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

struct Fields<'a> {
    present: std::vec::IntoIter<(&'static str, Vec<&'a str>)>,
    value: Option<(&'static str, Vec<&'a str>)>,
}

impl<'de> MapAccess<'de> for Fields<'_> {
    type Error = ParamError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, ParamError> {
        let Some((name, values)) = self.present.next() else { return Ok(None) };
        self.value = Some((name, values));
        seed.deserialize(name.into_deserializer()).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ParamError> {
        let (name, values) = self.value.take().ok_or_else(|| de::Error::custom("a value without its name"))?;
        seed.deserialize(One { values, list: false }).map_err(|e| e.of(name))
    }
}

/// One parameter's values: one (or, as a list's element, one of the list).
struct One<'a> {
    values: Vec<&'a str>,
    /// An element of a list: a refusal speaks of the list ("must be integers").
    list: bool,
}

impl<'a> One<'a> {
    /// The one value of a parameter; given twice it is refused (which one would count?).
    fn one(&self) -> Result<&'a str, ParamError> {
        match self.values.as_slice() {
            [v] => Ok(v),
            [] => Ok(""),
            _ => Err(ParamError::new(Kind::Repeated, "is given more than once; give it once".into())),
        }
    }
}

impl<'de> Deserializer<'de> for One<'_> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_some(self)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        let v = self.one()?;
        match v.trim().parse::<i64>() {
            Ok(n) => visitor.visit_i64(n),
            Err(_) if self.list => Err(de::Error::custom(format!("must be integers, got {v:?}"))),
            Err(_) => Err(de::Error::custom(format!("must be an integer, got {v:?}"))),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        let v = self.one()?;
        match v.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => visitor.visit_bool(true),
            "false" | "0" | "no" => visitor.visit_bool(false),
            _ => Err(de::Error::custom(format!("must be true or false, got {v:?}"))),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_string(self.one()?.to_string())
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        self.deserialize_string(visitor)
    }

    /// A list: the parameter repeated (`?ids=1&ids=2`), or comma-separated (`?ids=1,2`).
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        let parts = self.values.iter().flat_map(|v| v.split(',')).map(str::trim).filter(|p| !p.is_empty());
        visitor.visit_seq(de::value::SeqDeserializer::new(parts.map(|p| One { values: vec![p], list: true })))
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct newtype_struct tuple tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, ParamError> for One<'_> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// One of a fixed set of words (trimmed, case-insensitive), as `T`: the `Deserialize` of a
/// query parameter's enum, whose refusal lists the words.
pub fn choice<'de, D: Deserializer<'de>, T: Copy>(d: D, choices: &[(&str, T)]) -> Result<T, D::Error> {
    let raw = String::deserialize(d)?;
    let wanted = raw.trim().to_ascii_lowercase();
    choices.iter().find(|(word, _)| *word == wanted).map(|(_, t)| *t).ok_or_else(|| {
        let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
        de::Error::custom(format!("must be one of {}, got {raw:?}", words.join(", ")))
    })
}

/// A required text parameter (an `Option` in its struct because another one may stand for it):
/// present and not blank, or refused naming it and saying what it is to be.
pub fn required(seed: Seed, name: &str, value: Option<String>, what: &str) -> Result<String, ApiError> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(ApiError::invalid(seed, &["query", name], format!("query parameter {name} is required: {what}"))),
    }
}

/// A JSON body's fields: the body must be a JSON object of the listed fields only.
pub struct Body {
    fields: Map<String, Value>,
}

impl Body {
    /// 400 when the bytes are not JSON; 422 when it is not an object or names another field.
    pub fn parse(bytes: &[u8], allowed: &[&str]) -> Result<Self, ApiError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            ApiError::detail(axum::http::StatusCode::BAD_REQUEST, format!("the body is not valid JSON: {e}"))
        })?;
        let Value::Object(fields) = value else {
            return Err(ApiError::invalid(Seed::Lineage, &["body"], "the body must be a JSON object"));
        };
        if let Some(k) = fields.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ApiError::invalid(
                Seed::Lineage,
                &["body", k],
                format!("unknown field {k:?}; the fields are {}", allowed.join(", ")),
            ));
        }
        Ok(Body { fields })
    }

    /// Whether the field is present (even as null).
    pub fn has(&self, name: &str) -> bool {
        self.fields.contains_key(name)
    }

    pub fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| {
                ApiError::invalid(
                    Seed::Lineage,
                    &["body", name],
                    format!("{name} must be an integer id or null, got {v}"),
                )
            }),
        }
    }

    pub fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(ApiError::invalid(
                Seed::Lineage,
                &["body", name],
                format!("{name} must be true, false or null, got {v}"),
            )),
        }
    }

    pub fn string(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(ApiError::invalid(
                Seed::Lineage,
                &["body", name],
                format!("{name} must be a string or null, got {v}"),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::rest::export::Format;

    #[derive(Deserialize, Debug)]
    struct Probe {
        id: i64,
        ids: Option<Vec<i64>>,
        flag: Option<bool>,
        name: Option<String>,
        format: Option<Format>,
    }

    impl QueryParams for Probe {
        const SEED: Seed = Seed::Lineage;
        const REQUIRED: &'static str = "an integer id";
    }

    fn parse(query: &str) -> Result<Probe, ApiError> {
        Query::<Probe>::parse(Some(query)).map(|q| q.0)
    }

    fn refusal(query: &str) -> (u16, Value) {
        let e = parse(query).err().map(|e| (e.status.as_u16(), e.body));
        e.unwrap_or_else(|| panic!("{query} was accepted"))
    }

    fn invalid(name: &str, msg: &str) -> (u16, Value) {
        (422, json!({"detail": [{"type": "value_error", "loc": ["query", name], "msg": msg}]}))
    }

    #[test]
    fn parameters_parse_as_the_routes_always_read_them() {
        let p = parse("id=%207%20&ids=1,2&ids=3&flag=YES&name=a%20b&format=CSV&other=x&other=y").ok();
        let p = p.unwrap_or_else(|| panic!("refused"));
        assert_eq!(
            (p.id, p.ids, p.flag, p.name.as_deref(), p.format),
            (7, Some(vec![1, 2, 3]), Some(true), Some("a b"), Some(Format::Csv))
        );
        let p = parse("id=1&ids=&flag=0").ok().unwrap_or_else(|| panic!("refused"));
        assert_eq!((p.ids, p.flag, p.name, p.format), (Some(vec![]), Some(false), None, None));
    }

    #[test]
    fn a_bad_parameter_is_refused_naming_it() {
        assert_eq!(refusal(""), invalid("id", "query parameter id is required: an integer id"));
        assert_eq!(refusal("id=two"), invalid("id", "query parameter id must be an integer, got \"two\""));
        assert_eq!(refusal("id=1&id=2"), invalid("id", "query parameter id is given more than once; give it once"));
        assert_eq!(refusal("id=1&ids=1,x"), invalid("ids", "query parameter ids must be integers, got \"x\""));
        assert_eq!(
            refusal("id=1&flag=maybe"),
            invalid("flag", "query parameter flag must be true or false, got \"maybe\"")
        );
        // `format` is read first, and its unknown values are 400 on every route.
        assert_eq!(
            refusal("id=x&format=xlsx"),
            (
                400,
                json!({"detail": "query parameter format must be one of json, csv, dot, graphml, mermaid; got \"xlsx\""})
            )
        );
        assert_eq!(
            refusal("id=1&format=csv&format=dot"),
            invalid("format", "query parameter format is given more than once; give it once")
        );
    }
}
