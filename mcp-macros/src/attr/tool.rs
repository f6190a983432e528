//! `#[tool(...)]` arguments.

use proc_macro2::TokenStream;
use syn::LitStr;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser as _;

use super::common::{CommonAttr, Flag, lit_int, lit_str, parse_flag, set_once, unknown_key};
use crate::ctxt::Ctxt;
use crate::symbol::{
    ANNOTATIONS, ANSWER_WITHIN_MS, DESTRUCTIVE, IDEMPOTENT, INPUT_SCHEMA, OPEN_WORLD,
    OUTPUT_SCHEMA, POLL_INTERVAL_MS, READ_ONLY, REPLAYABLE_STATE, REQUIRED, REQUIRES_EXTENSION,
    TASK, TITLE, TTL_MS,
};

#[derive(Default)]
pub(crate) struct ToolAnnotationsAttr {
    pub(crate) title: Option<LitStr>,
    pub(crate) read_only: Option<Flag>,
    pub(crate) destructive: Option<Flag>,
    pub(crate) idempotent: Option<Flag>,
    pub(crate) open_world: Option<Flag>,
}

/// The arguments of `#[tool(...)]`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) common: CommonAttr,
    pub(crate) annotations: ToolAnnotationsAttr,
    /// `input_schema = path`: a function returning the schema to publish.
    pub(crate) input_schema: Option<syn::Path>,
    /// `output_schema = path`: a function returning the output schema.
    pub(crate) output_schema: Option<syn::Path>,
    /// `requires_extension = "..."`, once per extension, in order. Their
    /// syntax and repeats are checked in `check::extension`.
    pub(crate) extensions: Vec<LitStr>,
    /// `replayable_state`: the key as written (for spans) and its value.
    /// Whether it has any effect is checked in `check::tool`.
    pub(crate) replayable_state: Option<(syn::Path, Flag)>,
    /// `task` or `task(...)`: runs as a task for clients with the Tasks
    /// extension. Values are checked in `check::tool`.
    pub(crate) task: Option<TaskAttr>,
    /// MCP Apps: `ui = "ui://..."`, `visibility = [...]`.
    pub(crate) app: super::AppToolAttr,
}

/// `task(required, answer_within_ms = 250, ttl_ms = .., poll_interval_ms = ..)`.
pub(crate) struct TaskAttr {
    pub(crate) required: Option<Flag>,
    pub(crate) answer_within_ms: Option<syn::LitInt>,
    pub(crate) ttl_ms: Option<syn::LitInt>,
    pub(crate) poll_interval_ms: Option<syn::LitInt>,
}

const TOOL_KEYS: &str = "`name`, `title`, `description`, `annotations(...)`, `icon(...)`, `meta`, `scopes`, `group`, `layer`, `timeout_ms`, `blocking`, `requires_extension`, `input_schema`, `output_schema`, `replayable_state`, `task`, `ui`, `visibility` or `crate`";

const TASK_KEYS: &str = "`required`, `answer_within_ms`, `ttl_ms` or `poll_interval_ms`";

