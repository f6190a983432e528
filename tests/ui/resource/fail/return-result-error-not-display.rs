use mcp_runtime::resource;

#[derive(Debug)]
struct NotFound;

/// One note.
#[resource("memo://notes/{id}")]
fn note(id: u64) -> Result<String, NotFound> {
    if id == 1 {
        Ok("Buy milk.".to_owned())
    } else {
        Err(NotFound)
    }
}

fn main() {}
