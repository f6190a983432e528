//! `skills list`, `skills get URI` and `skills load URI [FILE...]`: the
//! Skills extension from the command line, with the client's verification.
//! Listing fetches no file; loading fetches the `SKILL.md` and then only
//! the files named, each verified against the skill's entry.

use std::io::Write;
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::{Value, json};

use super::{Failure, Target};
use crate::client::{Client, ClientError};
use crate::server::Server;
use crate::skills::{SkillContent, SkillEntry, SkillLoadError};

/// `skills` subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum SkillsCommand {
    /// Lists the skills the server publishes (`skills/list`); fetches no
    /// file.
    List(Target),
    /// Shows one skill's entry (`skills/get`): its frontmatter and every
    /// file with its digest.
    Get {
        /// The URI of the skill's SKILL.md.
        uri: String,
        #[command(flatten)]
        target: Target,
    },
    /// Loads a skill: fetches its SKILL.md, verifies it against the skill's
    /// entry (size, digest, frontmatter) and prints it, then each FILE
    /// named, verified the same way. A file the entry does not list is
    /// refused; a failed check prints no content.
    Load {
        /// The URI of the skill's SKILL.md.
        uri: String,
        /// Supporting files to read after it, by path in the skill
        /// (`references/FORMS.md`) or URI.
        files: Vec<String>,
        /// Also load a generated skill whose entry lists no files, so
        /// that nothing it serves can be verified.
        #[arg(long)]
        allow_unverifiable: bool,
        #[command(flatten)]
        target: Target,
    },
}

impl SkillsCommand {
    pub(super) fn target(&self) -> &Target {
        match self {
            SkillsCommand::List(target)
            | SkillsCommand::Get { target, .. }
            | SkillsCommand::Load { target, .. } => target,
        }
    }
}

impl From<SkillLoadError> for Failure {
    fn from(error: SkillLoadError) -> Self {
        match error {
            SkillLoadError::Request(error) => Failure::Client(error),
            refused => Failure::Usage(refused.to_string()),
        }
    }
}

pub(super) async fn execute(
    server: Server,
    command: SkillsCommand,
    out: &mut dyn Write,
) -> Result<ExitCode, Failure> {
    let mut client = command.target().connect(server, false)?;
    let as_json = command.target().json;
    match command {
        SkillsCommand::List(_) => {
            let (entries, raw) = listing(&mut client).await?;
            if as_json {
                writeln!(out, "{}", pretty(&Value::Array(raw)))?;
            } else {
                print_listing(out, &entries)?;
            }
        }
        SkillsCommand::Get { uri, .. } => {
            let (result, _) = client.request("skills/get", json!({"uri": uri})).await?;
            client_entries(std::slice::from_ref(&result["skill"]))?;
            writeln!(out, "{}", pretty(&result["skill"]))?;
        }
        SkillsCommand::Load {
            uri,
            files,
            allow_unverifiable,
            ..
        } => {
            let entry = entry_for(&mut client, &uri).await?;
            let skill = if allow_unverifiable {
                client.load_unverifiable_skill(&entry).await?
            } else {
                client.load_skill(&entry).await?
            };
            let mut loaded = vec![skill.skill_md().clone()];
            for file in &files {
                loaded.push(client.read_skill_file(&skill, file).await?);
            }
            print_loaded(out, &loaded, as_json)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Every entry, parsed (which checks its shape) and as sent.
async fn listing(
    client: &mut Client<super::Connection>,
) -> Result<(Vec<SkillEntry>, Vec<Value>), ClientError> {
    let raw = client.list_json(crate::client::ListKind::Skills).await?;
    let entries = client_entries(&raw)?;
    Ok((entries, raw))
}

fn client_entries(raw: &[Value]) -> Result<Vec<SkillEntry>, ClientError> {
    raw.iter()
        .map(|entry| {
            serde::Deserialize::deserialize(entry)
                .map_err(|error| ClientError::Malformed(format!("a skill entry: {error}")))
        })
        .collect()
}

/// The entry a host holds for `uri`: from the listing, else (a skill
/// absent from a partial listing) from `skills/get`.
async fn entry_for(
    client: &mut Client<super::Connection>,
    uri: &str,
) -> Result<SkillEntry, ClientError> {
    let listed = client.list_skills().await?;
    match listed.into_iter().find(|entry| entry.uri == uri) {
        Some(entry) => Ok(entry),
        None => client.get_skill(uri).await,
    }
}

fn print_listing(out: &mut dyn Write, entries: &[SkillEntry]) -> std::io::Result<()> {
    writeln!(out, "Skills ({})", entries.len())?;
    for entry in entries {
        let files = match &entry.resources {
            Some(files) => format!("{} files", files.len()),
            None => "generated".to_owned(),
        };
        let description = entry.description().and_then(|d| d.lines().next());
        writeln!(
            out,
            "  {}  ({files})  {}",
            entry.uri,
            description.unwrap_or_default()
        )?;
    }
    Ok(())
}

fn print_loaded(
    out: &mut dyn Write,
    loaded: &[SkillContent],
    as_json: bool,
) -> std::io::Result<()> {
    if as_json {
        let files: Vec<Value> = loaded.iter().map(content_json).collect();
        return writeln!(out, "{}", pretty(&json!({"files": files})));
    }
    for (index, file) in loaded.iter().enumerate() {
        if index > 0 {
            writeln!(out, "\n--- {} ---", file.uri)?;
        }
        match file.text() {
            Some(text) => write!(out, "{text}")?,
            None => writeln!(out, "({} bytes of binary content)", file.bytes.len())?,
        }
    }
    Ok(())
}

fn content_json(file: &SkillContent) -> Value {
    let mut value = json!({"uri": file.uri, "mimeType": file.mime_type});
    match file.text() {
        Some(text) => value["text"] = json!(text),
        None => value["size"] = json!(file.bytes.len()),
    }
    value
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
