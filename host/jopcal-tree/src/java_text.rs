//! Facts read from a Java source file's text, shared by the tree's
//! harnesses (the `tree` module) and its applications (the `apps` module).

/// The package a Java source declares, if any.
pub(crate) fn package_of(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("package "))
        .map(|p| p.trim_end_matches(';').trim().to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_declared_package() {
        assert_eq!(
            super::package_of("// x\npackage a.b;\nclass C {}").as_deref(),
            Some("a.b")
        );
        assert_eq!(super::package_of("class C {}"), None);
    }
}
