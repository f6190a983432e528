//! One keep-alive HTTP/1.1 connection that sends requests byte for byte
//! and reads each response in full (by `Content-Length`, chunks, or to the
//! end of the connection), for tests that send many requests.

use std::io::{self, BufRead as _, BufReader, Read, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::Response;

/// A connection to `address`, opened on first use and again whenever the
/// server has closed it.
pub(crate) struct KeepAlive {
    address: SocketAddr,
    /// How long a whole response may take.
    timeout: Duration,
    stream: Option<BufReader<Timed>>,
}

/// A connection whose reads fail once the response's time is up, however
/// the server paces its bytes.
struct Timed {
    stream: TcpStream,
    deadline: Instant,
}

impl Read for Timed {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buffer)
    }
}

impl KeepAlive {
    pub(crate) fn new(address: SocketAddr, timeout: Duration) -> KeepAlive {
        KeepAlive {
            address,
            timeout,
            stream: None,
        }
    }

    /// Sends `request` (a whole HTTP request) and reads its response. A
    /// kept-alive connection the server closed in between fails before the
    /// first byte of the response: the request is then sent once more, on
    /// a new connection. A response not complete within the timeout is an
    /// `io::ErrorKind::WouldBlock` or `TimedOut` error.
    pub(crate) fn exchange(&mut self, request: &[u8]) -> io::Result<Response> {
        let reused = self.stream.is_some();
        match self.try_exchange(request) {
            Err(error) if reused && closed_early(&error) => {
                self.stream = None;
                self.try_exchange(request)
            }
            answered => answered,
        }
    }

    fn try_exchange(&mut self, request: &[u8]) -> io::Result<Response> {
        let deadline = Instant::now() + self.timeout;
        let stream = match &mut self.stream {
            Some(stream) => stream,
            None => {
                let stream = TcpStream::connect(self.address)?;
                stream.set_nodelay(true)?;
                self.stream
                    .insert(BufReader::new(Timed { stream, deadline }))
            }
        };
        stream.get_mut().deadline = deadline;
        let read = stream
            .get_mut()
            .stream
            .write_all(request)
            .and_then(|()| read_response(stream));
        match read {
            Ok((response, keep)) => {
                if !keep {
                    self.stream = None;
                }
                Ok(response)
            }
            Err(error) => {
                self.stream = None;
                Err(error)
            }
        }
    }
}

/// Whether `error` says the connection was gone before the response began.
fn closed_early(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    ) && error
        .get_ref()
        .is_none_or(|inner| inner.to_string() != MID_RESPONSE)
}

const MID_RESPONSE: &str = "the connection closed in the middle of a response";

/// One response, and whether the connection can carry another.
fn read_response(stream: &mut BufReader<Timed>) -> io::Result<(Response, bool)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let read = stream
            .read_line(&mut line)
            .map_err(|error| match head.is_empty() {
                true => error,
                false => io::Error::new(error.kind(), MID_RESPONSE),
            })?;
        if read == 0 {
            return Err(match head.is_empty() {
                true => io::ErrorKind::UnexpectedEof.into(),
                false => io::Error::new(io::ErrorKind::UnexpectedEof, MID_RESPONSE),
            });
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let head = head.trim_end().to_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut response = Response {
        status,
        head,
        body: String::new(),
    };
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|coding| coding.eq_ignore_ascii_case("chunked"));
    let length = response
        .header("content-length")
        .and_then(|length| length.parse::<usize>().ok());
    let mut body = Vec::new();
    let mut keep = !response
        .header("connection")
        .is_some_and(|value| value.eq_ignore_ascii_case("close"));
    if chunked {
        read_chunks(stream, &mut body)?;
    } else if let Some(length) = length {
        body.resize(length, 0);
        stream.read_exact(&mut body).map_err(mid_response)?;
    } else if !matches!(status, 100..=199 | 204 | 304) {
        stream.read_to_end(&mut body).map_err(mid_response)?;
        keep = false;
    }
    response.body = String::from_utf8(body)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "the body is not UTF-8"))?;
    Ok((response, keep))
}

fn read_chunks(stream: &mut BufReader<Timed>, body: &mut Vec<u8>) -> io::Result<()> {
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).map_err(mid_response)?;
        let size = line.trim_end().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size, 16).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidData, format!("chunk size {line:?}"))
        })?;
        if size == 0 {
            // Trailers, if any, up to the blank line.
            loop {
                line.clear();
                if stream.read_line(&mut line).map_err(mid_response)? == 0 || line == "\r\n" {
                    return Ok(());
                }
            }
        }
        let start = body.len();
        body.resize(start + size + 2, 0);
        stream
            .read_exact(&mut body[start..])
            .map_err(mid_response)?;
        if &body[start + size..] != b"\r\n" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a chunk without its CRLF",
            ));
        }
        body.truncate(start + size);
    }
}

/// A failure after the response began is not a closed idle connection
/// (which [`KeepAlive::exchange`] retries).
fn mid_response(error: io::Error) -> io::Error {
    match error.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => error,
        kind => io::Error::new(kind, MID_RESPONSE),
    }
}
