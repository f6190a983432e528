//! The extension's methods: `skills/list`, `skills/get` and
//! `resources/directory/read`.

use std::ops::Bound;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::{Value, json};

use super::provider::describe_file;
use super::{EXTENSION_ID, Options, Set, Skills};
use crate::extension::{Extension, ExtensionMethod, MethodResult};
use crate::protocol::{CacheHint, ErrorObject, Resource};

/// The media type of a directory resource (SEP-2640).
const DIRECTORY: &str = "inode/directory";

#[derive(Deserialize)]
struct ListParams {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Deserialize)]
struct GetParams {
    uri: String,
}

#[derive(Deserialize)]
struct DirectoryParams {
    uri: String,
    #[serde(default)]
    cursor: Option<String>,
}

/// The extension over `skills`. Any client may call its methods: a
/// client that did not negotiate the extension learns nothing it could
/// not read as resources.
pub(super) fn extension(skills: &Skills) -> Extension {
    let (list, get, directory) = (skills.clone(), skills.clone(), skills.clone());
    Extension::new(EXTENSION_ID)
        .settings(json!({"directoryRead": true}))
        .method(
            ExtensionMethod::new("skills/list", move |params: ListParams, _ctx| {
                std::future::ready(list_page(&list.set(), list.options, params.cursor))
            })
            .open_to_all_clients(),
        )
        .method(
            ExtensionMethod::new("skills/get", move |params: GetParams, _ctx| {
                std::future::ready(get_entry(&get.set(), get.options, &params.uri))
            })
            .open_to_all_clients(),
        )
        .method(
            ExtensionMethod::new(
                "resources/directory/read",
                move |params: DirectoryParams, _ctx| {
                    let set = directory.set();
                    let page = read_directory(&set, directory.options, &params.uri, params.cursor);
                    std::future::ready(page)
                },
            )
            .open_to_all_clients(),
        )
}

/// A page of entries, by URI, after the cursor's.
fn list_page(
    set: &Set,
    options: Options,
    cursor: Option<String>,
) -> Result<MethodResult, ErrorObject> {
    let after = cursor.as_deref().map(decode).transpose()?;
    let lower = after.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    let mut page = set.skills.range::<str, _>((lower, Bound::Unbounded));
    let mut object = String::from(r#"{"skills":["#);
    let mut last = None;
    for (index, (uri, skill)) in page.by_ref().take(options.page_size).enumerate() {
        if index > 0 {
            object.push(',');
        }
        object.push_str(skill.entry());
        last = Some(uri);
    }
    object.push(']');
    if let Some(last) = last.filter(|_| page.next().is_some()) {
        object.push_str(&format!(r#","nextCursor":"{}""#, encode(last)));
    }
    push_cache(&mut object, options.cache);
    Ok(MethodResult::written(object, None))
}

/// The entry of the skill whose `SKILL.md` is at `uri`, listed or not.
fn get_entry(set: &Set, options: Options, uri: &str) -> Result<MethodResult, ErrorObject> {
    let skill = set
        .skills
        .get(uri)
        .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown skill: {uri}")))?;
    let mut object = format!(r#"{{"skill":{}"#, skill.entry());
    push_cache(&mut object, options.cache);
    Ok(MethodResult::written(object, None))
}

/// `,"ttlMs":...,"cacheScope":...}`: the object's end.
fn push_cache(object: &mut String, cache: CacheHint) {
    let scope = serde_json::to_string(&cache.scope).unwrap_or_else(|_| r#""private""#.into());
    object.push_str(&format!(
        r#","ttlMs":{},"cacheScope":{scope}}}"#,
        cache.ttl_ms
    ));
}

/// The direct children of the directory at `uri` (a skill's root or one of
/// its subdirectories), a page after the cursor's: files as
/// `resources/list` shows them, subdirectories as `inode/directory`
/// resources. A URI with no file below it is no directory: `-32602`.
fn read_directory(
    set: &Set,
    options: Options,
    uri: &str,
    cursor: Option<String>,
) -> Result<MethodResult, ErrorObject> {
    let children = children(set, uri);
    if children.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "Not a directory: {uri}"
        )));
    }
    let after = cursor.as_deref().map(decode).transpose()?;
    let mut rest = children
        .into_iter()
        .filter(|(first, _)| after.as_deref().is_none_or(|after| first.as_str() > after));
    let page: Vec<(String, Resource)> = rest.by_ref().take(options.page_size).collect();
    let mut result =
        json!({"resources": page.iter().map(|(_, resource)| resource).collect::<Vec<_>>()});
    if let Some((last, _)) = page.last().filter(|_| rest.next().is_some()) {
        result["nextCursor"] = Value::String(encode(last));
    }
    Ok(MethodResult::complete(result))
}

/// Each child of `uri`, with the URI of the first file at or below it (the
/// order children are listed and paged in).
fn children(set: &Set, uri: &str) -> Vec<(String, Resource)> {
    let prefix = format!("{uri}/");
    if uri.ends_with('/') {
        return Vec::new();
    }
    let mut children: Vec<(String, Resource)> = Vec::new();
    let mut directory: Option<&str> = None;
    for (key, (skill, index)) in set
        .files
        .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
    {
        let Some(rest) = key.strip_prefix(&prefix) else {
            break;
        };
        match rest.split_once('/') {
            Some((sub, _)) if directory == Some(sub) => {}
            Some((sub, _)) => {
                directory = Some(sub);
                let resource = Resource::new(format!("{prefix}{sub}"), sub).mime_type(DIRECTORY);
                children.push((key.clone(), resource));
            }
            None => children.push((key.clone(), describe_file(set, key, skill, *index))),
        }
    }
    children
}

/// A cursor: the last URI of a page, opaque to the client.
fn encode(uri: &str) -> String {
    URL_SAFE_NO_PAD.encode(uri)
}

/// The URI a cursor carries; anything else is `-32602`.
fn decode(cursor: &str) -> Result<String, ErrorObject> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))
}
