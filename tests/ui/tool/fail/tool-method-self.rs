use mcp_runtime::tool;

struct Server;

impl Server {
    /// Says hello.
    #[tool]
    fn hello(&self) -> String {
        "hello".to_owned()
    }
}

fn main() {}
