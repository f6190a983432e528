//! The Agent Skills format as the MCP Skills extension serves it
//! (`io.modelcontextprotocol/skills`, SEP-2640): what `mcp-runtime`'s
//! `skills!` macro checks at compile time, and what the runtime checks for
//! skills loaded while a server runs and a client for what a server sent.
//! One implementation, so that the three cannot disagree.
//!
//! Not a stable API: use it through `mcp-runtime`, which is released with it.

mod frontmatter;
mod names;
mod tree;

use sha2::{Digest, Sha256};

pub use self::frontmatter::{frontmatter_block, frontmatter_fields, parse_frontmatter};
pub use self::names::{check_file_path, check_name, check_skill_path};
pub use self::tree::{PlanError, PlannedSkill, plan};

/// The file that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// The most files one skill may have, `SKILL.md` included (the SEP's
/// limit, which the conformance suite checks).
pub const MAX_FILES: usize = 512;

/// The most bytes one skill's files may hold together: 16 MiB.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The longest `description` the Agent Skills specification allows.
pub const MAX_DESCRIPTION: usize = 1024;

/// `sha256:` and the 64 lowercase hexadecimal digits of the SHA-256 of
/// `bytes`: a skill file's digest.
pub fn digest(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash.iter() {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

/// The media type a skill file is served with, from its extension:
/// `text/markdown` for `SKILL.md` and other Markdown, the usual types of
/// scripts, data and images, and `application/octet-stream` otherwise.
pub fn mime_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => extension.to_ascii_lowercase(),
        _ => {
            return if name == "Makefile" {
                "text/x-makefile"
            } else {
                "application/octet-stream"
            };
        }
    };
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "sql" => "application/sql",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Whether a file of type `mime` with these bytes is served as `text`
/// (UTF-8 of a textual type) rather than as a base64 `blob`.
pub fn is_text(mime: &str, bytes: &[u8]) -> bool {
    let textual = mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/yaml"
                | "application/toml"
                | "application/xml"
                | "application/sql"
                | "image/svg+xml"
        );
    textual && std::str::from_utf8(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn types_follow_the_extension() {
        assert_eq!(mime_type("a/SKILL.md"), "text/markdown");
        assert_eq!(mime_type("a/scripts/run.PY"), "text/x-python");
        assert_eq!(mime_type("a/.hidden"), "application/octet-stream");
        assert_eq!(mime_type("a/blob"), "application/octet-stream");
        assert!(is_text("text/markdown", b"# hi"));
        assert!(!is_text("text/markdown", &[0xff, 0xfe]));
        assert!(!is_text("image/png", b"png"));
    }
}
