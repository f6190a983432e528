use mcp_runtime::tool;

trait Greeter {
    /// Says hello.
    #[tool]
    fn hello() -> String;
}

fn main() {}
