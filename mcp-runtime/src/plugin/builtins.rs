//! The runtime's own optional parts as plugins: each installs through
//! the same public [`Setup`](super::Setup) a plugin of yours does.

use super::{Plugin, PluginError, Setup};

impl Plugin for crate::tasks::TaskOptions {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        server.builder.tasks = Some((self, crate::tasks::TASK_ENGINE));
        Ok(())
    }

    fn name(&self) -> String {
        "the Tasks extension".to_owned()
    }
}

/// Serving skills is a plugin: `.with(&skills)` advertises the Skills
/// extension (`io.modelcontextprotocol/skills`) with `directoryRead`,
/// answers `skills/list`, `skills/get` and `resources/directory/read`, and
/// serves every skill file as a resource (through the server's catalog:
/// see [`Setup::resource_provider`]).
#[cfg(feature = "skills")]
impl Plugin for &crate::skills::Skills {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        server
            .extension(self.extension())
            .resource_provider("skills", self.clone());
        Ok(())
    }

    fn name(&self) -> String {
        "the Skills extension".to_owned()
    }
}
