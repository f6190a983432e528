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

/// OpenTelemetry export is a plugin: `.with(otel)` exports traces and
/// metrics as `otel` says when the server is started with
/// [`run`](crate::ServerBuilder::run) (which otherwise exports only when the
/// `OTEL_EXPORTER_OTLP_*ENDPOINT` variables name a collector).
#[cfg(feature = "otel")]
impl Plugin for crate::otel::Otel {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        server.builder.otel = Some(self);
        Ok(())
    }

    fn name(&self) -> String {
        "OpenTelemetry".to_owned()
    }
}

/// The running export is a plugin: `.with(&telemetry)` records every
/// request (a layer where spans are kept, an observer where none would be)
/// and every notification.
#[cfg(feature = "otel")]
impl Plugin for &crate::otel::Telemetry {
    fn install(self, server: &mut Setup<'_>) -> Result<(), PluginError> {
        match self.makes_spans() {
            true => server.request_layer(self.layer()),
            false => server.request_observer(self.layer()),
        };
        server.notification_observer(self.layer());
        server.builder.exports.push(self.sources().clone());
        Ok(())
    }

    fn name(&self) -> String {
        "OpenTelemetry".to_owned()
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
