//! bosun's config file (`$BOSUN_CONFIG`, else `<state dir>/config.toml`), read as the daemon
//! starts, before it takes the state directory: a file that cannot be read or does not parse
//! stops the daemon, named with its line, and changes nothing.

use std::io::Read;
use std::path::PathBuf;

use bosun_core::config::Config;
use bosun_wire::StateDir;

/// The most a config file may hold.
const FILE_MOST: u64 = 1 << 20;

/// Where bosun's config file is.
pub fn file(dirs: &StateDir) -> PathBuf {
    std::env::var_os("BOSUN_CONFIG").map(PathBuf::from).unwrap_or_else(|| dirs.root().join("config.toml"))
}

/// The config the file says (none there: the default), or why it cannot be read.
pub fn read(dirs: &StateDir) -> Result<Config, String> {
    let path = file(dirs);
    let mut text = String::new();
    match std::fs::File::open(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
        Ok(f) => {
            f.take(FILE_MOST + 1).read_to_string(&mut text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    if text.len() as u64 > FILE_MOST {
        return Err(format!("{}: over {FILE_MOST} bytes", path.display()));
    }
    Config::parse(&text, &path.display().to_string()).map_err(|e| e.to_string())
}
