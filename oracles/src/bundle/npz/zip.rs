//! Zip archives of stored members: writing one deterministically (fixed timestamp, no
//! zip64) and reading stored members, zip64 records included.
use super::NpzError;

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zip uses.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    let mut c = 0xFFFF_FFFFu32;
    for &b in bytes {
        c = TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
    }
    c ^ 0xFFFF_FFFF
}

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const END_SIG: u32 = 0x0605_4b50;
const ZIP64_END_SIG: u32 = 0x0606_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// MS-DOS date of 1980-01-01 (day 1, month 1, year 0 since 1980).
const DOS_DATE: u16 = (1 << 5) | 1;

/// A zip archive of stored members, deterministic.
pub(super) fn zip_stored(members: &[(String, Vec<u8>)]) -> Result<Vec<u8>, NpzError> {
    fn u16le(out: &mut Vec<u8>, v: u16) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    fn u32le(out: &mut Vec<u8>, v: u32) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let too_big = || NpzError::NeedsZip64;
    let count = u16::try_from(members.len()).map_err(|_| too_big())?;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let offset = u32::try_from(out.len()).map_err(|_| too_big())?;
        let size = u32::try_from(data.len()).map_err(|_| too_big())?;
        let name_len =
            u16::try_from(name.len()).map_err(|_| NpzError::NameTooLong(name.clone()))?;
        let crc = crc32(data);
        // Local file header.
        u32le(&mut out, LOCAL_SIG);
        u16le(&mut out, 20); // version needed: 2.0
        u16le(&mut out, 0); // flags
        u16le(&mut out, 0); // method: stored
        u16le(&mut out, 0); // time
        u16le(&mut out, DOS_DATE);
        u32le(&mut out, crc);
        u32le(&mut out, size); // compressed
        u32le(&mut out, size); // uncompressed
        u16le(&mut out, name_len);
        u16le(&mut out, 0); // extra length
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        // Central directory entry.
        u32le(&mut central, CENTRAL_SIG);
        u16le(&mut central, 20); // made by: MS-DOS, 2.0
        u16le(&mut central, 20);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, DOS_DATE);
        u32le(&mut central, crc);
        u32le(&mut central, size);
        u32le(&mut central, size);
        u16le(&mut central, name_len);
        u16le(&mut central, 0); // extra
        u16le(&mut central, 0); // comment
        u16le(&mut central, 0); // disk
        u16le(&mut central, 0); // internal attributes
        u32le(&mut central, 0); // external attributes
        u32le(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let central_offset = u32::try_from(out.len()).map_err(|_| too_big())?;
    let central_size = u32::try_from(central.len()).map_err(|_| too_big())?;
    out.extend_from_slice(&central);
    u32le(&mut out, END_SIG);
    u16le(&mut out, 0); // this disk
    u16le(&mut out, 0); // disk of the central directory
    u16le(&mut out, count);
    u16le(&mut out, count);
    u32le(&mut out, central_size);
    u32le(&mut out, central_offset);
    u16le(&mut out, 0); // comment length
    u32::try_from(out.len()).map_err(|_| too_big())?;
    Ok(out)
}

fn rd16(b: &[u8], at: usize) -> Result<u16, NpzError> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or(NpzError::TruncatedZip)
}

fn rd32(b: &[u8], at: usize) -> Result<u32, NpzError> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or(NpzError::TruncatedZip)
}

fn rd64(b: &[u8], at: usize) -> Result<u64, NpzError> {
    b.get(at..at + 8)
        .map(|s| {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_le_bytes(a)
        })
        .ok_or(NpzError::TruncatedZip)
}

fn to_usize(v: u64) -> Result<usize, NpzError> {
    usize::try_from(v).map_err(|_| NpzError::ZipOffset)
}

