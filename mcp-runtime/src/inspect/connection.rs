//! The inspected server: this binary's own handlers, a child process, or a
//! remote endpoint.

use crate::client::{
    ChildProcess, ClientError, InProcess, Remote, Reply, Transport, TransportError,
};
use crate::server::Server;

#[derive(Debug)]
pub(super) enum Connection {
    InProcess(Box<InProcess>),
    Child(Box<ChildProcess>),
    Remote(Box<Remote>),
}

impl Connection {
    pub(super) fn open(
        server: Server,
        url: Option<&str>,
        command: Option<&str>,
        headers: &[String],
        authorize: impl FnOnce(Remote) -> Remote,
    ) -> Result<Connection, ClientError> {
        if let Some(url) = url {
            // Authorization first: an `Authorization` header among
            // `headers` then turns OAuth off.
            let mut remote = authorize(Remote::new(url)?);
            for header in headers {
                let (name, value) = header.split_once(':').ok_or_else(|| {
                    ClientError::Malformed(format!(
                        "`{header}` is not a header; write \"Name: value\""
                    ))
                })?;
                remote = remote.header(name.trim(), value.trim());
            }
            return Ok(Connection::Remote(Box::new(remote)));
        }
        if let Some(command) = command {
            let child = ChildProcess::spawn_command_line(command)?;
            return Ok(Connection::Child(Box::new(child)));
        }
        Ok(Connection::InProcess(Box::new(InProcess::new(server))))
    }
}

impl Transport for Connection {
    async fn send(&mut self, id: u64, message: String) -> Result<Reply, TransportError> {
        match self {
            Connection::InProcess(transport) => transport.send(id, message).await,
            Connection::Child(transport) => transport.send(id, message).await,
            Connection::Remote(transport) => transport.send(id, message).await,
        }
    }

    fn mirrors_tool_headers(&self) -> bool {
        match self {
            Connection::InProcess(transport) => transport.mirrors_tool_headers(),
            Connection::Child(transport) => transport.mirrors_tool_headers(),
            Connection::Remote(transport) => transport.mirrors_tool_headers(),
        }
    }
}
