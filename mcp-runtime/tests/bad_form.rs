//! A form type that escapes the derive's compile-time check (a hand-written
//! `ElicitForm` impl over a nested struct): the server must refuse to start
//! and name the handler, the parameter and the type.

use mcp_runtime::{ElicitForm, Elicitation, tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Address {
    street: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Profile {
    name: String,
    address: Address,
}

// Skips the derive, and with it the check of each field.
impl ElicitForm for Profile {}

/// Asks for a profile.
#[tool]
fn register(#[elicit("Who are you?")] profile: Elicitation<Profile>) -> String {
    match profile {
        Elicitation::Accepted(profile) => format!("{} at {}", profile.name, profile.address.street),
        _ => String::new(),
    }
}

#[test]
fn non_flat_forms_are_refused_at_startup() {
    let error = mcp_runtime::ServerBuilder::new("bad", "0.0.0")
        .build()
        .expect_err("a nested form must not build");
    assert_eq!(
        error.to_string(),
        "`register` (at mcp-runtime/tests/bad_form.rs:23): `#[elicit]` parameter `profile`: `bad_form::Profile` cannot be an elicitation form: field `address` has type `object`; forms are flat objects of strings, numbers, integers, booleans and enums"
    );
}
