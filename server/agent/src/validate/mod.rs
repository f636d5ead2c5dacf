//! Tool-argument validation with AJV-compatible type coercion.
//!
//! Error lines follow pi 0.73.1, which reports paths with `.` between segments
//! (`edits.0.oldText`) and all missing properties of an object in one line
//! (`must have required properties a, b`); the rest follows AJV, which pi 0.58 used.
//!
//! pi checks every tool call with AJV (`allErrors: true, strict: false, coerceTypes: true`) and, when
//! the call is wrong, hands the model a fixed error text that models have learnt to act on. A general
//! JSON-schema crate neither coerces nor words its errors like AJV, so this module mirrors the code AJV
//! generates instead: coercion first, then the untyped keywords (`$ref`, `const`, `enum`, `not`, `anyOf`,
//! `oneOf`, `allOf`, `if`), then the number, string, array and object keyword groups, each in AJV's
//! order, with AJV's English messages and instance paths. Objects are walked in JavaScript key order
//! (array-index keys first) and numbers are printed as JavaScript prints them, so the text matches pi's.
//!
//! Deliberately absent: `format` (pi loads ajv-formats), `contains`, `uniqueItems`, `propertyNames`,
//! `dependencies` and non-local `$ref`s are not checked. Patterns run on the `regex` crate after
//! translating the ASCII-only JS classes; JS-only syntax (look-around, back-references) is not
//! enforced. An invalid pattern fails the whole call, as AJV fails to compile the schema.

use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Number, Value};

/// Nesting followed before a branch is given up; only `$ref` cycles get this deep.
const MAX_DEPTH: usize = 256;
/// The type names AJV knows.
const TYPES: &str = "string number integer boolean null object array";
/// Keywords of AJV's array group; their presence changes where a type error is reported.
const ARRAY_KEYWORDS: &str = "maxItems minItems uniqueItems additionalItems items contains";
/// Keywords of AJV's object group.
const OBJECT_KEYWORDS: &str = concat!(
    "maxProperties minProperties required propertyNames additionalProperties dependencies ",
    "properties patternProperties"
);
/// Other keywords AJV registers with a definition; a schema with none of these, nor of the groups
/// above, is "always valid" and AJV skips it (which matters for coercion side effects in `anyOf`).
const OTHER_RULES: &str = concat!(
    "$ref $comment id type nullable const enum maximum minimum exclusiveMaximum exclusiveMinimum ",
    "multipleOf maxLength minLength pattern not anyOf oneOf allOf if then else format ",
    "formatMaximum formatMinimum formatExclusiveMaximum formatExclusiveMinimum"
);

/// Validates and coerces `args` against `schema` for the tool `tool_name`.
/// Ok(coerced arguments) or Err(pi's full error text).
pub fn validate_tool_arguments(
    tool_name: &str,
    schema: &Value,
    args: &Value,
) -> Result<Value, String> {
    let mut regexes = HashMap::new();
    compile_patterns(schema, &mut regexes)?;
    let mut validator = Validator {
        root: schema,
        regexes,
        errors: Vec::new(),
        depth: 0,
    };
    let mut data = args.clone();
    validator.node(schema, &mut data, "");
    if validator.errors.is_empty() {
        // AJV replaces a coerced scalar root only inside its own function; pi returns its clone.
        return Ok(if data.is_object() || data.is_array() {
            data
        } else {
            args.clone()
        });
    }
    let lines: Vec<String> = validator.errors.iter().map(Failure::line).collect();
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{}",
        lines.join("\n"),
        js::stringify(args, 0)
    ))
}

/// One error: its instance path (a JSON pointer), the property a `required` error misses, the message.
struct Failure {
    path: String,
    missing: Option<String>,
    message: String,
}

impl Failure {
    /// pi 0.73.1's line: the path with `.` between segments, else the missing property, else
    /// `root`.
    fn line(&self) -> String {
        let at = match (self.path.strip_prefix('/'), &self.missing) {
            (Some(path), _) => path
                .split('/')
                .map(|segment| segment.replace("~1", "/").replace("~0", "~"))
                .collect::<Vec<_>>()
                .join("."),
            (None, Some(missing)) => missing.clone(),
            (None, None) => "root".to_string(),
        };
        format!("  - {at}: {}", self.message)
    }
}

