use mcp_runtime::resource;

/// The English readme.
#[resource("memo://readme/en", name = "readme")]
fn readme_en() -> &'static str {
    "# Readme"
}

/// The French readme.
#[resource("memo://readme/fr", name = "readme")]
fn readme_fr() -> &'static str {
    "# Lisez-moi"
}

fn main() {}
