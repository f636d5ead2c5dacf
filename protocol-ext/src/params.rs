//! Deserializing params so that every error names the field it is about.
//!
//! serde_json names a missing field ("missing field `text`") but not a mistyped one ("invalid
//! type: integer `1`, expected a string" — which field?), and never a nested one. The spec
//! promises -32602 naming the field, so this module deserializes through a thin wrapper around
//! [`serde_json::Value`] that records the path (`context.selection.start.line`, `images[0].data`)
//! as errors unwind. It is written here rather than taken from `serde_path_to_error` to keep the
//! crate on serde and serde_json alone; it is small because it delegates every leaf to `Value`.

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::{Map, Value};

/// Why params did not deserialize, with the path of the field concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsError {
    /// Dotted path of the field (`context.uri`, `images[0].mimeType`); `None` when the params
    /// as a whole were wrong (e.g. an array instead of an object).
    pub field: Option<String>,
    /// serde's description of the problem, without the path.
    pub message: String,
    missing: bool,
}

impl ParamsError {
    /// The same error for a value found at `prefix` (`arguments[0]`): the field's path is
    /// prefixed with it.
    pub fn within(mut self, prefix: &str) -> ParamsError {
        self.field = Some(match self.field.take() {
            Some(f) if f.starts_with('[') => format!("{prefix}{f}"),
            Some(f) => format!("{prefix}.{f}"),
            None => prefix.to_string(),
        });
        self
    }
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.field, self.missing) {
            (Some(field), true) => write!(f, "missing field `{field}`"),
            (Some(field), false) => write!(f, "`{field}`: {}", self.message),
            (None, _) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ParamsError {}

/// Deserializes `value` as `T`, naming the offending field's full path on error.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ParamsError> {
    T::deserialize(Node(value)).map_err(|e| {
        let mut path = String::new();
        for seg in e.path.iter().rev() {
            match seg {
                Segment::Key(k) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                }
                Segment::Index(i) => path.push_str(&format!("[{i}]")),
            }
        }
        ParamsError {
            field: (!path.is_empty()).then_some(path),
            message: e.message,
            missing: e.missing,
        }
    })
}

#[derive(Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

/// The error while unwinding: the path is collected innermost first.
#[derive(Debug)]
struct PathError {
    path: Vec<Segment>,
    message: String,
    missing: bool,
}

impl PathError {
    fn within(mut self, seg: Segment) -> Self {
        self.path.push(seg);
        self
    }

    fn from_json(e: serde_json::Error) -> Self {
        de::Error::custom(e)
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PathError {}

impl de::Error for PathError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        PathError {
            path: Vec::new(),
            message: msg.to_string(),
            missing: false,
        }
    }

    fn missing_field(field: &'static str) -> Self {
        PathError {
            path: vec![Segment::Key(field.to_string())],
            message: format!("missing field `{field}`"),
            missing: true,
        }
    }
}

/// A value being deserialized; maps and arrays hand out `Node`s so errors learn their path.
struct Node(Value);

impl<'de> de::Deserializer<'de> for Node {
    type Error = PathError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(Fields::new(map)),
            Value::Array(items) => visitor.visit_seq(Items {
                iter: items.into_iter().enumerate(),
            }),
            leaf => leaf.deserialize_any(visitor).map_err(PathError::from_json),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.0
            .deserialize_enum(name, variants, visitor)
            .map_err(PathError::from_json)
    }

    /// Unlike serde_json, a struct is never read from an array (positional fields would be
    /// matched silently by order), so `["x"]` gets "invalid type: sequence".
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Array(_) => Err(de::Error::invalid_type(de::Unexpected::Seq, &visitor)),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        self.0
            .deserialize_unit(visitor)
            .map_err(PathError::from_json)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        visitor.visit_unit()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit_struct seq tuple tuple_struct map identifier
    }
}

struct Fields {
    iter: serde_json::map::IntoIter,
    pending: Option<(String, Value)>,
}

impl Fields {
    fn new(map: Map<String, Value>) -> Self {
        Fields {
            iter: map.into_iter(),
            pending: None,
        }
    }
}

impl<'de> de::MapAccess<'de> for Fields {
    type Error = PathError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, PathError> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        let k = seed.deserialize(key.clone().into_deserializer())?;
        self.pending = Some((key, value));
        Ok(Some(k))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, PathError> {
        let (key, value) = self
            .pending
            .take()
            .ok_or_else(|| de::Error::custom("value requested before its key"))?;
        seed.deserialize(Node(value))
            .map_err(|e| e.within(Segment::Key(key)))
    }
}

struct Items {
    iter: std::iter::Enumerate<std::vec::IntoIter<Value>>,
}

impl<'de> de::SeqAccess<'de> for Items {
    type Error = PathError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, PathError> {
        match self.iter.next() {
            None => Ok(None),
            Some((i, value)) => seed
                .deserialize(Node(value))
                .map(Some)
                .map_err(|e| e.within(Segment::Index(i))),
        }
    }
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
