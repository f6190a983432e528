//! The HTTP floor: hyper 1.x and serde_json with no MCP logic. It parses
//! each JSON-RPC body and answers a fixed result of the same shape as the
//! real server's (captured beforehand): what any server must at least do.
//!
//! `floor-http ADDR ANSWERS.json`

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcp_bench::{Answers, response};

async fn answer(
    answers: Arc<Answers>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let Ok(body) = request.into_body().collect().await.map(|b| b.to_bytes()) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let Ok(parsed) = serde_json::from_slice::<mcp_bench::Request<'_>>(&body) else {
        return Ok(status(StatusCode::BAD_REQUEST));
    };
    let Some(result) = answers.result(&parsed) else {
        return Ok(status(StatusCode::NOT_FOUND));
    };
    let mut response = Response::new(Full::new(Bytes::from(response(parsed.id, result))));
    response.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(address), Some(answers)) = (args.next(), args.next()) else {
        eprintln!("usage: floor-http ADDR ANSWERS.json");
        std::process::exit(2);
    };
    let answers: Arc<Answers> = Arc::new(serde_json::from_str(&std::fs::read_to_string(answers)?)?);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(&address).await?;
            loop {
                let (stream, _) = listener.accept().await?;
                let _ = stream.set_nodelay(true);
                let answers = answers.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(answers.clone(), request));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        })
}
