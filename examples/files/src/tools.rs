//! `search`, `tree` and `write_file`: every one bounded, every file opened
//! beneath the directory's handle (as a regular file with one link, or not
//! at all), and the file system touched only on the blocking pool
//! (`search` and `tree` are `blocking`; `write_file` awaits the user, then
//! writes with `run_blocking`).

use std::fmt::Write as _;
use std::io::Read as _;

use mcp_runtime::files::{Entry, PathError};
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
/// case). Bounded: at most `limit` matches, 10,000 files 16 levels deep,
/// the first MiB of each file and 64 MiB in all.
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
    let walk = files
        .dirs()
        .walk(".", super::MAX_WALK_DEPTH)
        .map_err(|e| e.to_string())?;
    for entry in walk.filter_map(Result::ok).filter(Entry::is_file) {
        if found.matches.len() >= limit || found.files_searched >= SEARCH_FILES || budget == 0 {
            found.incomplete = true;
            break;
        }
        found.files_searched += 1;
        let relative = entry.relative().to_string_lossy().into_owned();
        let uri = entry.uri();
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
            let lines = matching_lines(&entry, &needle, &mut budget, left);
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

/// The lines of the text file `entry` that contain `needle`, reading at
/// most its first MiB and what is left of `budget`.
fn matching_lines(
    entry: &Entry,
    needle: &str,
    budget: &mut u64,
    most: usize,
) -> Vec<(usize, String)> {
    let mut bytes = Vec::new();
    let allowed = (*budget).min(MAX_READ_BYTES);
    // A file swapped for a FIFO, a link or a hard link since the walk saw
    // it is skipped, not waited on nor followed out.
    let Ok(file) = entry.open() else {
        return Vec::new();
    };
    let Ok(read) = file.take(allowed).read_to_end(&mut bytes) else {
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
    let depth = depth.unwrap_or(3).clamp(1, 8);
    let start = path.as_deref().unwrap_or(".");
    let walk = files.dirs().walk(start, depth).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (shown, entry) in walk.filter_map(Result::ok).enumerate() {
        if shown == TREE_ENTRIES {
            out.push_str("... (more entries not shown)\n");
            break;
        }
        let indent = "  ".repeat(entry.depth() - 1);
        let name = entry.relative().file_name().unwrap_or_default();
        let name = name.to_string_lossy();
        let _ = match () {
            () if entry.is_dir() => writeln!(out, "{indent}{name}/"),
            () if entry.is_symlink() => {
                writeln!(out, "{indent}{name} -> (link, {} bytes)", entry.len())
            }
            () => writeln!(out, "{indent}{name} ({} bytes)", entry.len()),
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
    if content.len() as u64 > MAX_READ_BYTES {
        return Err(format!(
            "the contents are {} bytes; at most {MAX_READ_BYTES}",
            content.len()
        ));
    }
    let (checker, target) = (Files::clone(&files), path.clone());
    let (relative, exists) = run_blocking(move || checker.check_target(&target)).await?;
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
    let writer = Files::clone(&files);
    // Checked again as it is written: the tree may have changed meanwhile.
    let written = run_blocking(move || writer.dirs().write(&path, content.as_bytes()))
        .await
        .map_err(|error| refusal(&error, &relative))?;
    files.changed(&written.path);
    let verb = if written.created {
        "created"
    } else {
        "overwrote"
    };
    Ok(format!("{verb} {relative} ({length} bytes)"))
}

impl Files {
    /// Where a write of `path` would go (relative to the directory), and
    /// whether a file is there: refused at once if it leaves the directory
    /// or names something a write would refuse, so that nobody is asked
    /// about a write that cannot happen. Blocks on the file system.
    fn check_target(&self, path: &str) -> Result<(String, bool), String> {
        let target = self.resolve(path)?;
        let relative = self.relative(target.as_path());
        // `symlink_metadata` does not open the file: a FIFO is not waited on.
        let Ok(metadata) = std::fs::symlink_metadata(target.as_path()) else {
            return Ok((relative, false));
        };
        let path = target.into_path_buf();
        if !metadata.is_file() {
            return Err(refusal(&PathError::NotRegular(path), &relative));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            if metadata.nlink() > 1 {
                let error = PathError::HardLinked(path, metadata.nlink());
                return Err(refusal(&error, &relative));
            }
        }
        Ok((relative, true))
    }
}

/// Why `relative` cannot be written, naming it as the client did rather
/// than by the server's full path.
fn refusal(error: &PathError, relative: &str) -> String {
    match error {
        PathError::NotRegular(_) => format!("{relative} is not a regular file"),
        PathError::HardLinked(_, links) => format!(
            "{relative} has {links} hard links: it may be a file from outside the served directory"
        ),
        other => format!("{relative} was not written: {other}"),
    }
}
