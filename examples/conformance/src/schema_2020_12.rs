//! `json_schema_2020_12_tool` (pending scenario `json-schema-2020-12`): a
//! tool whose input schema is hand-written JSON Schema 2020-12, published
//! exactly as written (`$schema`, `$defs` with an `$anchor`, composition
//! and conditional keywords) through `#[tool(input_schema = ...)]`.

use mcp_runtime::tool;
use serde_json::{Value, json};

/// The schema, as the suite expects it.
fn contact_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {
            "properties": {"contactMethod": {"const": "phone"}},
            "required": ["contactMethod"]
        },
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// An address, as `$defs.address` describes it.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// How to reach someone.
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum ContactMethod {
    Phone,
    Email,
}

/// Records a contact; its input schema is hand-written JSON Schema 2020-12.
#[tool(input_schema = contact_schema, annotations(read_only, open_world = false))]
fn json_schema_2020_12_tool(
    name: Option<String>,
    address: Option<Address>,
    #[arg(rename = "contactMethod")] contact_method: Option<ContactMethod>,
    phone: Option<String>,
    email: Option<String>,
) -> Result<String, String> {
    let reach = match contact_method {
        Some(ContactMethod::Phone) => {
            phone.ok_or("contactMethod is phone, but no phone was given")?
        }
        Some(ContactMethod::Email) | None => email.or(phone).ok_or("give a phone or an email")?,
    };
    let city = address
        .and_then(|a| a.city.or(a.street))
        .unwrap_or_default();
    Ok(format!("{} at {reach} {city}", name.unwrap_or_default())
        .trim()
        .to_owned())
}
