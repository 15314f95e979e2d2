//! A generic elicitation form (any `requestedSchema` not shaped like Claude's question forms) as
//! typed fields, and the check of what the person filled in before it is sent: the agent gets
//! only content its own schema accepts (types, required fields, lengths, bounds, item counts).
//!
//! The schema is MCP's restricted JSON Schema that ACP adopted: a flat object of string (plain,
//! `enum` or `oneOf`), number, integer, boolean and array-of-choices properties. A property of any
//! other type (a nested object) makes the whole form unreadable ([`FormError`], naming the field):
//! askpane refuses it rather than send content that leaves a field out. `format` `email`, `uri`,
//! `date` and `date-time` are checked ([`rules::format`]); `pattern` is shown, not enforced
//! (askpane carries no regular-expression engine; the agent checks its own).

use serde_json::{Map, Number, Value};

use super::{entries, text};

/// One choice of an enum field: the value sent and the title shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldChoice {
    pub value: String,
    pub title: String,
    pub description: Option<String>,
}

/// What a field holds, with its bounds and default.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldKind {
    Text {
        min_length: Option<u64>,
        max_length: Option<u64>,
        /// Shown as a hint; not enforced (see the module's note).
        pattern: Option<String>,
        /// Checked when askpane knows it ([`rules::format`]), else shown.
        format: Option<String>,
        default: Option<String>,
    },
    /// One of these (`enum` or `oneOf`).
    Choice {
        choices: Vec<FieldChoice>,
        default: Option<String>,
    },
    /// Any of these (`array` of `enum` or `anyOf`).
    Choices {
        choices: Vec<FieldChoice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
        default: Vec<String>,
    },
    Boolean {
        default: Option<bool>,
    },
    /// A number; `integer` allows only whole numbers.
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
        default: Option<f64>,
    },
}

impl FieldKind {
    /// True when a field of this kind holds `value`'s kind of value (text for a text or one
    /// choice, a yes/no, a number as typed, several choices); its bounds are not checked here.
    pub fn takes(&self, value: &FieldValue) -> bool {
        matches!(
            (self, value),
            (FieldKind::Text { .. } | FieldKind::Choice { .. }, FieldValue::Text(_))
                | (FieldKind::Choices { .. }, FieldValue::Choices(_))
                | (FieldKind::Boolean { .. }, FieldValue::Boolean(_))
                | (FieldKind::Number { .. }, FieldValue::Number(_))
        )
    }
}

/// One field of the form.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The property name: the key of its value in the reply's `content`.
    pub key: String,
    /// The title shown (the key when the schema gives none).
    pub title: String,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
}

/// A form to fill in.
#[derive(Clone, Debug, PartialEq)]
pub struct Form {
    pub title: Option<String>,
    pub description: Option<String>,
    pub fields: Vec<Field>,
}

/// Why a schema cannot be shown as a form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    #[error("the form's schema is not an object with `properties`")]
    NotObject,
    #[error("field `{key}` has a type askpane cannot show ({found})")]
    UnknownType { key: String, found: String },
    #[error("field `{key}` offers no choices")]
    NoChoices { key: String },
}

/// What the person gave for one field. Serialisable: a form's draft keeps it (a crash, a
/// restart: nothing typed is lost).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum FieldValue {
    Text(String),
    Boolean(bool),
    /// As typed; parsed and checked by [`Form::content`].
    Number(String),
    Choices(Vec<String>),
}

/// Why a filled-in form cannot be sent yet: the field and what is wrong, for the person.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{title}: {problem}")]
pub struct FieldError {
    pub key: String,
    pub title: String,
    pub problem: String,
}

fn number(value: Option<&Value>) -> Option<f64> {
    value.and_then(Value::as_f64)
}

fn count(value: Option<&Value>) -> Option<u64> {
    value.and_then(Value::as_u64)
}

