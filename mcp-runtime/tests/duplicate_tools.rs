//! Two tools with one name, defined in different modules: the server must
//! refuse to start and name both definition sites.

mod billing {
    /// Looks up an invoice.
    #[mcp_runtime::tool(name = "lookup")]
    pub(crate) fn find_invoice(id: u64) -> String {
        id.to_string()
    }
}

mod shipping {
    /// Looks up a parcel.
    #[mcp_runtime::tool]
    pub(crate) fn lookup(tracking: String) -> String {
        tracking
    }
}

#[test]
fn duplicate_names_are_reported_with_both_sites() {
    let error = mcp_runtime::ServerBuilder::new("dup", "0.0.0")
        .build()
        .expect_err("duplicate tool names must not build");
    let message = error.to_string();
    let file = "mcp-runtime/tests/duplicate_tools.rs";
    let billing = format!("{file}:7");
    let shipping = format!("{file}:15");
    assert!(
        message.starts_with("tool name `lookup` is defined twice: at "),
        "{message}"
    );
    assert!(message.contains(&billing), "{message}");
    assert!(message.contains(&shipping), "{message}");
    assert!(message.ends_with("rename one of them (for example with `name = \"...\"`)"));
    // The functions themselves are untouched and callable.
    assert_eq!(billing::find_invoice(7), "7");
    assert_eq!(shipping::lookup("x".into()), "x");
}
