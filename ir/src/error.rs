//! Typed errors of the IR crate.
use std::path::PathBuf;

/// Result alias of the IR crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong when reading, checking or editing a model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bytes are not a valid ONNX protobuf message.
    #[error("not a valid ONNX protobuf ({0})")]
    Decode(String),
    /// The protobuf decoded but does not describe a well-formed model.
    #[error("malformed model: {0}")]
    Malformed(String),
    /// The model is well-formed but breaks a rule of ONNX (see [`crate::validate`]).
    #[error("invalid model: {0}")]
    Invalid(String),
    /// The file is in ONNX's textual syntax and does not parse.
    #[error("ONNX text syntax, at {0}")]
    Text(crate::text::TextError),
    /// The file is larger than the model size limit ([`crate::limits`]).
    #[error(
        "larger than the model size limit of {limit} bytes (--max-model-size or MUTAGRAPH_MAX_MODEL_BYTES raises it)"
    )]
    TooLarge {
        /// The limit, bytes.
        limit: u64,
    },
    /// A patch could not be applied.
    #[error("patch rejected: {0}")]
    Patch(String),
    /// Reading or writing a file failed.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        err: std::io::Error,
    },
    /// A tensor's data in a side file cannot be used (see [`crate::external`]).
    #[error("tensor '{tensor}' ({holder}): external data location '{location}': {problem}")]
    ExternalData {
        /// The tensor's name (may be empty for attribute tensors).
        tensor: String,
        /// What holds the tensor (`initializer`, a node's attribute, ...).
        holder: String,
        /// The `location` entry as the file wrote it.
        location: String,
        /// What is wrong.
        problem: Box<crate::external::ExternalProblem>,
    },
    /// Any of the above, for a named file (a text syntax error as `FILE:LINE:COL: what`, the
    /// form editors and terminals jump to).
    #[error("{}", file_message(.path, .problem))]
    File {
        /// The file the problem is in.
        path: PathBuf,
        /// The problem.
        problem: Box<Error>,
    },
}

fn file_message(path: &std::path::Path, problem: &Error) -> String {
    match problem {
        Error::Text(t) => format!("{}:{t} (ONNX text syntax)", path.display()),
        e => format!("{}: {e}", path.display()),
    }
}

impl Error {
    /// Whether the error is about what the user gave (a file that is not there or not a valid
    /// model, a model over the size limit) rather than a failure while working (a disk that
    /// cannot be written, a patch the IR rejected).
    pub fn is_input(&self) -> bool {
        match self {
            Error::Decode(_)
            | Error::Malformed(_)
            | Error::Invalid(_)
            | Error::Text(_)
            | Error::TooLarge { .. }
            | Error::ExternalData { .. } => true,
            Error::Io { err, .. } => matches!(
                err.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::IsADirectory
                    | std::io::ErrorKind::NotADirectory
            ),
            Error::File { problem, .. } => problem.is_input(),
            Error::Patch(_) => false,
        }
    }

    /// Attaches the file this error is about.
    pub fn in_file(self, path: impl Into<PathBuf>) -> Error {
        match self {
            e @ (Error::Io { .. } | Error::File { .. }) => e,
            e => Error::File {
                path: path.into(),
                problem: Box::new(e),
            },
        }
    }
}

impl From<prost::DecodeError> for Error {
    fn from(e: prost::DecodeError) -> Error {
        let msg = e.to_string();
        Error::Decode(
            msg.strip_prefix("failed to decode Protobuf message: ")
                .unwrap_or(&msg)
                .to_string(),
        )
    }
}
