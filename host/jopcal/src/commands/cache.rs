//! `jopcal cache`: where the cache is, what it holds, and `--clear` (the
//! work is `jopcal_pipeline::cache`'s).

use crate::cli::CacheArgs;
use anyhow::Result;
use jopcal_pipeline::{cache, locate, Session};

pub fn cache(s: Session, a: &CacheArgs) -> Result<()> {
    let root = locate::cache_root()?;
    if a.clear {
        return cache::clear(s, &root);
    }
    println!("{}", root.display());
    cache::describe(s, &root);
    Ok(())
}