/// `enum: [..]` or `oneOf`/`anyOf: [{const, title, description}]`.
fn choices(property: &Value, one_of: &str) -> Option<Vec<FieldChoice>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let titles = property.get("enumNames").and_then(Value::as_array);
        let choices = values.iter().enumerate().filter_map(|(at, value)| {
            let value = value.as_str()?.to_owned();
            let title = titles.and_then(|titles| titles.get(at)).and_then(Value::as_str);
            let title = title.map_or_else(|| value.clone(), str::to_owned);
            Some(FieldChoice { value, title, description: None })
        });
        return Some(choices.collect());
    }
    let listed = property.get(one_of).and_then(Value::as_array)?;
    let choices = listed.iter().filter_map(|choice| {
        let value = text(choice, "const")?;
        let title = text(choice, "title").unwrap_or_else(|| value.clone());
        Some(FieldChoice { value, title, description: text(choice, "description") })
    });
    Some(choices.collect())
}

fn kind(key: &str, property: &Value) -> Result<FieldKind, FormError> {
    let found = property.get("type").and_then(Value::as_str).unwrap_or_default();
    let no_choices = || FormError::NoChoices { key: key.to_owned() };
    let kind = match found {
        "string" => match choices(property, "oneOf") {
            Some(choices) if choices.is_empty() => return Err(no_choices()),
            Some(choices) => FieldKind::Choice { choices, default: text(property, "default") },
            None => FieldKind::Text {
                min_length: count(property.get("minLength")),
                max_length: count(property.get("maxLength")),
                pattern: text(property, "pattern"),
                format: text(property, "format"),
                default: text(property, "default"),
            },
        },
        "number" | "integer" => FieldKind::Number {
            integer: found == "integer",
            minimum: number(property.get("minimum")),
            maximum: number(property.get("maximum")),
            default: number(property.get("default")),
        },
        "boolean" => {
            FieldKind::Boolean { default: property.get("default").and_then(Value::as_bool) }
        }
        "array" => {
            let items = property.get("items").unwrap_or(&Value::Null);
            let choices = choices(items, "anyOf").filter(|choices| !choices.is_empty());
            let defaults = property.get("default").and_then(Value::as_array);
            let default = defaults.map(Vec::as_slice).unwrap_or_default();
            FieldKind::Choices {
                choices: choices.ok_or_else(no_choices)?,
                min_items: count(property.get("minItems")),
                max_items: count(property.get("maxItems")),
                default: default.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            }
        }
        other => {
            return Err(FormError::UnknownType { key: key.to_owned(), found: other.to_owned() });
        }
    };
    Ok(kind)
}

impl Form {
    /// Reads a `requestedSchema`.
    pub fn parse(schema: &Value) -> Result<Form, FormError> {
        let properties = schema.get("properties").filter(|p| p.is_object());
        if properties.is_none() {
            return Err(FormError::NotObject);
        }
        let required = schema.get("required").and_then(Value::as_array);
        let required: Vec<&str> = required
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let fields = entries(properties)
            .map(|(key, property)| {
                Ok(Field {
                    key: key.clone(),
                    title: text(property, "title").unwrap_or_else(|| key.clone()),
                    description: text(property, "description"),
                    required: required.contains(&key.as_str()),
                    kind: kind(key, property)?,
                })
            })
            .collect::<Result<Vec<Field>, FormError>>()?;
        Ok(Form { title: text(schema, "title"), description: text(schema, "description"), fields })
    }

    /// Each field's default as a starting value (`None`: the field starts empty).
    pub fn defaults(&self) -> Vec<Option<FieldValue>> {
        let default = |field: &Field| match &field.kind {
            FieldKind::Text { default, .. } | FieldKind::Choice { default, .. } => {
                default.clone().map(FieldValue::Text)
            }
            FieldKind::Choices { default, .. } => {
                (!default.is_empty()).then(|| FieldValue::Choices(default.clone()))
            }
            FieldKind::Boolean { default } => default.map(FieldValue::Boolean),
            FieldKind::Number { default, .. } => {
                default.map(|number| FieldValue::Number(format_number(number)))
            }
        };
        self.fields.iter().map(default).collect()
    }

