//! The stdio floor: read a line, parse it, write the answer. Output is
//! buffered and flushed when no more input is waiting, like a careful
//! server would.
//!
//! `floor-stdio ANSWERS.json`

use std::io::{BufRead as _, Write as _};

use mcp_bench::{Answers, response};

fn main() -> std::io::Result<()> {
    let Some(answers) = std::env::args().nth(1) else {
        eprintln!("usage: floor-stdio ANSWERS.json");
        std::process::exit(2);
    };
    let answers: Answers = serde_json::from_str(&std::fs::read_to_string(answers)?)?;
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
    let mut output = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return output.flush();
        }
        let Ok(request) = serde_json::from_str::<mcp_bench::Request<'_>>(&line) else {
            continue;
        };
        if let Some(result) = answers.result(&request) {
            output.write_all(&response(request.id, result))?;
            output.write_all(b"\n")?;
        }
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
}