/// Walks one schema over the data, coercing in place and collecting errors in AJV's order.
struct Validator<'s> {
    root: &'s Value,
    regexes: HashMap<String, Regex>,
    errors: Vec<Failure>,
    depth: usize,
}

impl<'s> Validator<'s> {
    fn fail(&mut self, path: &str, message: impl Into<String>) {
        let message = message.into();
        self.errors.push(Failure {
            path: path.to_owned(),
            missing: None,
            message,
        });
    }

    /// Validates `data` at `path` against `schema`, keeping every error.
    fn node(&mut self, schema: &'s Value, data: &mut Value, path: &str) {
        let s = match schema {
            Value::Object(s) => s,
            Value::Bool(false) => return self.fail(path, "boolean schema is false"),
            _ => return,
        };
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let types = schema_types(s);
        let type_errors = !self.coerce_or_check(s, &types, data, path);
        self.untyped(s, data, path);
        match data {
            Value::Number(n) => self.number(s, n.as_f64().unwrap_or(f64::NAN), path),
            Value::String(text) => self.string(s, text, path),
            _ => {}
        }
        for group in ["array", "object"] {
            if !has_any(s, group_keywords(group)) {
                continue;
            }
            match data {
                Value::Array(items) if group == "array" => self.array(s, items, path),
                Value::Object(obj) if group == "object" => self.object(s, obj, path),
                _ if type_errors && types == [group] => self.type_error(s, path),
                _ => {}
            }
        }
        self.depth -= 1;
    }

    /// Runs `node` and reports whether it passed, keeping its errors.
    fn check(&mut self, schema: &'s Value, data: &mut Value, path: &str) -> bool {
        let before = self.errors.len();
        self.node(schema, data, path);
        self.errors.len() == before
    }

    /// Runs `node` and reports whether it passed, dropping its errors (AJV's `createErrors: false`).
    fn passes(&mut self, schema: &'s Value, data: &mut Value, path: &str) -> bool {
        let before = self.errors.len();
        let ok = self.check(schema, data, path);
        self.errors.truncate(before);
        ok
    }

    /// AJV's up-front type step; returns whether it checked the type (else the group reports it).
    fn coerce_or_check(
        &mut self,
        s: &Map<String, Value>,
        types: &[&str],
        data: &mut Value,
        path: &str,
    ) -> bool {
        let coercible: Vec<&str> = types
            .iter()
            .copied()
            .filter(|t| !matches!(*t, "object" | "array"))
            .collect();
        // A lone `object`/`array` type is checked by its keyword group instead, when it has keywords.
        let group_checks =
            coercible.is_empty() && types.len() == 1 && has_any(s, group_keywords(types[0]));
        let checks = !types.is_empty() && !group_checks;
        if checks && !types.iter().any(|t| is_type(data, t)) {
            match coercible.iter().find_map(|t| coerce(data, t)) {
                Some(coerced) => *data = coerced,
                None => self.type_error(s, path),
            }
        }
        checks
    }

    fn type_error(&mut self, s: &Map<String, Value>, path: &str) {
        let shown = match s.get("type") {
            Some(Value::Array(types)) => types
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
            Some(Value::String(t)) => t.clone(),
            _ => String::new(),
        };
        self.fail(path, format!("must be {shown}"));
    }

    fn untyped(&mut self, s: &'s Map<String, Value>, data: &mut Value, path: &str) {
        let root = self.root;
        let target = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'));
        if let Some(target) = target.and_then(|pointer| root.pointer(pointer)) {
            self.node(target, data, path);
        }
        if s.get("const").is_some_and(|c| !js::equal(c, data)) {
            self.fail(path, "must be equal to constant");
        }
        if let Some(Value::Array(allowed)) = s.get("enum") {
            if !allowed.iter().any(|a| js::equal(a, data)) {
                self.fail(path, "must be equal to one of the allowed values");
            }
        }
        if let Some(not) = s.get("not") {
            if self.passes(not, data, path) {
                self.fail(path, "must NOT be valid");
            }
        }
        if let Some(Value::Array(branches)) = s.get("anyOf") {
            self.any_of(branches, data, path);
        }
        if let Some(Value::Array(branches)) = s.get("oneOf") {
            self.one_of(branches, data, path);
        }
        if let Some(Value::Array(all)) = s.get("allOf") {
            for sub in all {
                self.node(sub, data, path);
            }
        }
        self.if_then_else(s, data, path);
    }

