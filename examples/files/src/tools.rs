//! `search`, `tree` and `write_file`: every one bounded, every path
//! checked, every file opened as a regular file or not at all, and the
//! file system touched only on the blocking pool (`search` and `tree` are
//! `blocking`; `write_file` awaits the user, then writes with
//! `run_blocking`).

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::{Read as _, Write as _};
use std::path::Path;

use mcp_runtime::files::{is_not_regular, open_regular};
use mcp_runtime::{ElicitForm, Elicitation, Input, Json, State, run_blocking, tool};
use serde::Serialize;

use super::Files;
use super::read::MAX_READ_BYTES;

/// The most files one search looks at.
const SEARCH_FILES: usize = 10_000;
/// The most file content one search reads, in bytes.
const SEARCH_BYTES: u64 = 64 * 1024 * 1024;
/// The most entries `tree` shows.
const TREE_ENTRIES: usize = 500;

/// One match of a search.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Match {
    /// The file, relative to the directory.
    path: String,
    /// Its URI, to read it with.
    uri: String,
    /// The line that matched (1-based), for a match in the content.
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<usize>,
    /// That line, cut to 200 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

/// What a search found.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Found {
    matches: Vec<Match>,
    /// Files looked at.
    files_searched: usize,
    /// Whether the search stopped at a bound (matches, files or bytes)
    /// before looking at everything.
    incomplete: bool,
}

/// Finds files whose name, or whose text, contains `query` (ignoring
/// case). Bounded: at most `limit` matches, 10,000 files, the first MiB of
/// each file and 64 MiB in all.
#[tool(annotations(read_only, open_world = false), blocking)]
fn search(
    /// The text to look for.
    query: String,
    /// Also look inside text files (default true).
    content: Option<bool>,
    /// The most matches to return (default 50, at most 200).
    limit: Option<usize>,
    #[ctx] files: State<Files>,
) -> Result<Json<Found>, String> {
    if query.trim().is_empty() || query.len() > 256 {
        return Err("give a query of 1 to 256 characters".into());
    }
    let needle = query.to_lowercase();
    let limit = limit.unwrap_or(50).clamp(1, 200);
    let mut found = Found {
        matches: Vec::new(),
        files_searched: 0,
        incomplete: false,
    };
    let mut budget = SEARCH_BYTES;
    let walk = walkdir::WalkDir::new(files.root())
        .follow_links(false)
        .sort_by_file_name();
    for entry in walk.into_iter().filter_map(Result::ok) {
        if !entry.file_type().is_file() {
            continue;
        }
        if found.matches.len() >= limit || found.files_searched >= SEARCH_FILES || budget == 0 {
            found.incomplete = true;
            break;
        }
        found.files_searched += 1;
        let path = entry.path();
        let relative = files.relative(path);
        let uri = mcp_runtime::files::file_uri(path);
        if relative.to_lowercase().contains(&needle) {
            found.matches.push(Match {
                path: relative.clone(),
                uri: uri.clone(),
                line: None,
                text: None,
            });
        }
        if content.unwrap_or(true) {
            let left = limit - found.matches.len();
            let lines = matching_lines(path, &needle, &mut budget, left);
            found
                .matches
                .extend(lines.into_iter().map(|(line, text)| Match {
                    path: relative.clone(),
                    uri: uri.clone(),
                    line: Some(line),
                    text: Some(text),
                }));
        }
    }
    Ok(Json(found))
}

/// The lines of the text file at `path` that contain `needle`, reading at
/// most its first MiB and what is left of `budget`.
fn matching_lines(
    path: &Path,
    needle: &str,
    budget: &mut u64,
    most: usize,
) -> Vec<(usize, String)> {
    let mut bytes = Vec::new();
    let allowed = (*budget).min(MAX_READ_BYTES);
    // A file swapped for a FIFO since the walk saw it is skipped, not
    // waited on.
    let read = open_regular(path, OpenOptions::new().read(true))
        .and_then(|file| file.take(allowed).read_to_end(&mut bytes));
    let Ok(read) = read else {
        return Vec::new();
    };
    *budget -= read as u64;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Vec::new();
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| line.to_lowercase().contains(needle))
        .take(most)
        .map(|(index, line)| (index + 1, line.chars().take(200).collect()))
        .collect()
}

