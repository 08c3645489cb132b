//! The version of the `kusion:runtime` WIT package (`wit/`) this host implements.

/// The version of the `kusion:runtime` WIT package this host implements;
/// components built against a semver-compatible version (any `0.1.x`, so
/// also `0.1.0`, from before middleware existed) load.
pub const WIT_VERSION: &str = "0.1.2";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wit_version_matches_the_wit_package() {
        let world = include_str!("../wit/types.wit");
        assert!(
            world.contains(&format!("package kusion:runtime@{WIT_VERSION};")),
            "WIT_VERSION {WIT_VERSION} differs from wit/"
        );
    }
}