    /// Branches run until one passes; on failure every branch's errors stay, then the anyOf error.
    fn any_of(&mut self, branches: &'s [Value], data: &mut Value, path: &str) {
        if branches.iter().any(always_valid) {
            return;
        }
        let before = self.errors.len();
        for branch in branches {
            if self.check(branch, data, path) {
                return self.errors.truncate(before);
            }
        }
        self.fail(path, "must match a schema in anyOf");
    }

    /// Branches run until a second one passes; on failure the errors of those run stay, then oneOf's.
    fn one_of(&mut self, branches: &'s [Value], data: &mut Value, path: &str) {
        let before = self.errors.len();
        let mut valid = false;
        for branch in branches {
            let ok = always_valid(branch) || self.check(branch, data, path);
            if ok && valid {
                valid = false;
                break;
            }
            valid |= ok;
        }
        if valid {
            self.errors.truncate(before);
        } else {
            self.fail(path, "must match exactly one schema in oneOf");
        }
    }

    fn if_then_else(&mut self, s: &'s Map<String, Value>, data: &mut Value, path: &str) {
        let Some(condition) = s.get("if") else { return };
        let (then, otherwise) = (s.get("then"), s.get("else"));
        if then.is_none() && otherwise.is_none() {
            return;
        }
        let (branch, name) = if self.passes(condition, data, path) {
            (then, "then")
        } else {
            (otherwise, "else")
        };
        if let Some(branch) = branch {
            if !self.check(branch, data, path) {
                self.fail(path, format!("must match \"{name}\" schema"));
            }
        }
    }

    fn number(&mut self, s: &Map<String, Value>, x: f64, path: &str) {
        let limits = [
            ("maximum", "<="),
            ("minimum", ">="),
            ("exclusiveMaximum", "<"),
            ("exclusiveMinimum", ">"),
        ];
        for (keyword, op) in limits {
            let Some(m) = s.get(keyword).and_then(Value::as_f64) else {
                continue;
            };
            let ok = match op {
                "<=" => x <= m,
                ">=" => x >= m,
                "<" => x < m,
                _ => x > m,
            };
            if !ok {
                self.fail(path, format!("must be {op} {}", js::number(m)));
            }
        }
        if let Some(m) = s.get("multipleOf").and_then(Value::as_f64) {
            let ratio = x / m;
            if !(ratio.is_finite() && ratio.fract() == 0.0 && ratio.abs() < 1e21) {
                self.fail(path, format!("must be multiple of {}", js::number(m)));
            }
        }
    }

