//! What every command returns: how it ended, or the error that ended it.

/// What a command's run ended with, when it did not fail.
pub(crate) enum Outcome {
    /// All well.
    Done,
    /// Targets have problems (audit, pin): exit code 1.
    Problems,
}

/// A command's result: its outcome, or an error printed as one line (exit code 2).
pub(crate) type Result<T = Outcome> = std::result::Result<T, Box<dyn std::error::Error>>;
