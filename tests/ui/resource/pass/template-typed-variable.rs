use std::net::Ipv4Addr;
use std::str::FromStr;

use mcp_runtime::resource;

/// A note by number: ids that do not parse as `u64` do not match.
#[resource("memo://notes/{id}")]
fn note(id: u64) -> Option<String> {
    (id < 3).then(|| format!("Note {id}"))
}

/// Several variables of different types, with literal text between them.
#[resource("repo://{owner}/{name}/issues/{number}.json")]
fn issue(owner: String, name: String, number: u32) -> String {
    format!("{owner}/{name}#{number}")
}

/// A standard library `FromStr` type.
#[resource("net://hosts/{address}")]
fn host(address: Ipv4Addr) -> String {
    address.to_string()
}

enum Color {
    Red,
    Green,
}

impl FromStr for Color {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "red" => Ok(Color::Red),
            "green" => Ok(Color::Green),
            other => Err(format!("no color {other}")),
        }
    }
}

/// A local type implementing `FromStr`.
#[resource("paint://colors/{color}")]
fn color(color: Color) -> &'static str {
    match color {
        Color::Red => "#f00",
        Color::Green => "#0f0",
    }
}

/// A raw identifier matches the variable without `r#`; `mut` only affects
/// the body; `#[ctx]` parameters are not variables.
#[resource("kw://{type}/{count}")]
fn keyword(r#type: String, mut count: u8, #[ctx] ctx: &mcp_runtime::Context) -> String {
    count = count.saturating_add(1);
    format!("{type} {count} {}", ctx.method(), type = r#type)
}

/// A variable renamed with `#[arg(rename = "...")]`.
#[resource("memo://tags/{tagName}")]
fn tag(#[arg(rename = "tagName")] tag_name: String) -> String {
    tag_name
}

fn main() {}