    fn string(&mut self, s: &Map<String, Value>, text: &str, path: &str) {
        let length = text.chars().count() as f64; // code points, like AJV's ucs2length
        self.limits(s, ["maxLength", "minLength"], length, "characters", path);
        if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
            if self
                .regexes
                .get(pattern)
                .is_some_and(|re| !re.is_match(text))
            {
                self.fail(path, format!("must match pattern \"{pattern}\""));
            }
        }
    }

    /// The `max*`/`min*` pair of one group: "must NOT have more/fewer than N <noun>".
    fn limits(
        &mut self,
        s: &Map<String, Value>,
        [max, min]: [&str; 2],
        count: f64,
        noun: &str,
        path: &str,
    ) {
        for (keyword, comparison) in [(max, "more"), (min, "fewer")] {
            let Some(limit) = s.get(keyword).and_then(Value::as_f64) else {
                continue;
            };
            if (keyword == max && count > limit) || (keyword == min && count < limit) {
                self.fail(
                    path,
                    format!(
                        "must NOT have {comparison} than {} {noun}",
                        js::number(limit)
                    ),
                );
            }
        }
    }

    fn array(&mut self, s: &'s Map<String, Value>, items: &mut [Value], path: &str) {
        self.limits(
            s,
            ["maxItems", "minItems"],
            items.len() as f64,
            "items",
            path,
        );
        match s.get("items") {
            Some(Value::Array(tuple)) => {
                match s.get("additionalItems") {
                    Some(Value::Bool(false)) if items.len() > tuple.len() => {
                        self.fail(
                            path,
                            format!("must NOT have more than {} items", tuple.len()),
                        );
                    }
                    Some(extra @ Value::Object(_)) => {
                        for (i, item) in items.iter_mut().enumerate().skip(tuple.len()) {
                            self.node(extra, item, &child(path, &i.to_string()));
                        }
                    }
                    _ => {}
                }
                for (i, (sub, item)) in tuple.iter().zip(items.iter_mut()).enumerate() {
                    self.node(sub, item, &child(path, &i.to_string()));
                }
            }
            Some(each) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.node(each, item, &child(path, &i.to_string()));
                }
            }
            None => {}
        }
    }

    fn object(&mut self, s: &'s Map<String, Value>, obj: &mut Map<String, Value>, path: &str) {
        self.limits(
            s,
            ["maxProperties", "minProperties"],
            obj.len() as f64,
            "properties",
            path,
        );
        // pi 0.73.1 reports every missing property of an object in one line, at the path of the
        // first one (its validator's wording, not AJV's one-line-per-property).
        let missing: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|name| !obj.contains_key(*name))
            .collect();
        if let Some(first) = missing.first() {
            self.errors.push(Failure {
                path: format!("{path}/{first}"),
                missing: None,
                message: format!("must have required properties {}", missing.join(", ")),
            });
        }
        let keys: Vec<String> = js::keys(obj).into_iter().cloned().collect();
        let props = s.get("properties").and_then(Value::as_object);
        let patterns = s.get("patternProperties").and_then(Value::as_object);
        if let Some(extra) = s.get("additionalProperties") {
            let additional: Vec<&String> = keys
                .iter()
                .filter(|k| !props.is_some_and(|p| p.contains_key(k.as_str())))
                .filter(|k| {
                    !patterns
                        .into_iter()
                        .flat_map(Map::keys)
                        .any(|p| self.matches(p, k))
                })
                .collect();
            for key in additional {
                match (extra, obj.get_mut(key)) {
                    (Value::Bool(false), _) => {
                        self.fail(path, "must NOT have additional properties")
                    }
                    (Value::Object(_), Some(value)) => self.node(extra, value, &child(path, key)),
                    _ => {}
                }
            }
        }
        if let Some(props) = props {
            for key in js::keys(props) {
                if let Some(value) = obj.get_mut(key.as_str()) {
                    self.node(&props[key.as_str()], value, &child(path, key));
                }
            }
        }
        for (pattern, sub) in patterns
            .into_iter()
            .flat_map(|p| js::keys(p).into_iter().map(move |k| (k, &p[k.as_str()])))
        {
            let matched: Vec<&String> = keys.iter().filter(|k| self.matches(pattern, k)).collect();
            for key in matched {
                if let Some(value) = obj.get_mut(key.as_str()) {
                    self.node(sub, value, &child(path, key));
                }
            }
        }
    }

    fn matches(&self, pattern: &str, text: &str) -> bool {
        self.regexes
            .get(pattern)
            .is_some_and(|re| re.is_match(text))
    }
}

/// The types a schema names (plus `null` for `nullable: true`), unknown names dropped.
fn schema_types(s: &Map<String, Value>) -> Vec<&str> {
    let mut types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    types.retain(|t| TYPES.split(' ').any(|known| known == *t));
    if !types.is_empty()
        && !types.contains(&"null")
        && s.get("nullable") == Some(&Value::Bool(true))
    {
        types.push("null");
    }
    types
}

/// The keywords of AJV's `array` or `object` group.
fn group_keywords(group: &str) -> &'static str {
    match group {
        "array" => ARRAY_KEYWORDS,
        "object" => OBJECT_KEYWORDS,
        _ => "",
    }
}