/// Shows the directory's layout: directories end with `/`, files show
/// their size. At most 500 entries.
#[tool(annotations(read_only, open_world = false), blocking)]
fn tree(
    /// The directory to show, relative to the served one (default: all of
    /// it).
    path: Option<String>,
    /// How many levels deep (default 3, at most 8).
    depth: Option<usize>,
    #[ctx] files: State<Files>,
) -> Result<String, String> {
    let start = files.resolve(path.as_deref().unwrap_or("."))?;
    if !start.as_path().is_dir() {
        return Err(format!(
            "{} is not a directory",
            files.relative(start.as_path())
        ));
    }
    let depth = depth.unwrap_or(3).clamp(1, 8);
    let walk = walkdir::WalkDir::new(start.as_path())
        .follow_links(false)
        .min_depth(1)
        .max_depth(depth)
        .sort_by_file_name();
    let mut out = String::new();
    for (shown, entry) in walk.into_iter().filter_map(Result::ok).enumerate() {
        if shown == TREE_ENTRIES {
            out.push_str("... (more entries not shown)\n");
            break;
        }
        let indent = "  ".repeat(entry.depth() - 1);
        let name = entry.file_name().to_string_lossy();
        let _ = match entry.metadata() {
            Ok(meta) if meta.is_dir() => writeln!(out, "{indent}{name}/"),
            Ok(meta) if entry.path_is_symlink() => {
                writeln!(out, "{indent}{name} -> (link, {} bytes)", meta.len())
            }
            Ok(meta) => writeln!(out, "{indent}{name} ({} bytes)", meta.len()),
            Err(_) => writeln!(out, "{indent}{name}"),
        };
    }
    if out.is_empty() {
        out.push_str("(empty)\n");
    }
    Ok(out)
}

/// The confirmation `write_file` asks for.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
struct Confirm {
    /// Write it?
    confirm: bool,
}

/// Writes a text file under the served directory (creating missing
/// directories), once the user confirms. Paths that leave the directory
/// are refused before anyone is asked.
#[tool(annotations(destructive, idempotent, open_world = false))]
async fn write_file(
    /// Where, relative to the served directory (or a file:// URI inside it).
    path: String,
    /// The whole new contents, as UTF-8 text (at most 1 MiB).
    content: String,
    #[ctx] input: Input,
    #[ctx] files: State<Files>,
) -> Result<String, String> {
    let target = files.resolve(&path)?;
    if content.len() as u64 > MAX_READ_BYTES {
        return Err(format!(
            "the contents are {} bytes; at most {MAX_READ_BYTES}",
            content.len()
        ));
    }
    // `symlink_metadata` does not open the file: a FIFO is refused before
    // anyone is asked (and `write_to` refuses one swapped in later).
    let existing = std::fs::symlink_metadata(target.as_path()).ok();
    match existing.as_ref() {
        Some(metadata) if metadata.is_dir() => return Err(format!("{path} is a directory")),
        Some(metadata) if !metadata.is_file() => {
            return Err(format!("{path} is not a regular file"));
        }
        _ => {}
    }
    let relative = files.relative(target.as_path());
    let exists = existing.is_some();
    let question = match exists {
        true => format!("Overwrite {relative} with {} bytes?", content.len()),
        false => format!("Create {relative} ({} bytes)?", content.len()),
    };
    match input.elicit::<Confirm>(question).await {
        Elicitation::Accepted(Confirm { confirm: true }) => {}
        Elicitation::Accepted(_) | Elicitation::Declined => {
            return Err(format!("{relative} was not written: the user said no"));
        }
        _ => return Err(format!("{relative} was not written: the user cancelled")),
    }
    let length = content.len();
    let written = target.into_path_buf();
    let (path, named) = (written.clone(), relative.clone());
    run_blocking(move || write_to(&path, &named, content.as_bytes())).await?;
    files.changed(&written);
    let verb = if exists { "overwrote" } else { "created" };
    Ok(format!("{verb} {relative} ({length} bytes)"))
}

/// Writes `content` to the regular file at `path` (shown as `relative`),
/// creating it and its missing directories. Blocks: run it on the blocking
/// pool. Truncates only once the opened file is known to be regular.
fn write_to(path: &Path, relative: &str, content: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {relative}: {error}"))?;
    }
    let mut file =
        open_regular(path, OpenOptions::new().write(true).create(true)).map_err(|error| {
            match is_not_regular(&error) {
                true => format!("{relative} is not a regular file"),
                false => format!("cannot write {relative}: {error}"),
            }
        })?;
    file.set_len(0)
        .and_then(|()| file.write_all(content))
        .map_err(|error| format!("cannot write {relative}: {error}"))
}
