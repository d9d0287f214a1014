//! Reading query strings and JSON bodies with errors that name the parameter: a query parameter
//! that is not the type the route documents, or a body field of the wrong type, is refused with
//! the route's invalid-input answer (`ApiError::invalid`), `loc` naming it.

use serde_json::{Map, Value};

use super::{ApiError, Seed};

/// A request's query parameters, in order; repeated ones kept (`?container_ids=1&container_ids=2`).
pub struct Params {
    seed: Seed,
    pairs: Vec<(String, String)>,
}

impl Params {
    pub fn parse(seed: Seed, query: Option<&str>) -> Self {
        let pairs = url::form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect();
        Params { seed, pairs }
    }

    fn invalid(&self, name: &str, message: String) -> ApiError {
        ApiError::invalid(self.seed, &["query", name], message)
    }

    fn values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs.iter().filter(move |(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The one value of a parameter; given twice it is refused (which one would count?).
    pub fn string(&self, name: &str) -> Result<Option<String>, ApiError> {
        let mut values = self.values(name);
        let first = values.next();
        if values.next().is_some() {
            return Err(self.invalid(name, format!("query parameter {name} is given more than once; give it once")));
        }
        Ok(first.map(str::to_string))
    }

    pub fn required_string(&self, name: &str, what: &str) -> Result<String, ApiError> {
        match self.string(name)? {
            Some(v) if !v.trim().is_empty() => Ok(v),
            _ => Err(self.invalid(name, format!("query parameter {name} is required: {what}"))),
        }
    }

    pub fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.string(name)?
            .map(|v| {
                v.trim()
                    .parse::<i64>()
                    .map_err(|_| self.invalid(name, format!("query parameter {name} must be an integer, got {v:?}")))
            })
            .transpose()
    }

    pub fn required_int(&self, name: &str) -> Result<i64, ApiError> {
        self.int(name)?.ok_or_else(|| self.invalid(name, format!("query parameter {name} is required: an integer id")))
    }

    pub fn bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        self.string(name)?
            .map(|v| match v.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Ok(true),
                "false" | "0" | "no" => Ok(false),
                _ => Err(self.invalid(name, format!("query parameter {name} must be true or false, got {v:?}"))),
            })
            .transpose()
    }

    /// A repeated integer parameter (`?ids=1&ids=2`; `?ids=1,2` too); `None` when absent.
    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>, ApiError> {
        let mut out = Vec::new();
        let mut any = false;
        for v in self.values(name) {
            any = true;
            for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                out.push(part.parse::<i64>().map_err(|_| {
                    self.invalid(name, format!("query parameter {name} must be integers, got {part:?}"))
                })?);
            }
        }
        Ok(any.then_some(out))
    }

    /// One of a fixed set of words (case-insensitive), as `T`.
    pub fn choice<T: Copy>(&self, name: &str, choices: &[(&str, T)]) -> Result<Option<T>, ApiError> {
        let Some(v) = self.string(name)? else { return Ok(None) };
        let wanted = v.trim().to_ascii_lowercase();
        choices.iter().find(|(word, _)| *word == wanted).map(|(_, t)| Some(*t)).ok_or_else(|| {
            let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
            self.invalid(name, format!("query parameter {name} must be one of {}, got {v:?}", words.join(", ")))
        })
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
