//! The SQLite file header (the first 100 bytes): a copy of a damaged database with every header
//! field bosun's databases always hold set back to it, so that salvage can read the pages a
//! damaged header hides. The damaged file itself is never written.

use std::path::Path;

/// A copy of `db` at `to` with a sound header, for reading only (no WAL: legacy mode); `None`
/// when the file is too short to hold one. With the page size damaged, `page_size` is tried.
pub(super) fn repaired_copy(db: &[u8], page_size: usize, to: &Path) -> Option<std::io::Result<()>> {
    if db.len() < 100 {
        return None;
    }
    let mut bytes = db.to_vec();
    let h = &mut bytes[..100];
    h[..16].copy_from_slice(b"SQLite format 3\0");
    let size = if page_size == 65536 { 1 } else { page_size as u16 };
    h[16..18].copy_from_slice(&size.to_be_bytes());
    // File format versions (legacy, so that no WAL is looked for), the payload fractions.
    h[18..20].copy_from_slice(&[1, 1]);
    h[21..24].copy_from_slice(&[64, 32, 32]);
    let pages = (db.len() / page_size) as u32;
    h[28..32].copy_from_slice(&pages.to_be_bytes());
    // The size in pages is trusted when "version-valid-for" matches the change counter.
    let counter: [u8; 4] = [h[24], h[25], h[26], h[27]];
    h[92..96].copy_from_slice(&counter);
    h[44..48].copy_from_slice(&4u32.to_be_bytes());
    h[56..60].copy_from_slice(&1u32.to_be_bytes());
    Some(std::fs::write(to, bytes))
}

/// The page sizes to read a copy with: the header's, when it is one SQLite makes, else every one.
pub(super) fn page_sizes(db: &[u8]) -> Vec<usize> {
    let said = match db.get(16..18) {
        Some([1, 0]) => 65536,
        Some(&[a, b]) => usize::from(u16::from_be_bytes([a, b])),
        _ => 0,
    };
    if (512..=65536).contains(&said) && said.is_power_of_two() {
        vec![said]
    } else {
        (9..=16).map(|p| 1 << p).collect()
    }
}