impl ToolAttr {
    pub(crate) fn parse(cx: &Ctxt, args: TokenStream) -> ToolAttr {
        let mut attr = ToolAttr::default();
        let parser = syn::meta::parser(|meta| {
            if attr.common.parse_key(cx, &meta)? || attr.app.parse_key(cx, &meta)? {
            } else if meta.path == INPUT_SCHEMA {
                let path = schema_path(&meta, INPUT_SCHEMA, "order_schema")?;
                set_once(cx, &meta, INPUT_SCHEMA, &mut attr.input_schema, path);
            } else if meta.path == OUTPUT_SCHEMA {
                let path = schema_path(&meta, OUTPUT_SCHEMA, "receipt_schema")?;
                set_once(cx, &meta, OUTPUT_SCHEMA, &mut attr.output_schema, path);
            } else if meta.path == REQUIRES_EXTENSION {
                let id: LitStr = meta.value()?.parse().map_err(|error| {
                    syn::Error::new(
                        error.span(),
                        "`requires_extension` takes a string literal: `requires_extension = \"com.example/my-extension\"`",
                    )
                })?;
                attr.extensions.push(id);
            } else if meta.path == REPLAYABLE_STATE {
                let flag = parse_flag(&meta, REPLAYABLE_STATE)?;
                let value = (meta.path.clone(), flag);
                set_once(
                    cx,
                    &meta,
                    REPLAYABLE_STATE,
                    &mut attr.replayable_state,
                    value,
                );
            } else if meta.path == ANNOTATIONS {
                meta.parse_nested_meta(|inner| {
                    parse_annotation(cx, &inner, &mut attr.annotations)
                })?;
            } else if meta.path == TASK {
                let task = parse_task(cx, &meta)?;
                set_once(cx, &meta, TASK, &mut attr.task, task);
            } else {
                unknown_key(cx, &meta, "#[tool]", TOOL_KEYS)?;
            }
            Ok(())
        });
        if let Err(error) = parser.parse2(args) {
            cx.push(error);
        }
        attr
    }

    /// Whether `replayable_state` (or `replayable_state = true`) was given.
    pub(crate) fn replayable_state(&self) -> bool {
        self.replayable_state
            .as_ref()
            .is_some_and(|(_, flag)| flag.value)
    }
}

/// `task` alone, or `task(...)` with its options.
fn parse_task(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<TaskAttr> {
    let mut task = TaskAttr {
        required: None,
        answer_within_ms: None,
        ttl_ms: None,
        poll_interval_ms: None,
    };
    if meta.input.peek(syn::Token![=]) {
        return Err(meta.error(
            "`task` takes no value: write `task`, or `task(required)` to refuse clients without the Tasks extension",
        ));
    }
    if !meta.input.peek(syn::token::Paren) {
        return Ok(task);
    }
    meta.parse_nested_meta(|inner| {
        let numbers = [
            (ANSWER_WITHIN_MS, &mut task.answer_within_ms),
            (TTL_MS, &mut task.ttl_ms),
            (POLL_INTERVAL_MS, &mut task.poll_interval_ms),
        ];
        if inner.path == REQUIRED {
            let flag = parse_flag(&inner, REQUIRED)?;
            set_once(cx, &inner, REQUIRED, &mut task.required, flag);
            return Ok(());
        }
        for (symbol, slot) in numbers {
            if inner.path == symbol {
                if let Some(value) = lit_int(cx, &inner, symbol)? {
                    set_once(cx, &inner, symbol, slot, value);
                }
                return Ok(());
            }
        }
        unknown_key(cx, &inner, "task", TASK_KEYS)
    })?;
    Ok(task)
}

/// `input_schema = f` or `output_schema = f`: the path of a function.
fn schema_path(
    meta: &ParseNestedMeta<'_>,
    key: crate::symbol::Symbol,
    example: &str,
) -> syn::Result<syn::Path> {
    meta.value()?.parse().map_err(|error| {
        syn::Error::new(
            error.span(),
            format!(
                "`{key}` takes the path of a function returning the schema as a `serde_json::Value`: `{key} = {example}`"
            ),
        )
    })
}

fn parse_annotation(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    annotations: &mut ToolAnnotationsAttr,
) -> syn::Result<()> {
    let flags = [
        (READ_ONLY, &mut annotations.read_only),
        (DESTRUCTIVE, &mut annotations.destructive),
        (IDEMPOTENT, &mut annotations.idempotent),
        (OPEN_WORLD, &mut annotations.open_world),
    ];
    if meta.path == TITLE {
        let value = lit_str(meta, TITLE)?;
        set_once(cx, meta, TITLE, &mut annotations.title, value);
        return Ok(());
    }
    for (symbol, slot) in flags {
        if meta.path == symbol {
            let flag = parse_flag(meta, symbol)?;
            set_once(cx, meta, symbol, slot, flag);
            return Ok(());
        }
    }
    unknown_key(
        cx,
        meta,
        "annotations",
        "`read_only`, `destructive`, `idempotent`, `open_world` or `title`",
    )
}
