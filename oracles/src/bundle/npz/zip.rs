//! The zip container of an `.npz`, through the `zip` crate: writing stored members
//! deterministically (fixed timestamp and permissions, nothing taken from the machine or the
//! clock) and reading stored members, zip64 records included.
use super::NpzError;
use ::zip::write::SimpleFileOptions;
use ::zip::{CompressionMethod, DateTime, ZipArchive, ZipWriter};
use std::io::{Cursor, Read, Write};

/// A zip archive of stored members, deterministic: every member dated 1980-01-01 00:00 with
/// permissions `rw-r--r--`. A member over 4 GiB is refused ([`NpzError::Zip`]); more than
/// 65535 members get zip64 end records.
pub(super) fn zip_stored(members: &[(String, Vec<u8>)]) -> Result<Vec<u8>, NpzError> {
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .last_modified_time(DateTime::DEFAULT)
        .unix_permissions(0o644)
        .large_file(false);
    let mut w = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in members {
        w.start_file(name.as_str(), options)?;
        w.write_all(data).map_err(::zip::result::ZipError::Io)?;
    }
    Ok(w.finish()?.into_inner())
}

/// The members of a zip archive (name, data), in central-directory order. Only stored,
/// unencrypted members are read; each one's CRC-32 is checked.
pub(super) fn unzip_stored(b: &[u8]) -> Result<Vec<(String, Vec<u8>)>, NpzError> {
    let mut archive = ZipArchive::new(Cursor::new(b))?;
    let mut out = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let raw = archive.by_index_raw(i)?;
        let name = raw.name().to_string();
        if raw.encrypted() {
            return Err(NpzError::Encrypted(name));
        }
        let method = raw.compression();
        if method != CompressionMethod::Stored {
            return Err(NpzError::Compressed {
                name,
                method: method.to_string(),
            });
        }
        drop(raw);
        let mut data = Vec::new();
        archive
            .by_index(i)?
            .read_to_end(&mut data)
            .map_err(|e| match e.kind() {
                // What the crate's CRC-32 check says at the end of a member.
                std::io::ErrorKind::InvalidData => NpzError::CrcMismatch(name.clone()),
                _ => NpzError::Zip(e.into()),
            })?;
        out.push((name, data));
    }
    Ok(out)
}
