//! A server spawned as a child process, spoken to over its stdin/stdout.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::transport::{Reply, Transport, TransportError};

/// A server in a child process. Its stderr is inherited, so its logs show.
#[derive(Debug)]
pub struct ChildProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl ChildProcess {
    /// Spawns `program` with `args`.
    pub fn spawn(program: &str, args: &[String]) -> Result<Self, TransportError> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| TransportError::new(format!("cannot start `{program}`: {error}")))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| TransportError::new("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| TransportError::new("no stdout".into()))?;
        Ok(ChildProcess {
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
        })
    }

    /// Spawns a command line such as `"my-server --stdio"` (words split on
    /// whitespace; single or double quotes group words).
    pub fn spawn_command_line(command: &str) -> Result<Self, TransportError> {
        let words = split_words(command).map_err(TransportError::new)?;
        let (program, args) = words
            .split_first()
            .ok_or_else(|| TransportError::new("the command is empty".into()))?;
        ChildProcess::spawn(program, args)
    }

    /// Closes the child's stdin and waits for it to exit.
    pub async fn finish(mut self) -> std::io::Result<std::process::ExitStatus> {
        drop(self.stdin);
        self.child.wait().await
    }
}

impl Transport for ChildProcess {
    async fn send(&mut self, id: u64, message: String) -> Result<Reply, TransportError> {
        let io = |error: std::io::Error| {
            TransportError::new(format!("the server's stdio failed: {error}"))
        };
        self.stdin.write_all(message.as_bytes()).await.map_err(io)?;
        self.stdin.write_all(b"\n").await.map_err(io)?;
        self.stdin.flush().await.map_err(io)?;
        let mut notifications = Vec::new();
        loop {
            let line = self
                .stdout
                .next_line()
                .await
                .map_err(io)?
                .ok_or_else(|| TransportError::new("the server closed its stdout".into()))?;
            let frame: Value = serde_json::from_str(&line).map_err(|error| {
                TransportError::new(format!(
                    "the server wrote a line that is not JSON ({error}): {line}"
                ))
            })?;
            if frame.get("id").and_then(Value::as_u64) == Some(id) {
                return Ok(Reply {
                    response: frame,
                    notifications,
                });
            }
            if frame.get("id").is_none() && frame.get("error").is_some() {
                // An error about a request it could not read.
                return Ok(Reply {
                    response: frame,
                    notifications,
                });
            }
            notifications.push(frame);
        }
    }
}

/// Splits a command line into words, honouring single and double quotes.
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err(format!("unbalanced quote in `{line}`"));
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split_words;

    #[test]
    fn words_split_on_whitespace_and_group_in_quotes() {
        assert_eq!(
            split_words("srv --http  a").unwrap(),
            ["srv", "--http", "a"]
        );
        assert_eq!(
            split_words(r#"run "two words" 'x y' """#).unwrap(),
            ["run", "two words", "x y", ""]
        );
        assert!(split_words("bad 'quote").is_err());
    }
}
