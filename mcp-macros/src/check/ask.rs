//! Rules for declared asks: the format strings of messages, URLs and
//! prompts may only name the handler's arguments, which is all they can
//! see. Checked here so that a typo is reported with the names available,
//! instead of as rustc's "cannot find value".

use syn::LitStr;
use syn::ext::IdentExt as _;

use crate::attr::placeholders;
use crate::ctxt::Ctxt;
use crate::model::HandlerFn;

pub(super) fn check_asks(cx: &Ctxt, handler: &HandlerFn<'_>) {
    let arguments: Vec<String> = handler
        .arguments()
        .map(|argument| argument.ident.unraw().to_string())
        .collect();
    for (_, ask) in handler.asks() {
        for template in ask.kind.templates() {
            check_template(cx, template, &arguments, handler.kind.parameters());
        }
    }
}

fn check_template(cx: &Ctxt, template: &LitStr, arguments: &[String], parameters: &str) {
    let available = if arguments.is_empty() {
        format!("this handler has no {parameters}")
    } else {
        format!(
            "it can use {}",
            arguments
                .iter()
                .map(|a| format!("`{{{a}}}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    for name in placeholders(&template.value()) {
        let message = if name.is_empty() || name.chars().all(|c| c.is_ascii_digit()) {
            format!("name the argument inside the braces (`{{{name}}}` has no name); {available}")
        } else if arguments.contains(&name) {
            continue;
        } else {
            format!("`{{{name}}}` is not one of the {parameters}; {available}")
        };
        cx.error_spanned_by(template, message);
    }
}

#[cfg(test)]
mod tests {
    use crate::attr::placeholders;

    #[test]
    fn placeholders_are_found_and_escapes_skipped() {
        assert_eq!(placeholders("Delete {path}?"), ["path"]);
        assert_eq!(placeholders("{{literal}} {a:>3} {} {0}"), ["a", "", "0"]);
        assert!(placeholders("no braces").is_empty());
    }
}
