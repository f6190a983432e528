mod outer {
    pub mod inner {
        use mcp_runtime::tool;

        /// In a nested module.
        #[tool(name = "nested.module")]
        pub(crate) fn in_module(text: String) -> String {
            text
        }
    }
}

fn setup() {
    /// Inside a function body.
    #[mcp_runtime::tool]
    fn in_function(text: String) -> String {
        text
    }

    let _ = in_function(String::new());
}

fn main() {
    let _ = setup;
    let _ = outer::inner::in_module;
}
