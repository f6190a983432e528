//! `skills!("dir")`: a directory of Agent Skills, checked and embedded at
//! compile time.

use proc_macro2::TokenStream;
use syn::LitStr;

/// Expands `skills!("dir")`.
pub(crate) fn expand(input: TokenStream) -> TokenStream {
    let dir: LitStr = match syn::parse2(input) {
        Ok(dir) => dir,
        Err(_) => {
            return syn::Error::new(
                proc_macro2::Span::call_site(),
                "`skills!` takes the directory of the skills, relative to Cargo.toml: `skills!(\"skills\")`",
            )
            .to_compile_error();
        }
    };
    match embed(&dir) {
        Ok(tokens) => tokens,
        Err(problem) => syn::Error::new(dir.span(), problem).to_compile_error(),
    }
}

#[cfg(not(feature = "skills"))]
fn embed(_dir: &LitStr) -> Result<TokenStream, String> {
    Err("`skills!` needs the `skills` feature of mcp-runtime: `mcp-runtime = { version = \"0.1\", features = [\"skills\"] }`".into())
}

#[cfg(feature = "skills")]
fn embed(dir: &LitStr) -> Result<TokenStream, String> {
    use mcp_runtime_skill_format as format;
    use quote::quote;

    let shown = dir.value();
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .ok_or("`skills!` is expanded by cargo, which sets CARGO_MANIFEST_DIR")?;
    let root = std::path::Path::new(&manifest).join(&shown);
    let files = tree::read(&root, &shown)?;
    let skills = format::plan(&files)
        .map_err(|error| format!("{shown}/{}: {}", error.file, error.problem))?;
    let private = quote!(::mcp_runtime::__private);
    let file_items = files.iter().map(|(path, bytes)| {
        let absolute = root.join(path).to_string_lossy().into_owned();
        let digest = format::digest(bytes);
        quote! {
            #private::StaticFile { path: #path, bytes: ::core::include_bytes!(#absolute), digest: #digest }
        }
    });
    let skill_items = skills.iter().map(|skill| {
        let path = &skill.path;
        let frontmatter = serde_json::Value::Object(skill.frontmatter.clone()).to_string();
        let indices = skill.files.iter().map(|&index| index as u16);
        quote! {
            #private::StaticSkill { path: #path, frontmatter: #frontmatter, files: &[#(#indices),*] }
        }
    });
    let (file_count, skill_count) = (files.len(), skills.len());
    Ok(quote! {
        {
            static FILES: [#private::StaticFile; #file_count] = [#(#file_items),*];
            static SKILLS: [#private::StaticSkill; #skill_count] = [#(#skill_items),*];
            #private::skills_from_static(&SKILLS, &FILES)
        }
    })
}

/// Reading the directory.
#[cfg(feature = "skills")]
mod tree {
    use std::fs;
    use std::path::Path;

    /// Every file below `root` that is not hidden, as `(path below root,
    /// bytes)`, sorted by path. `shown` is the directory as the macro call
    /// wrote it, for messages.
    pub(super) fn read(root: &Path, shown: &str) -> Result<Vec<(String, Vec<u8>)>, String> {
        if !root.is_dir() {
            return Err(format!(
                "`{shown}` is not a directory: the path is relative to the directory of the package's Cargo.toml"
            ));
        }
        let mut files = Vec::new();
        visit(root, "", shown, &mut files)?;
        if files.is_empty() {
            return Err(format!(
                "`{shown}` holds no skill: add a directory with a SKILL.md"
            ));
        }
        files.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        Ok(files)
    }

    fn visit(
        dir: &Path,
        prefix: &str,
        shown: &str,
        files: &mut Vec<(String, Vec<u8>)>,
    ) -> Result<(), String> {
        let failed = |path: &str, error: std::io::Error| format!("{shown}/{path}: {error}");
        let entries = fs::read_dir(dir).map_err(|error| failed(prefix, error))?;
        for entry in entries {
            let entry = entry.map_err(|error| failed(prefix, error))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return Err(format!(
                    "{shown}/{prefix}{}: the name is not UTF-8, which a `skill://` URI cannot carry",
                    name.to_string_lossy()
                ));
            };
            if name.starts_with('.') {
                continue;
            }
            let path = format!("{prefix}{name}");
            let kind = entry.file_type().map_err(|error| failed(&path, error))?;
            if kind.is_dir() {
                visit(&entry.path(), &format!("{path}/"), shown, files)?;
            } else if kind.is_file() {
                let bytes = fs::read(entry.path()).map_err(|error| failed(&path, error))?;
                files.push((path, bytes));
            } else {
                return Err(format!(
                    "{shown}/{path}: not a regular file (a symbolic link?); a skill embeds files and directories only"
                ));
            }
        }
        Ok(())
    }
}
