//! Answering the server's questions: from an answers file, or on the
//! terminal; roots from `--root` flags or the current directory.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::AskOptions;
use super::terminal;
use crate::client::{Answers, ClientError, InputRequest, InputRequired};

pub(super) struct Answerer {
    /// The answers file and its answers, by key.
    file: Option<(PathBuf, Map<String, Value>)>,
    /// `(uri, name)` of each root offered.
    roots: Vec<(String, Option<String>)>,
    terminal: bool,
}

impl Answerer {
    pub(super) fn new(options: &AskOptions) -> Result<Answerer, ClientError> {
        let file = match &options.answers {
            None => None,
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|error| {
                    ClientError::Malformed(format!("cannot read {}: {error}", path.display()))
                })?;
                let answers: Map<String, Value> = serde_json::from_str(&text).map_err(|error| {
                    ClientError::Malformed(format!(
                        "{} must hold a JSON object mapping request keys to responses: {error}",
                        path.display()
                    ))
                })?;
                Some((path.clone(), answers))
            }
        };
        let roots = if options.roots.is_empty() {
            std::env::current_dir()
                .map(|dir| vec![dir])
                .unwrap_or_default()
        } else {
            options.roots.clone()
        };
        Ok(Answerer {
            file,
            roots: roots.iter().map(|path| root(path)).collect(),
            terminal: std::io::stdin().is_terminal(),
        })
    }

    /// The answers to a round, or `None` when nobody can answer it (not a
    /// terminal, no answers file).
    pub(super) fn answer<R>(
        &mut self,
        round: &InputRequired<R>,
    ) -> Result<Option<Answers>, ClientError> {
        self.answer_requests(&round.requests)
    }

    /// The answers to `requests` (a round's, or a task's), or `None` when
    /// nobody can answer them.
    pub(super) fn answer_requests(
        &mut self,
        requests: &[(String, InputRequest)],
    ) -> Result<Option<Answers>, ClientError> {
        let mut answers = Answers::new();
        for (key, request) in requests {
            if let InputRequest::Roots = request {
                let roots = self
                    .roots
                    .iter()
                    .map(|(uri, name)| (uri.as_str(), name.as_deref()));
                answers = answers.roots(key, roots);
                continue;
            }
            if let Some((path, file)) = &self.file {
                let response = file.get(key).cloned().ok_or_else(|| {
                    ClientError::Malformed(format!(
                        "the server asks `{key}` ({}), but {} has no answer for it",
                        request.method(),
                        path.display()
                    ))
                })?;
                answers = answers.raw(key, response);
                continue;
            }
            if !self.terminal {
                return Ok(None);
            }
            let response = match request {
                InputRequest::Elicitation(elicitation) => terminal::elicit(key, elicitation),
                InputRequest::Sampling(sampling) => terminal::sample(key, sampling),
                InputRequest::Roots => unreachable!("answered above"),
            }
            .map_err(|error| ClientError::Malformed(format!("cannot read the answer: {error}")))?;
            answers = answers.raw(key, response);
        }
        Ok(Some(answers))
    }
}

fn root(path: &Path) -> (String, Option<String>) {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let text = absolute.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') {
        text
    } else {
        format!("/{text}")
    };
    let uri = crate::files::file_uri(Path::new(&text));
    let name = absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    (uri, name)
}

#[cfg(test)]
mod tests {
    use super::root;

    #[test]
    fn roots_are_file_uris() {
        let (uri, name) = root(std::path::Path::new("/srv/my project"));
        assert_eq!(uri, "file:///srv/my%20project");
        assert_eq!(name.as_deref(), Some("my project"));
    }
}
