//! Following a task to its end: polling at the interval the server asks
//! for, showing its status message and progress (a bar on a terminal,
//! plain lines otherwise, on stderr), answering its questions, and sending
//! `tasks/cancel` on Ctrl-C.

use std::io::{IsTerminal as _, Write as _};
use std::time::Duration;

use serde_json::Value;

use super::answer::Answerer;
use super::connection::Connection;
use super::print;
use crate::client::{Client, ClientError, Task};
use crate::tasks::{TaskProgress, TaskStatus};

/// The shortest and longest waits between polls, whatever the server asks.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(30));

/// How a followed task ended.
pub(super) enum Ended {
    /// Its result.
    Completed(Value),
    /// Cancelled (by Ctrl-C, or by the server).
    Cancelled,
    /// It asked something nobody here can answer.
    Unanswered,
}

/// Follows `task` until it ends. A failed task is its JSON-RPC error.
pub(super) async fn follow(
    client: &mut Client<Connection>,
    answerer: &mut Answerer,
    mut task: Task,
) -> Result<Ended, ClientError> {
    let mut display = Display::new();
    let mut interrupt = Interrupt::listen();
    let mut cancelling = false;
    loop {
        display.show(&task);
        match task.status {
            TaskStatus::Completed => {
                display.finish();
                return Ok(Ended::Completed(task.result.unwrap_or_default()));
            }
            TaskStatus::Failed => {
                display.finish();
                return Err(match task.error {
                    Some(error) => ClientError::Rpc(error),
                    None => ClientError::Malformed("a failed task without an error".into()),
                });
            }
            TaskStatus::Cancelled => {
                display.finish();
                return Ok(Ended::Cancelled);
            }
            TaskStatus::InputRequired if !cancelling => {
                display.finish();
                let Some(answers) = answerer.answer_requests(&task.input_requests)? else {
                    print::unanswered_requests(&task.input_requests);
                    return Ok(Ended::Unanswered);
                };
                client.update_task(&task.id, answers).await?;
            }
            TaskStatus::InputRequired | TaskStatus::Working => {}
        }
        let wait = task.poll_interval.unwrap_or(Duration::from_secs(1));
        let wait = wait.clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = interrupt.next(), if !cancelling => {
                display.finish();
                eprintln!("cancelling task {} (Ctrl-C)", task.id);
                client.cancel_task(&task.id).await?;
                cancelling = true;
            }
        }
        task = client.get_task(&task.id).await?;
    }
}

/// Ctrl-C, listened for from before the task's first line is shown (an
/// interrupt that comes before would end the process).
struct Interrupt {
    #[cfg(unix)]
    signal: Option<tokio::signal::unix::Signal>,
}

impl Interrupt {
    fn listen() -> Self {
        #[cfg(unix)]
        {
            let kind = tokio::signal::unix::SignalKind::interrupt();
            Interrupt {
                signal: tokio::signal::unix::signal(kind).ok(),
            }
        }
        #[cfg(not(unix))]
        Interrupt {}
    }

    /// The next Ctrl-C (never, if it cannot be listened for).
    async fn next(&mut self) {
        #[cfg(unix)]
        {
            let received = match &mut self.signal {
                Some(signal) => signal.recv().await,
                None => None,
            };
            if received.is_none() {
                std::future::pending::<()>().await;
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The task's status line on stderr: redrawn in place on a terminal,
/// printed when it changes otherwise.
struct Display {
    terminal: bool,
    last: Option<String>,
    drawn: bool,
}

impl Display {
    fn new() -> Self {
        Display {
            terminal: std::io::stderr().is_terminal(),
            last: None,
            drawn: false,
        }
    }

    fn show(&mut self, task: &Task) {
        let line = describe(task, self.terminal);
        if self.last.as_deref() == Some(line.as_str()) {
            return;
        }
        let mut stderr = std::io::stderr().lock();
        if self.terminal {
            // Back to the start of the line and clear it, then redraw.
            let _ = write!(stderr, "\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(stderr, "{line}");
        }
        let _ = stderr.flush();
        self.last = Some(line);
    }

    /// Ends the redrawn line, so that what follows starts on its own.
    fn finish(&mut self) {
        if self.drawn {
            eprintln!();
            self.drawn = false;
            self.last = None;
        }
    }
}

/// `task ID: working [#####.....] 50% message`.
fn describe(task: &Task, bar: bool) -> String {
    let status = serde_json::to_value(task.status).unwrap_or_default();
    let mut line = format!("task {}: {}", task.id, status.as_str().unwrap_or("?"));
    if let Some(progress) = task.progress.filter(|_| !task.is_terminal()) {
        line.push(' ');
        line.push_str(&progress_text(progress, bar));
    }
    if let Some(message) = &task.status_message {
        line.push_str(": ");
        line.push_str(message);
    }
    line
}

fn progress_text(progress: TaskProgress, bar: bool) -> String {
    let Some(total) = progress.total.filter(|total| *total > 0.0) else {
        return format!("{}", progress.progress);
    };
    let fraction = (progress.progress / total).clamp(0.0, 1.0);
    let percent = (fraction * 100.0).round();
    if !bar {
        return format!("{}/{total} ({percent}%)", progress.progress);
    }
    const WIDTH: f64 = 20.0;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "0..=20"
    )]
    let filled = (fraction * WIDTH).round() as usize;
    format!(
        "[{}{}] {percent}%",
        "#".repeat(filled),
        ".".repeat(20 - filled)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_a_bar_on_a_terminal_and_numbers_otherwise() {
        let half = TaskProgress {
            progress: 5.0,
            total: Some(10.0),
        };
        assert_eq!(progress_text(half, true), "[##########..........] 50%");
        assert_eq!(progress_text(half, false), "5/10 (50%)");
        let open = TaskProgress {
            progress: 3.0,
            total: None,
        };
        assert_eq!(progress_text(open, true), "3");
    }
}