/// Whether the schema uses any of the space-separated `keywords`.
fn has_any(s: &Map<String, Value>, keywords: &str) -> bool {
    keywords.split_whitespace().any(|k| s.contains_key(k))
}

/// AJV's `alwaysValidSchema`: `true`, or an object without any keyword AJV implements.
fn always_valid(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(s) => ![ARRAY_KEYWORDS, OBJECT_KEYWORDS, OTHER_RULES]
            .iter()
            .any(|k| has_any(s, k)),
        _ => false,
    }
}

fn is_type(data: &Value, t: &str) -> bool {
    match (t, data) {
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|x| x.fract() == 0.0)
        }
        ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_)) => true,
        ("null", Value::Null) | ("object", Value::Object(_)) | ("array", Value::Array(_)) => true,
        _ => false,
    }
}

/// AJV's `coerceTypes: true` conversion of `data` to the type `to`, if it has one.
fn coerce(data: &Value, to: &str) -> Option<Value> {
    match (to, data) {
        ("string", Value::Number(n)) => Some(Value::String(js::number_text(n))),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("number" | "integer", Value::Bool(b)) => Some(Value::from(u8::from(*b))),
        ("number" | "integer", Value::Null) => Some(Value::from(0)),
        ("number" | "integer", Value::String(s)) if !s.is_empty() => {
            let x = js::to_number(s).filter(|x| to == "number" || x.fract() == 0.0)?;
            if x.fract() == 0.0 && x.abs() < 9.2e18 {
                Some(Value::from(x as i64))
            } else {
                Number::from_f64(x).map(Value::Number) // Infinity has no JSON form: left a type error
            }
        }
        ("boolean", Value::String(s)) if s == "true" || s == "false" => {
            Some(Value::Bool(s == "true"))
        }
        ("boolean", Value::Number(n)) if matches!(n.as_f64(), Some(x) if x == 0.0 || x == 1.0) => {
            Some(Value::Bool(n.as_f64() == Some(1.0)))
        }
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("null", Value::String(s)) if s.is_empty() => Some(Value::Null),
        ("null", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Null),
        ("null", Value::Bool(false)) => Some(Value::Null),
        _ => None,
    }
}

/// A JSON-pointer child path, escaping `~` and `/` as AJV does.
fn child(path: &str, segment: &str) -> String {
    format!("{path}/{}", segment.replace('~', "~0").replace('/', "~1"))
}

/// Compiles every `pattern` and `patternProperties` key up front, as AJV compiles the whole schema.
fn compile_patterns(schema: &Value, out: &mut HashMap<String, Regex>) -> Result<(), String> {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("enum" | "const" | "default" | "examples", _) => {}
                    ("pattern", Value::String(pattern)) => compile_pattern(pattern, out)?,
                    ("patternProperties", Value::Object(patterns)) => {
                        for (pattern, sub) in patterns {
                            compile_pattern(pattern, out)?;
                            compile_patterns(sub, out)?;
                        }
                    }
                    _ => compile_patterns(value, out)?,
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| compile_patterns(item, out))?,
        _ => {}
    }
    Ok(())
}

/// Compiles one pattern; JS-only syntax the regex crate lacks (look-around, back-references) is left
/// out of `out` and so not enforced, rather than making every call to the tool fail.
fn compile_pattern(pattern: &str, out: &mut HashMap<String, Regex>) -> Result<(), String> {
    if out.contains_key(pattern) {
        return Ok(());
    }
    match Regex::new(&js::regex_source(pattern)) {
        Ok(regex) => {
            out.insert(pattern.to_owned(), regex);
            Ok(())
        }
        Err(e) => {
            let text = e.to_string();
            let reason = text
                .lines()
                .last()
                .unwrap_or_default()
                .trim_start_matches("error: ");
            if reason.contains("not supported") {
                return Ok(());
            }
            Err(format!(
                "Invalid regular expression: /{pattern}/u: {reason}"
            ))
        }
    }
}

/// JavaScript's value semantics where pi's text depends on them: `Number()`, number printing,
/// `JSON.stringify`, property order, deep equality, and `u`-mode regular expressions.
mod js;

#[cfg(test)]
mod tests;
