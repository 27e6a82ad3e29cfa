//! A zip archive writer for the Gradescope upload: entries stored without compression, so it
//! needs no dependency. Gradescope unpacks the archive into `/autograder/source`; nothing in
//! the kit is large enough for compression to matter (about 1 MB).
//!
//! The archive is a pure function of its entries: every entry carries the same timestamp
//! (1980-01-01 00:00, the earliest a zip can say), so the same files give the same bytes and
//! a regenerated bundle leaves an unchanged archive alone. Names are UTF-8 (flag bit 11)
//! with `/` separators; each entry's Unix mode (0644 or 0755) is in its external attributes,
//! so `run_autograder` stays executable when unpacked. Archives over 4 GiB or 65,535 entries
//! would need ZIP64, which this writer does not do: they are refused.

use thiserror::Error;

/// One file of an archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its path inside the archive, with `/` separators.
    pub(crate) name: String,
    /// Its content.
    pub(crate) content: Vec<u8>,
    /// Whether it is unpacked executable (mode 0755; 0644 otherwise).
    pub(crate) executable: bool,
}

/// Why an archive could not be written.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum ZipError {
    /// Something is too large for a zip without ZIP64.
    #[error("{what} is too large for a zip archive without ZIP64")]
    TooLarge {
        /// What: an entry, the entry count or the whole archive.
        what: String,
    },
}

const LOCAL_HEADER: u32 = 0x0403_4b50;
const CENTRAL_HEADER: u32 = 0x0201_4b50;
const END_OF_CENTRAL: u32 = 0x0605_4b50;
/// Version needed to extract a stored entry: 1.0.
const VERSION_NEEDED: u16 = 10;
/// Made by Unix (3, high byte), spec version 2.0: readers then take the mode from the
/// external attributes.
const VERSION_MADE_BY: u16 = (3 << 8) | 20;
/// General purpose flag bit 11: names are UTF-8.
const UTF8_NAMES: u16 = 1 << 11;
/// 1980-01-01 in MS-DOS date format (day 1, month 1, year 0); the time is 00:00:00.
const DOS_DATE: u16 = (1 << 5) | 1;

/// The archive holding `entries`, in the order given.
pub(crate) fn archive(entries: &[Entry]) -> Result<Vec<u8>, ZipError> {
    let too_large = |what: String| ZipError::TooLarge { what };
    let count = u16::try_from(entries.len())
        .map_err(|_| too_large(format!("{} entries", entries.len())))?;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for entry in entries {
        let name = entry.name.as_bytes();
        let name_len =
            u16::try_from(name.len()).map_err(|_| too_large(format!("the name {}", entry.name)))?;
        let size = u32::try_from(entry.content.len())
            .map_err(|_| too_large(format!("{} ({} bytes)", entry.name, entry.content.len())))?;
        let offset = u32::try_from(out.len()).map_err(|_| too_large("the archive".into()))?;
        let crc = crc32(&entry.content);
        let mode: u32 = if entry.executable {
            0o100_755
        } else {
            0o100_644
        };

        put32(&mut out, LOCAL_HEADER);
        put16(&mut out, VERSION_NEEDED);
        put16(&mut out, UTF8_NAMES);
        put16(&mut out, 0); // stored
        put16(&mut out, 0); // time
        put16(&mut out, DOS_DATE);
        put32(&mut out, crc);
        put32(&mut out, size); // compressed
        put32(&mut out, size); // uncompressed
        put16(&mut out, name_len);
        put16(&mut out, 0); // extra field length
        out.extend_from_slice(name);
        out.extend_from_slice(&entry.content);

        put32(&mut central, CENTRAL_HEADER);
        put16(&mut central, VERSION_MADE_BY);
        put16(&mut central, VERSION_NEEDED);
        put16(&mut central, UTF8_NAMES);
        put16(&mut central, 0); // stored
        put16(&mut central, 0); // time
        put16(&mut central, DOS_DATE);
        put32(&mut central, crc);
        put32(&mut central, size);
        put32(&mut central, size);
        put16(&mut central, name_len);
        put16(&mut central, 0); // extra field length
        put16(&mut central, 0); // comment length
        put16(&mut central, 0); // disk number
        put16(&mut central, 0); // internal attributes
        put32(&mut central, mode << 16);
        put32(&mut central, offset);
        central.extend_from_slice(name);
    }
    let central_offset = u32::try_from(out.len()).map_err(|_| too_large("the archive".into()))?;
    let central_size =
        u32::try_from(central.len()).map_err(|_| too_large("the archive's directory".into()))?;
    out.extend_from_slice(&central);
    u32::try_from(out.len() + 22).map_err(|_| too_large("the archive".into()))?;
    put32(&mut out, END_OF_CENTRAL);
    put16(&mut out, 0); // this disk
    put16(&mut out, 0); // the disk where the directory starts
    put16(&mut out, count); // entries on this disk
    put16(&mut out, count); // entries in all
    put32(&mut out, central_size);
    put32(&mut out, central_offset);
    put16(&mut out, 0); // comment length
    Ok(out)
}

fn put16(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as zip uses it.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
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
            table[i] = c;
            i += 1;
        }
        table
    };
    let mut crc = !0u32;
    for &b in bytes {
        crc = TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn an_archive_lays_out_headers_names_and_content() {
        let entries = vec![
            Entry {
                name: "setup.sh".into(),
                content: b"echo hi\n".to_vec(),
                executable: true,
            },
            Entry {
                name: "kit/é.txt".into(),
                content: Vec::new(),
                executable: false,
            },
        ];
        let zip = archive(&entries).unwrap();
        assert_eq!(&zip[..4], &LOCAL_HEADER.to_le_bytes());
        let end = zip.len() - 22;
        assert_eq!(&zip[end..end + 4], &END_OF_CENTRAL.to_le_bytes());
        assert_eq!(u16::from_le_bytes([zip[end + 10], zip[end + 11]]), 2);
        assert_eq!(
            archive(&entries).unwrap(),
            zip,
            "the same entries, the same bytes"
        );
    }

    #[test]
    fn too_many_entries_are_refused() {
        let entry = Entry {
            name: "a".into(),
            content: Vec::new(),
            executable: false,
        };
        let entries = vec![entry; 70_000];
        assert!(matches!(archive(&entries), Err(ZipError::TooLarge { .. })));
    }
}
