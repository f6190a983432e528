//! A release assistant: tools that need the user (or the client's model)
//! in the middle of a call, written straight through.
//!
//! - `deploy` asks where to deploy, and only for production asks again,
//!   for the service name as a typed confirmation: two rounds whose second
//!   question depends on the first answer.
//! - `release_notes` has the client's model draft the notes (a declared
//!   sampling ask), and asks the user to approve them in the same round.
//!
//! - `ship_release` is a long job (four steps of five seconds by default):
//!   it reports each step as progress and asks the user to approve the
//!   packaged release before it publishes. Clients that declare the Tasks
//!   extension get a task to poll, answer and cancel; others wait for the
//!   result.
//!
//! It ships a skill, `release-workflow` (in `skills/`), that teaches an
//! agent this workflow: served with the Skills extension, checked when
//! this crate compiles.
//!
//! The binary serves these tools; `walkthrough` plays the client.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use mcp_runtime::{ElicitForm, Elicitation, Input, Progress, SamplingResult, ServerBuilder, tool};

/// The server: these tools, and the skill that teaches them, embedded from
/// `skills/` (a skill that breaks the Agent Skills rules is a compile
/// error naming its file).
pub fn builder() -> ServerBuilder {
    mcp_runtime::server!()
        .instructions(
            "Deploys services (asking where, and confirming production) and drafts release notes. \
             The skill skill://release-workflow/SKILL.md teaches the whole release workflow.",
        )
        .with(&mcp_runtime::skills!("skills"))
}

/// Where a deployment goes.
#[derive(Clone, Copy, Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
#[serde(rename_all = "lowercase")]
pub enum Environment {
    /// Staging: safe to break.
    Staging,
    /// Production: customers see it.
    Production,
}

/// The first question of `deploy`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
pub struct Target {
    /// Where to deploy.
    pub environment: Environment,
    /// Run database migrations first?
    #[serde(default)]
    pub migrate: bool,
}

/// The production safety check.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
pub struct Confirmation {
    /// Type the service's name to confirm.
    pub service: String,
}

/// Approval of drafted notes.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema, ElicitForm)]
pub struct Approval {
    /// Publish the drafted notes?
    pub publish: bool,
}

/// Build numbers: the one side effect, which must happen once per
/// deployment however many rounds it takes.
static BUILDS: AtomicU32 = AtomicU32::new(1041);

/// Deploys a service: asks where, and before production asks the user to
/// type the service's name.
#[tool(annotations(destructive, open_world = false))]
pub async fn deploy(
    /// The service to deploy.
    service: String,
    #[ctx] input: Input,
) -> Result<String, String> {
    let Some(target) = input
        .elicit::<Target>(format!("Where should {service} go?"))
        .await
        .accepted()
    else {
        return Err(format!("{service} was not deployed: no target chosen"));
    };
    if matches!(target.environment, Environment::Production) {
        let typed = input
            .elicit::<Confirmation>(format!(
                "{service} is going to production. Type {service} to confirm."
            ))
            .await
            .accepted()
            .map(|c| c.service);
        if typed.as_deref() != Some(service.as_str()) {
            return Err(format!(
                "{service} was not deployed: confirmation did not match"
            ));
        }
    }
    // Every question is answered: the side effect runs once, here.
    let build = BUILDS.fetch_add(1, Ordering::SeqCst) + 1;
    let migrations = if target.migrate {
        ", migrations run"
    } else {
        ""
    };
    Ok(format!(
        "deployed {service} to {:?} (build {build}{migrations})",
        target.environment
    )
    .to_lowercase())
}

/// Drafts release notes with the client's model, then asks the user to
/// approve them.
///
/// Sampling is deprecated as of MCP 2026-07-28: a new server would call an
/// LLM provider itself. It is shown here because many clients still offer
/// it.
#[tool(annotations(read_only, open_world = false))]
pub async fn release_notes(
    /// The version being released.
    version: String,
    /// What changed, one entry per change.
    changes: Vec<String>,
    #[sample(
        prompt = "Write two sentences of release notes for version {version}. Changes: {changes:?}",
        max_tokens = 200,
        system = "You write concise, friendly release notes."
    )]
    draft: SamplingResult,
    #[ctx] input: Input,
) -> Result<String, String> {
    let notes = draft.text();
    let approval = input
        .elicit::<Approval>(format!("Publish these notes for {version}?\n\n{notes}"))
        .await;
    match approval {
        Elicitation::Accepted(Approval { publish: true }) => {
            Ok(format!("Release {version}\n\n{notes}"))
        }
        _ => Err(format!("the notes for {version} were not published")),
    }
}

/// The steps of a release before it is published, as progress shows them.
const STEPS: [&str; 3] = ["building", "testing", "packaging"];

/// Ships a release: builds, tests and packages it, asks the user to approve
/// publishing it, then publishes. A long job, run as a task for clients
/// with the Tasks extension (they poll its progress, answer the approval
/// with `tasks/update`, and may cancel it).
#[tool(task, annotations(destructive = false, idempotent, open_world = false))]
pub async fn ship_release(
    /// The version to ship, such as `1.4.0`.
    version: String,
    /// How long each step takes, in milliseconds (default 5000).
    step_ms: Option<u64>,
    #[ctx] progress: Progress,
    #[ctx] input: Input,
) -> Result<String, String> {
    let pace = Duration::from_millis(step_ms.unwrap_or(5_000));
    let total = STEPS.len() as f64 + 1.0;
    for (done, step) in STEPS.iter().enumerate() {
        progress.report_message(done as f64, Some(total), &format!("{step} {version}"));
        tokio::time::sleep(pace).await;
    }
    let waiting = format!("waiting for approval to publish {version}");
    progress.report_message(STEPS.len() as f64, Some(total), &waiting);
    let approval = input
        .elicit::<Approval>(format!("Release {version} is packaged. Publish it?"))
        .await;
    if !matches!(approval, Elicitation::Accepted(Approval { publish: true })) {
        return Err(format!("release {version} was not published"));
    }
    progress.report_message(
        STEPS.len() as f64 + 0.5,
        Some(total),
        &format!("publishing {version}"),
    );
    tokio::time::sleep(pace).await;
    Ok(format!("published {version}"))
}