/// The members of a zip archive (name, data), in central-directory order. Only stored members
/// are readable; zip64 records are understood.
pub(super) fn unzip_stored(b: &[u8]) -> Result<Vec<(String, &[u8])>, NpzError> {
    // End of central directory: 22 bytes plus a comment of up to 65535 bytes, at the end.
    let lowest = b.len().saturating_sub(22 + 0xFFFF);
    let end = (lowest..=b.len().saturating_sub(22))
        .rev()
        .find(|&i| b.len() >= 22 && rd32(b, i).ok() == Some(END_SIG))
        .ok_or(NpzError::NotZip)?;
    let mut entries = rd16(b, end + 10)? as u64;
    let mut central_size = rd32(b, end + 12)? as u64;
    let mut central_offset = rd32(b, end + 16)? as u64;
    if (entries == 0xFFFF || central_size == 0xFFFF_FFFF || central_offset == 0xFFFF_FFFF)
        && end >= 20
        && rd32(b, end - 20)? == ZIP64_LOCATOR_SIG
    {
        let z = to_usize(rd64(b, end - 20 + 8)?)?;
        if rd32(b, z)? != ZIP64_END_SIG {
            return Err(NpzError::BadZip64End);
        }
        entries = rd64(b, z + 32)?;
        central_size = rd64(b, z + 40)?;
        central_offset = rd64(b, z + 48)?;
    }
    let mut at = to_usize(central_offset)?;
    let central_end = at
        .checked_add(to_usize(central_size)?)
        .filter(|&e| e <= b.len())
        .ok_or(NpzError::CentralOutOfBounds)?;
    let mut out = Vec::new();
    for _ in 0..entries {
        if at + 46 > central_end || rd32(b, at)? != CENTRAL_SIG {
            return Err(NpzError::BadCentralEntry);
        }
        let flags = rd16(b, at + 8)?;
        let method = rd16(b, at + 10)?;
        let crc = rd32(b, at + 16)?;
        let mut compressed = rd32(b, at + 20)? as u64;
        let mut size = rd32(b, at + 24)? as u64;
        let name_len = rd16(b, at + 28)? as usize;
        let extra_len = rd16(b, at + 30)? as usize;
        let comment_len = rd16(b, at + 32)? as usize;
        let mut local = rd32(b, at + 42)? as u64;
        let name_bytes = b
            .get(at + 46..at + 46 + name_len)
            .ok_or(NpzError::TruncatedCentral)?;
        let name = String::from_utf8_lossy(name_bytes).into_owned();
        let extra = b
            .get(at + 46 + name_len..at + 46 + name_len + extra_len)
            .ok_or(NpzError::TruncatedCentral)?;
        // zip64 extended information: the fields that are 0xFFFFFFFF above, in this order.
        let mut e = 0;
        while e + 4 <= extra.len() {
            let id = rd16(extra, e)?;
            let len = rd16(extra, e + 2)? as usize;
            if id == 0x0001 {
                let mut f = e + 4;
                for field in [&mut size, &mut compressed, &mut local] {
                    if *field == 0xFFFF_FFFF {
                        *field = rd64(extra, f)?;
                        f += 8;
                    }
                }
            }
            e += 4 + len;
        }
        at += 46 + name_len + extra_len + comment_len;
        if flags & 1 != 0 {
            return Err(NpzError::Encrypted(name));
        }
        if method != 0 {
            return Err(NpzError::Compressed { name, method });
        }
        if compressed != size {
            return Err(NpzError::SizesDisagree(name));
        }
        let local = to_usize(local)?;
        if rd32(b, local)? != LOCAL_SIG {
            return Err(NpzError::BadLocalHeader(name));
        }
        let start = local + 30 + rd16(b, local + 26)? as usize + rd16(b, local + 28)? as usize;
        let data = start
            .checked_add(to_usize(size)?)
            .and_then(|stop| b.get(start..stop))
            .ok_or_else(|| NpzError::DataOutOfBounds(name.clone()))?;
        if crc32(data) != crc {
            return Err(NpzError::CrcMismatch(name));
        }
        out.push((name, data));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }
}