    /// The reply's `content` for what the person filled in (one value per field, in field
    /// order; `None` or an empty text leaves the field out), or every field that is wrong.
    pub fn content(
        &self,
        values: &[Option<FieldValue>],
    ) -> Result<Map<String, Value>, Vec<FieldError>> {
        let mut content = Map::new();
        let mut errors = Vec::new();
        for (at, field) in self.fields.iter().enumerate() {
            let value = values.get(at).cloned().flatten();
            match field_value(field, value) {
                Ok(Some(value)) => {
                    content.insert(field.key.clone(), value);
                }
                Ok(None) if field.required => errors.push(problem(field, "required".into())),
                Ok(None) => {}
                Err(message) => errors.push(problem(field, message)),
            }
        }
        match errors.is_empty() {
            true => Ok(content),
            false => Err(errors),
        }
    }
}

fn problem(field: &Field, problem: String) -> FieldError {
    FieldError { key: field.key.clone(), title: field.title.clone(), problem }
}

/// A whole number without its `.0`; any other as Rust prints it.
fn format_number(number: f64) -> String {
    match Number::from_f64(number) {
        Some(_) if number.fract() == 0.0 && number.abs() < 9.0e15 => format!("{number:.0}"),
        _ => number.to_string(),
    }
}

/// One field's JSON value (`None`: left empty), or what is wrong with it: the first rule it
/// breaks, in the order the person reads them (the type, then each bound).
fn field_value(field: &Field, value: Option<FieldValue>) -> Result<Option<Value>, String> {
    let value = match value {
        None => return Ok(None),
        Some(FieldValue::Text(text)) if text.is_empty() => return Ok(None),
        Some(FieldValue::Number(text)) if text.trim().is_empty() => return Ok(None),
        Some(FieldValue::Choices(picked)) if picked.is_empty() => return Ok(None),
        Some(value) => value,
    };
    match (&field.kind, value) {
        (FieldKind::Text { min_length, max_length, format, .. }, FieldValue::Text(text)) => {
            rules::min_length(&text, *min_length)?;
            rules::max_length(&text, *max_length)?;
            if let Some(format) = format {
                rules::format(&text, format)?;
            }
            Ok(Some(Value::String(text)))
        }
        (FieldKind::Choice { choices, .. }, FieldValue::Text(text)) => {
            rules::one_of(&text, choices)?;
            Ok(Some(Value::String(text)))
        }
        (FieldKind::Choices { choices, min_items, max_items, .. }, FieldValue::Choices(picked)) => {
            for item in &picked {
                rules::one_of(item, choices)?;
            }
            rules::min_items(picked.len(), *min_items)?;
            rules::max_items(picked.len(), *max_items)?;
            Ok(Some(Value::Array(picked.into_iter().map(Value::String).collect())))
        }
        (FieldKind::Boolean { .. }, FieldValue::Boolean(yes)) => Ok(Some(Value::Bool(yes))),
        (FieldKind::Number { integer, minimum, maximum, .. }, FieldValue::Number(typed)) => {
            let typed = typed.trim();
            let parsed = rules::number(typed)?;
            if *integer {
                rules::whole(typed, parsed)?;
            }
            rules::minimum(parsed, *minimum)?;
            rules::maximum(parsed, *maximum)?;
            // An integer goes as a JSON integer, a number as typed when it is whole and fits
            // (`3`, not `3.0`), else as the float.
            let value = match typed.parse::<i64>() {
                Ok(whole) => Value::Number(whole.into()),
                Err(_) if *integer => Value::Number((parsed as i64).into()),
                Err(_) => Number::from_f64(parsed).map_or(Value::Null, Value::Number),
            };
            Ok(Some(value))
        }
        _ => Err("a value of the wrong kind".into()),
    }
}

/// The rules a filled-in value is checked by, one pure function each: `Err` is the message the
/// person reads next to the field.
pub mod rules {
    use super::{FieldChoice, format_number};

    pub fn min_length(text: &str, min: Option<u64>) -> Result<(), String> {
        match min {
            Some(min) if (text.chars().count() as u64) < min => {
                Err(format!("at least {min} characters"))
            }
            _ => Ok(()),
        }
    }

