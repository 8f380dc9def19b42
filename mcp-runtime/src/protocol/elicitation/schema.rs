//! The primitive field schemas an elicitation form may use (`$defs/PrimitiveSchemaDefinition`).

use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use super::{
    LegacyTitledEnumSchema, TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
};

use super::super::notifications::number;

/// The properties of a form, name to schema, in the order they were given.
///
/// Serialized as a JSON object; kept as a list because clients show fields in this order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ElicitProperties(pub Vec<(String, PrimitiveSchemaDefinition)>);

impl Serialize for ElicitProperties {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, schema)| (name, schema)))
    }
}

impl<'de> Deserialize<'de> for ElicitProperties {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PropertiesVisitor;
        impl<'de> Visitor<'de> for PropertiesVisitor {
            type Value = ElicitProperties;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of property schemas")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut properties = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some(entry) = map.next_entry()? {
                    properties.push(entry);
                }
                Ok(ElicitProperties(properties))
            }
        }
        deserializer.deserialize_map(PropertiesVisitor)
    }
}

/// The schema of one form field (`$defs/PrimitiveSchemaDefinition`).
///
/// Untagged: the variants are tried in the order below, most specific first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// A single choice with display titles (`oneOf`).
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// A single choice with legacy `enumNames` (only chosen when `enumNames` is present).
    #[serde(deserialize_with = "legacy_with_names")]
    LegacyTitled(LegacyTitledEnumSchema),
    /// A single choice of plain values (`enum`).
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// A string.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// Several choices with display titles (`items.anyOf`).
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// Several choices of plain values (`items.enum`).
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
}

/// Reads a [`LegacyTitledEnumSchema`] only if it has `enumNames`; otherwise it is untitled.
fn legacy_with_names<'de, D: Deserializer<'de>>(deserializer: D) -> Result<LegacyTitledEnumSchema, D::Error> {
    let schema = LegacyTitledEnumSchema::deserialize(deserializer)?;
    match schema.enum_names {
        Some(_) => Ok(schema),
        None => Err(D::Error::custom("no enumNames: not a legacy titled enum")),
    }
}

/// A string field (`$defs/StringSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Always `"string"`.
    pub r#type: StringType,
    /// Field label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// A format the value must have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The formats a [`StringSchema`] may require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// An email address.
    Email,
    /// A URI.
    Uri,
    /// A date (`YYYY-MM-DD`).
    Date,
    /// A date and time (RFC 3339).
    DateTime,
}

/// A number field (`$defs/NumberSchema`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    pub r#type: NumberType,
    /// Field label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum value.
    #[serde(serialize_with = "number::option_f64", skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    /// Maximum value.
    #[serde(serialize_with = "number::option_f64", skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    /// Default value.
    #[serde(serialize_with = "number::option_f64", skip_serializing_if = "Option::is_none")]
    pub default: Option<f64>,
}

/// A boolean field (`$defs/BooleanSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    pub r#type: BooleanType,
    /// Field label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// The `"string"` type tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StringType {
    /// `"string"`.
    #[default]
    String,
}

/// The type tag of a [`NumberSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// `"number"`.
    #[default]
    Number,
    /// `"integer"`.
    Integer,
}

/// The `"boolean"` type tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BooleanType {
    /// `"boolean"`.
    #[default]
    Boolean,
}

/// The `"array"` type tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArrayType {
    /// `"array"`.
    #[default]
    Array,
}

/// The `"object"` type tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectType {
    /// `"object"`.
    #[default]
    Object,
}
