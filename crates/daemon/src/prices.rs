//! The prices the daemon costs responses at: bosun's own with the user's file over them
//! (`$BOSUN_PRICES`, else `<state dir>/prices.toml`), read as it starts. A file that does not
//! parse is named with its line in the daemon's log and changes nothing: the prices recorded
//! before stand.

use std::io::Read;
use std::path::PathBuf;

use bosun_core::price::Prices;
use bosun_wire::StateDir;

/// The most a price file may hold.
const FILE_MOST: u64 = 1 << 20;

/// Where the user's price file is.
pub fn file(dirs: &StateDir) -> PathBuf {
    std::env::var_os("BOSUN_PRICES").map(PathBuf::from).unwrap_or_else(|| dirs.root().join("prices.toml"))
}

/// bosun's prices with the user's file over them; none when the file is there and cannot be
/// read or does not parse (why, in the error).
pub fn read(dirs: &StateDir) -> Result<Prices, String> {
    let path = file(dirs);
    let shipped = Prices::shipped().clone();
    let mut text = String::new();
    match std::fs::File::open(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(shipped),
        Err(e) => return Err(format!("{}: {e}", path.display())),
        Ok(f) => {
            f.take(FILE_MOST + 1).read_to_string(&mut text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    if text.len() as u64 > FILE_MOST {
        return Err(format!("{}: over {FILE_MOST} bytes", path.display()));
    }
    let mine = Prices::parse(&text, &path.display().to_string()).map_err(|e| e.to_string())?;
    Ok(shipped.with(mine))
}