    pub fn max_length(text: &str, max: Option<u64>) -> Result<(), String> {
        match max {
            Some(max) if (text.chars().count() as u64) > max => {
                Err(format!("at most {max} characters"))
            }
            _ => Ok(()),
        }
    }

    /// `email`, `uri`, `date` (and `date-time`) as the schema names them; a format askpane
    /// does not know is shown, not checked (the agent checks its own).
    pub fn format(text: &str, format: &str) -> Result<(), String> {
        let fits = match format {
            "email" => email(text),
            "uri" => uri(text),
            "date" => date(text),
            "date-time" => text.get(..10).is_some_and(date) && text.len() > 11,
            _ => true,
        };
        match fits {
            true => Ok(()),
            false => Err(format!("not a valid {format}")),
        }
    }

    /// `local@domain.tld`, no spaces: what a person types as an address.
    fn email(text: &str) -> bool {
        let Some((local, domain)) = text.split_once('@') else { return false };
        !local.is_empty()
            && !domain.contains('@')
            && domain.split('.').count() >= 2
            && domain.split('.').all(|part| !part.is_empty())
            && !text.chars().any(char::is_whitespace)
    }

    /// `scheme:rest` (RFC 3986's scheme: a letter, then letters, digits, `+`, `-`, `.`).
    fn uri(text: &str) -> bool {
        let Some((scheme, rest)) = text.split_once(':') else { return false };
        let mut chars = scheme.chars();
        chars.next().is_some_and(|first| first.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && !rest.is_empty()
            && !text.chars().any(char::is_whitespace)
    }

    /// `YYYY-MM-DD`, a day that exists.
    fn date(text: &str) -> bool {
        let parts: Vec<&str> = text.split('-').collect();
        let [year, month, day] = parts.as_slice() else { return false };
        let digits = |part: &str, len: usize| {
            part.len() == len && part.bytes().all(|byte| byte.is_ascii_digit())
        };
        if !(digits(year, 4) && digits(month, 2) && digits(day, 2)) {
            return false;
        }
        let (Ok(year), Ok(month), Ok(day)) =
            (year.parse::<u32>(), month.parse::<u32>(), day.parse::<u32>())
        else {
            return false;
        };
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return false,
        };
        (1..=days).contains(&day)
    }

    pub fn one_of(text: &str, choices: &[FieldChoice]) -> Result<(), String> {
        match choices.iter().any(|choice| choice.value == text) {
            true => Ok(()),
            false => Err(format!("`{text}` is not one of the choices")),
        }
    }

    pub fn min_items(count: usize, min: Option<u64>) -> Result<(), String> {
        match min {
            Some(min) if (count as u64) < min => Err(format!("pick at least {min}")),
            _ => Ok(()),
        }
    }

    pub fn max_items(count: usize, max: Option<u64>) -> Result<(), String> {
        match max {
            Some(max) if (count as u64) > max => Err(format!("pick at most {max}")),
            _ => Ok(()),
        }
    }

    /// A finite number as typed (`1e3`, `-2.5`).
    pub fn number(typed: &str) -> Result<f64, String> {
        match typed.parse::<f64>() {
            Ok(parsed) if parsed.is_finite() => Ok(parsed),
            _ => Err(format!("`{typed}` is not a number")),
        }
    }

    pub fn whole(typed: &str, parsed: f64) -> Result<(), String> {
        match parsed.fract() == 0.0 && parsed.abs() < 9.0e15 {
            true => Ok(()),
            false => Err(format!("`{typed}` is not a whole number")),
        }
    }

    pub fn minimum(parsed: f64, min: Option<f64>) -> Result<(), String> {
        match min {
            Some(min) if parsed < min => Err(format!("at least {}", format_number(min))),
            _ => Ok(()),
        }
    }

    pub fn maximum(parsed: f64, max: Option<f64>) -> Result<(), String> {
        match max {
            Some(max) if parsed > max => Err(format!("at most {}", format_number(max))),
            _ => Ok(()),
        }
    }
}
