//! Log messages from server to client.

use super::NotificationMeta;
use serde::{Deserialize, Serialize};

/// Syslog severity of a log message (`$defs/LoggingLevel`), ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Debug-level messages.
    Debug,
    /// Informational messages.
    Info,
    /// Normal but significant conditions.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// Params of `notifications/message` (`$defs/LoggingMessageNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// Severity of the message.
    pub level: LoggingLevel,
    /// Name of the logger that issued it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: serde_json::Value,
    /// Notification metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}
